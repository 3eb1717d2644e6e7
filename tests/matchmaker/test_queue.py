"""Quick-match queues on a real Redis: atomic pairing, widening windows, liveness."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import random
import re
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from matchmaker import keys
from matchmaker import queue as queue_module
from matchmaker.engine import Engine
from matchmaker.players import Players
from matchmaker.queue import Queues, QueueSpec, Ticket
from matchmaker.record import SeatKind
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.seating import Seating, TimeControl
from matchmaker.settings import Settings
from matchmaker.store import Store, millis, text
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import STORE_CONNECTIONS, store_client, until
from wargame.runtime.refusal import Refusal

pytestmark = pytest.mark.integration
SPEC = QueueSpec("war", {"compulsion": "legality"}, "", TimeControl(60_000, 1_000), True)


async def make_queues(
    redis_url: str, engine_address: str = "127.0.0.1:1", **changes: object
) -> Queues:
    """Queues; without an engine unless one is given (pairing and waiting never call it)."""
    settings = dataclasses.replace(Settings(redis_url=redis_url, rate_limit=0), **changes)  # type: ignore[arg-type]
    redis = await store_client(redis_url)
    scripts = Scripts(redis)
    engine = Engine(engine_address, settings)
    players = Players(redis, scripts, settings)
    seating = Seating(Store(redis, scripts, settings), engine, players, settings)
    return Queues(
        redis=redis,
        scripts=scripts,
        engine=engine,
        players=players,
        seating=seating,
        settings=settings,
    )


async def close(queues: Queues) -> None:
    await queues.redis.aclose()
    await queues.engine.close()


async def set_rating(redis: Client, player_id: str, rating: float) -> None:
    await redis.hset(
        keys.player(player_id), mapping={"name": player_id, "rating:war": f"{rating},80.0,0.06,5"}
    )


def test_the_spec_decides_the_queue() -> None:
    same = QueueSpec("war", {"compulsion": "legality"}, "", TimeControl(60_000, 1_000), True)
    assert same.queue_id == SPEC.queue_id
    assert dataclasses.replace(SPEC, rated=False).queue_id != SPEC.queue_id
    assert dataclasses.replace(SPEC, time_control=TimeControl()).queue_id != SPEC.queue_id
    assert QueueSpec.from_config(SPEC.config()) == SPEC
    # Canonical JSON: every replica, of any version, derives the same queue id from it.
    assert SPEC.config() == (
        '{"game":"war","options":{"compulsion":"legality"},"preset":"","rated":true,'
        '"tc":[60000,1000]}'
    )


@both_stores
def test_many_concurrent_joins_and_pairers_never_pair_a_ticket_twice(redis_url: str) -> None:
    async def scenario() -> None:
        # Tickets live past the whole run: on a busy machine 300 joins can outlast the
        # default liveness, and a lapsed ticket is rightly dropped (neither seated nor left).
        pairers = [await make_queues(redis_url, ticket_liveness=3600.0) for _ in range(4)]
        first = pairers[0]
        rng = random.Random(7)
        players = [f"p{i}" for i in range(300)]
        for player_id in players:
            await set_rating(first.redis, player_id, rng.gauss(1500, 150))

        # As many at once on each pairer as it has connections: all of them at Redis at
        # once, none left waiting for a connection (past `POOL_WAIT` that is an error,
        # which a loaded machine reached with 75 joins and 25 pairings on one pairer).
        at_once = [asyncio.Semaphore(STORE_CONNECTIONS) for _ in pairers]

        async def join_and_pair(index: int, player_id: str) -> list[dict[str, Any]]:
            queues = pairers[index % len(pairers)]
            async with at_once[index % len(pairers)]:
                await queues.join(player_id, player_id, SPEC)
                return await queues.pair(SPEC.queue_id) if index % 3 == 0 else []

        made = await asyncio.gather(*(join_and_pair(i, p) for i, p in enumerate(players)))
        rounds = await asyncio.gather(*(q.pair(SPEC.queue_id) for q in pairers))
        matches = [m for batch in [*made, *rounds] for m in batch]
        seated = [seat["p"] for match in matches for seat in match["seats"]]
        assert len(seated) == len(set(seated)), "a player was paired twice"
        assert {m["g"] for m in matches}.__len__() == len(matches)
        rows: list[Any] = await first.redis.zrange(
            keys.queue_ratings(SPEC.queue_id), 0, -1, withscores=True
        )
        left = [float(score) for _, score in rows]
        assert len(seated) + len(left) == len(players)
        assert len(left) < 10
        # Nobody left could be paired: neighbours in rating are beyond every window.
        assert all(b - a > first.settings.window_base for a, b in itertools.pairwise(left))
        stored = await first.redis.hgetall(keys.queue_matches(SPEC.queue_id))
        assert len(stored) == len(seated)
        for q in pairers:
            await close(q)

    run(scenario())


def test_the_rating_window_widens_with_waiting_time(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(
            redis_url, window_base=100.0, window_growth=25.0, window_max=1000.0
        )
        await set_rating(queues.redis, "low", 1200)
        await set_rating(queues.redis, "high", 1800)
        await queues.join("low", "low", SPEC)
        await queues.join("high", "high", SPEC)
        assert await queues.pair(SPEC.queue_id) == []
        assert (
            queues.window(0) == 100
            and queues.window(10_000) == 350
            and queues.window(10**9) == 1000
        )
        # As if "low" had waited 10 s: its window (350) does not reach "high", 600 away;
        # 21 s: it does (625).
        oldest: list[Any] = await queues.redis.zrange(keys.queue_arrivals(SPEC.queue_id), 0, 0)
        await queues.redis.zincrby(keys.queue_joined(SPEC.queue_id), -10_000, oldest[0])
        assert await queues.pair(SPEC.queue_id) == []
        await queues.redis.zincrby(keys.queue_joined(SPEC.queue_id), -11_000, oldest[0])
        matches = await queues.pair(SPEC.queue_id)
        assert len(matches) == 1
        assert sorted(seat["p"] for seat in matches[0]["seats"]) == ["high", "low"]
        await close(queues)

    run(scenario())


def test_the_rating_window_stops_at_its_maximum(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(
            redis_url, window_base=100.0, window_growth=25.0, window_max=1000.0
        )
        await set_rating(queues.redis, "low", 1200)
        await set_rating(queues.redis, "far", 2300)  # 1100 away: beyond the widest window
        await queues.join("low", "low", SPEC)
        await queues.join("far", "far", SPEC)
        # As if both had waited for days: their windows are the maximum, 1000, no more.
        tickets: list[Any] = await queues.redis.zrange(keys.queue_joined(SPEC.queue_id), 0, -1)
        for ticket in tickets:
            await queues.redis.zincrby(keys.queue_joined(SPEC.queue_id), -(10**9), ticket)
        assert await queues.pair(SPEC.queue_id) == []
        await close(queues)

    run(scenario())


@pytest.mark.parametrize(
    ("far", "near"), [(1900, 1520), (1530, 1490), (1470, 1510)], ids=["above", "below", "either"]
)
def test_nearest_rating_is_preferred(redis_url: str, far: int, near: int) -> None:
    """The oldest ticket takes the nearest rating, whether above or below its own."""

    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=500.0)
        for player_id, rating in (("a", 1500), ("far", far), ("near", near)):
            await set_rating(queues.redis, player_id, rating)
            await queues.join(player_id, player_id, SPEC)
        matches = await queues.pair(SPEC.queue_id)
        assert sorted(seat["p"] for seat in matches[0]["seats"]) == ["a", "near"]
        await close(queues)

    run(scenario())


@both_stores
def test_equally_near_above_and_below_the_one_below_is_taken(redis_url: str) -> None:
    """A tie in rating distance is broken one way, the same on every replica and in every
    round whatever the (random) ticket ids: the oldest ticket takes the one below."""

    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=500.0, window_growth=0.0)
        for round_ in range(3):
            players = [(f"a{round_}", 1500), (f"below{round_}", 1480), (f"above{round_}", 1520)]
            for player_id, rating in players:
                await set_rating(queues.redis, player_id, rating)
                await queues.join(player_id, player_id, SPEC)
            [match] = await queues.pair(SPEC.queue_id)
            assert sorted(seat["p"] for seat in match["seats"]) == [f"a{round_}", f"below{round_}"]
            assert (await queues.leave(f"above{round_}", None)).kind == "left"
        await close(queues)

    run(scenario())


def test_an_unclaimed_match_is_dropped_once_older_than_the_match_ttl(redis_url: str) -> None:
    """A match nobody claimed is dropped by the first pairing after its match TTL, and
    kept before (the queue's key TTL, in seconds, is no match TTL)."""

    async def scenario() -> None:
        queues = await make_queues(redis_url, match_ttl=60.0, queue_ttl=3600.0)
        tickets = [await queues.join(p, p, SPEC) for p in ("x", "y")]
        [match] = await queues.pair(SPEC.queue_id)
        matched = keys.queue_matched(SPEC.queue_id)

        async def age(ms: int) -> None:  # as if the match had been made `ms` earlier
            for ticket in tickets:
                await queues.redis.zincrby(matched, -ms, ticket.ticket)

        await age(30_000)
        assert await queues.pair(SPEC.queue_id) == []
        assert (await queues.status("x", tickets[0])).match == match
        await age(40_000)
        assert await queues.pair(SPEC.queue_id) == []
        for player_id, ticket in zip("xy", tickets, strict=True):
            assert (await queues.status(player_id, ticket)).kind == "gone"
        assert await queues.redis.exists(matched, keys.queue_matches(SPEC.queue_id)) == 0
        await close(queues)

    run(scenario())


@both_stores
def test_a_pairing_leaves_every_key_of_the_queue_with_its_ttl(redis_url: str) -> None:
    # The matches a pairing makes are the first entries of their keys: they expire with
    # the queue like the keys joining made.
    async def scenario() -> None:
        queues = await make_queues(redis_url, queue_ttl=600.0)
        for player_id in ("x", "y", "z"):
            await queues.join(player_id, player_id, SPEC)
        [_match] = await queues.pair(SPEC.queue_id)
        ttls = {name: await queues.redis.ttl(name) for name in keys.queue_keys(SPEC.queue_id)}
        assert all(0 < ttl <= 600 for ttl in ttls.values()), ttls
        await close(queues)

    run(scenario())


async def same_millisecond(queues: Queues) -> None:
    """Give every waiting ticket one join time, as if all had joined in one millisecond."""
    joined = keys.queue_joined(SPEC.queue_id)
    tickets: list[Any] = await queues.redis.zrange(joined, 0, -1)
    await queues.redis.zadd(joined, dict.fromkeys(tickets, await queues._now()))


@both_stores
def test_arrival_not_the_ticket_id_orders_joins_in_one_millisecond(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        players = [f"p{i:02}" for i in range(40)]
        for index, player_id in enumerate(players):
            await set_rating(queues.redis, player_id, 1000 + 100 * index)  # nobody pairs
        tickets = [await queues.join(p, p, SPEC) for p in players]
        await same_millisecond(queues)
        statuses = [await queues.status(p, t) for p, t in zip(players, tickets, strict=True)]
        positions = [status.position for status in statuses]
        assert positions == list(range(1, len(players) + 1))
        await close(queues)

    run(scenario())


@both_stores
def test_pairing_serves_arrivals_in_order_within_one_millisecond(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=500.0, window_growth=0.0)
        # Served first, "a" takes "near"; served first, "far" would take "near" from it.
        # Ticket ids are random, so ten rounds leave a ticket-id order no place to hide.
        for round_ in range(10):
            players = [(f"a{round_}", 1500), (f"far{round_}", 1900), (f"near{round_}", 1520)]
            for player_id, rating in players:
                await set_rating(queues.redis, player_id, rating)
                await queues.join(player_id, player_id, SPEC)
            await same_millisecond(queues)
            [match] = await queues.pair(SPEC.queue_id)
            assert sorted(seat["p"] for seat in match["seats"]) == [f"a{round_}", f"near{round_}"]
            assert (await queues.leave(f"far{round_}", None)).kind == "left"
        await close(queues)

    run(scenario())


@both_stores
def test_a_ticket_without_an_arrival_number_queues_from_its_first_status(redis_url: str) -> None:
    # A ticket that joined through a replica older than arrival numbers has none: its
    # first status gives it the next one, behind every ticket that has one.
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        for player_id, rating in (("old", 1000), ("new", 2000)):
            await set_rating(queues.redis, player_id, rating)
        old = await queues.join("old", "old", SPEC)
        new = await queues.join("new", "new", SPEC)
        arrivals = keys.queue_arrivals(SPEC.queue_id)
        await queues.redis.zrem(arrivals, old.ticket)
        status = await queues.status("old", old)
        assert (status.kind, status.position, status.waiting) == ("waiting", 2, 2)
        assert (await queues.status("new", new)).position == 1
        assert await queues.redis.zscore(arrivals, old.ticket) == 3
        await close(queues)

    run(scenario())


@both_stores
def test_leaving_takes_the_ticket_out_of_every_key_of_the_queue(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        for player_id, rating in (("stays", 1000), ("goes", 2000)):
            await set_rating(queues.redis, player_id, rating)
        await queues.join("stays", "stays", SPEC)
        ticket = await queues.join("goes", "goes", SPEC)
        assert (await queues.leave("goes", ticket)).kind == "left"
        ratings, joined, alive, tickets, _, _, _, arrivals, _ = keys.queue_keys(SPEC.queue_id)
        for name in (ratings, joined, alive, arrivals):
            assert await queues.redis.zcard(name) == 1, name
        assert await queues.redis.hlen(tickets) == 1
        await close(queues)

    run(scenario())


@both_stores
def test_status_position_leave_and_already_queued(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        await set_rating(queues.redis, "a", 1000)
        await set_rating(queues.redis, "b", 2000)
        first = await queues.join("a", "a", SPEC)
        second = await queues.join("b", "b", SPEC)
        with pytest.raises(Refusal) as caught:
            await queues.join("a", "a", SPEC)
        assert caught.value.reason == "ALREADY_QUEUED"
        assert caught.value.code == grpc.StatusCode.FAILED_PRECONDITION
        status = await queues.status("b", second)
        assert (status.kind, status.position, status.waiting) == ("waiting", 2, 2)
        assert (await queues.leave("b", first)).kind == "gone"  # not b's ticket
        assert (await queues.status("a", first)).kind == "waiting"
        assert (await queues.leave("a", first)).kind == "left"
        assert (await queues.status("a", first)).kind == "gone"
        assert (await queues.status("b", second)).position == 1
        assert (await queues.leave("b", None)).kind == "left"  # the player's current ticket
        await queues.join("a", "a", SPEC)  # may queue again after leaving
        await close(queues)

    run(scenario())


def test_a_matched_ticket_stays_matched_when_leaving(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url)
        tickets = [await queues.join(p, p, SPEC) for p in ("x", "y")]
        [match] = await queues.pair(SPEC.queue_id)
        status = await queues.status("x", tickets[0])
        assert status.kind == "matched" and status.match["g"] == match["g"]
        left = await queues.leave("y", tickets[1])
        assert left.kind == "matched" and left.match == match
        await queues.claim("x", tickets[0])
        assert (await queues.status("x", tickets[0])).kind == "gone"
        await close(queues)

    run(scenario())


def test_tickets_whose_stream_stopped_are_dropped(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url)
        await queues.join("ghost", "ghost", SPEC, liveness=0.05)
        await asyncio.sleep(0.1)
        await queues.join("live", "live", SPEC)
        assert await queues.pair(SPEC.queue_id) == []
        assert await queues.redis.zcard(keys.queue_joined(SPEC.queue_id)) == 1
        assert await queues.redis.zcard(keys.queue_arrivals(SPEC.queue_id)) == 1
        assert await queues.redis.hkeys(keys.queue_tickets(SPEC.queue_id)) != []
        raw = await queues.redis.hvals(keys.queue_tickets(SPEC.queue_id))
        assert [json.loads(value)["p"] for value in raw] == ["live"]
        await close(queues)

    run(scenario())


def test_a_match_makes_its_game_once_with_the_players_seated(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, engine_address)
        huff = dataclasses.replace(SPEC, options={"compulsion": "huff"})
        await set_rating(queues.redis, "x", 1500)
        await set_rating(queues.redis, "y", 1510)
        for player_id in ("x", "y"):
            await queues.join(player_id, f"name of {player_id}", huff)
        [match] = await queues.pair(huff.queue_id)
        assert await queues.game_for(huff.queue_id, match, create=False) is None
        game = await queues.game_for(huff.queue_id, match, create=True)
        assert game is not None and game.id == match["g"]
        assert (game.ruleset, game.rated, game.visibility) == ("war", True, "public")
        assert game.clock is not None
        assert [(s.side, s.player, s.name, s.kind, s.rating) for s in game.seats] == [
            (side, seat["p"], f"name of {seat['p']}", SeatKind.HUMAN, seat["rt"])
            for side, seat in zip(("south", "north"), match["seats"], strict=True)
        ]
        assert dict(game.state.options)["compulsion"] == "huff"  # the queue's options
        again = await queues.game_for(huff.queue_id, match, create=True)
        assert again is not None and (again.id, again.version) == (game.id, game.version)
        known = await queues.game_for(huff.queue_id, match, create=False)
        assert known is not None and known.id == game.id
        # Tickets from before ratings were carried seat their players as unrated.
        unrated = {"g": "gunrated", "seats": [{"p": "x", "n": "x"}, {"p": "y", "n": "y"}]}
        made = await queues.game_for(huff.queue_id, unrated, create=True)
        assert made is not None and [s.rating for s in made.seats] == ["", ""]
        # A match whose queue expired before its game was made cannot make it any more.
        await queues.redis.delete(keys.queue_config(huff.queue_id))
        with pytest.raises(Refusal) as caught:
            await queues.game_for(huff.queue_id, {**match, "g": "g-later"}, create=True)
        assert (caught.value.code, caught.value.reason, caught.value.message) == (
            grpc.StatusCode.NOT_FOUND,
            "SESSION_NOT_FOUND",
            "the queue has expired",
        )
        await close(queues)

    run(scenario())


@pytest.mark.parametrize("text", ["", "q1", "x1.t1", "q1.", ".t1", "t1"])
def test_a_malformed_ticket_is_refused(text: str) -> None:
    with pytest.raises(Refusal) as caught:
        Ticket.parse(text)
    assert (caught.value.code, caught.value.reason, caught.value.fields) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
        (("ticket", "the ticket is malformed"),),
    )


def test_a_ticket_reads_back_from_its_text() -> None:
    ticket = Ticket("qabc", "t123")
    assert ticket.text == "qabc.t123" and Ticket.parse(ticket.text) == ticket


def test_the_spec_asks_the_engine_for_the_options_of_the_preset(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, engine_address)
        tc = TimeControl(60_000, 0)
        spec = await queues.spec("war", {}, "checkers_huff", tc, False)
        assert spec.options["compulsion"] == "huff" and spec.preset == "checkers_huff"
        plain = await queues.spec("war", {}, "", tc, False)
        assert plain.options["compulsion"] == "legality"
        with pytest.raises(Refusal) as caught:
            await queues.spec("", {}, "", tc, False)
        assert (caught.value.code, caught.value.reason, caught.value.fields) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "MISSING_FIELD",
            (("game", "game is required"),),
        )
        await close(queues)

    run(scenario())


def test_status_renews_the_ticket_and_reports_join_time_and_now(redis_url: str) -> None:
    # Lifetimes long enough that nothing expires between two steps on a busy machine: the
    # renewal is told by the values it sets, not by a race with an expiry.
    async def scenario() -> None:
        queues = await make_queues(redis_url, ticket_liveness=30.0, window_growth=0.0)
        await set_rating(queues.redis, "a", 1000)
        before = millis(await queues.redis.time())
        ticket = await queues.join("a", "a", SPEC)
        after = millis(await queues.redis.time())
        joined, alive = keys.queue_joined(SPEC.queue_id), keys.queue_alive(SPEC.queue_id)
        # joining: at the server's time of the join, to the millisecond; alive for the
        # liveness (30 s), the player's ticket key as long
        join_ms = await queues.redis.zscore(joined, ticket.ticket)
        assert before <= (join_ms or 0) <= after
        assert await queues.redis.zscore(alive, ticket.ticket) == (join_ms or 0) + 30_000
        assert 0 < await queues.redis.pttl(keys.player_queue("a")) <= 30_000
        await queues.redis.zincrby(joined, -5_000, ticket.ticket)  # as if it joined 5 s ago
        await queues.redis.pexpire(keys.player_queue("a"), 100_000)  # longer than a renewal
        status = await queues.status("a", ticket)
        assert status.kind == "waiting"
        assert status.joined_ms == int(await queues.redis.zscore(joined, ticket.ticket) or 0)
        assert status.now_ms - status.joined_ms >= 5_000
        # renewed: the ticket lives until now + liveness, the player's ticket key as long
        assert await queues.redis.zscore(alive, ticket.ticket) == status.now_ms + 30_000
        assert 0 < await queues.redis.pttl(keys.player_queue("a")) <= 30_000
        # and the queue is marked active as of the status, for the pairing workers
        shard = keys.shard(SPEC.queue_id, queues.seating.store.shards)
        active = await queues.redis.zscore(keys.queues(shard), SPEC.queue_id)
        assert active == status.now_ms
        await close(queues)

    run(scenario())


def test_leaving_when_not_queued_and_claiming_a_match(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url)
        assert (await queues.leave("nobody", None)).kind == "gone"
        tickets = [await queues.join(p, p, SPEC) for p in ("x", "y")]
        [match] = await queues.pair(SPEC.queue_id)
        await queues.claim("x", tickets[0])
        matched = keys.queue_matched(SPEC.queue_id)
        assert await queues.redis.zscore(matched, tickets[0].ticket) is None
        assert await queues.redis.hget(keys.queue_matches(SPEC.queue_id), tickets[0].ticket) is None
        assert await queues.redis.get(keys.player_queue("x")) is None
        # the other player's match is untouched until claimed
        assert await queues.redis.zscore(matched, tickets[1].ticket) is not None
        assert (await queues.status("y", tickets[1])).match == match
        await close(queues)

    run(scenario())


def test_pairing_runs_batch_after_batch_until_nobody_is_left(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue_module, "PAIR_BATCH", 2)  # three pairs need two full batches

    async def scenario() -> None:
        queues = await make_queues(redis_url)
        for index in range(7):
            await queues.join(f"p{index}", f"p{index}", SPEC)
        matches = await queues.pair(SPEC.queue_id)
        assert len(matches) == 3
        assert len({seat["p"] for m in matches for seat in m["seats"]}) == 6
        # At most a batch's pairs a call: each match has a fresh game id of its call's.
        assert len({m["g"] for m in matches}) == 3
        assert all(re.fullmatch(r"g[a-z2-7]{14}", m["g"]) for m in matches)
        assert await queues.redis.zcard(keys.queue_arrivals(SPEC.queue_id)) == 1
        await close(queues)

    run(scenario())


def test_a_round_makes_game_ids_for_the_pairs_it_can_make_not_for_a_whole_batch(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pairing round runs every pair interval for every queue in use: it sends a few game
    ids first, and twice as many again only while a call uses them all (making 500 ids a
    round, at 30 us each, kept a replica's core busy with a handful of queues)."""
    made: list[str] = []
    new_game_id = keys.new_game_id

    def counted() -> str:
        made.append(new_game_id())
        return made[-1]

    monkeypatch.setattr(keys, "new_game_id", counted)

    async def scenario() -> None:
        queues = await make_queues(redis_url)
        assert await queues.pair(SPEC.queue_id) == []
        assert len(made) == queue_module.PAIR_FIRST < queue_module.PAIR_BATCH
        for index in range(2 * (queue_module.PAIR_FIRST + 4)):
            await queues.join(f"p{index}", f"p{index}", SPEC)
        made.clear()
        matches = await queues.pair(SPEC.queue_id)
        assert len(matches) == queue_module.PAIR_FIRST + 4
        assert len(made) == 3 * queue_module.PAIR_FIRST  # a full call, then one twice as big
        assert [m["g"] for m in matches] == made[: len(matches)]
        await close(queues)

    run(scenario())


def test_either_ticket_may_get_the_first_side(redis_url: str) -> None:
    # The side is a coin per pair (queue_pair.lua ARGV[7+G]); seeded, the coins are known.
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        firsts = []
        random.seed(11)
        for index in range(12):
            older, newer = f"o{index}", f"n{index}"
            for player_id in (older, newer):
                await set_rating(queues.redis, player_id, 1000 + 100 * index)
                await queues.join(player_id, player_id, SPEC)
            [match] = await queues.pair(SPEC.queue_id)
            firsts.append(match["seats"][0]["p"] == older)
        assert True in firsts and False in firsts
        await close(queues)

    run(scenario())


def test_each_pair_of_one_round_gets_its_own_coin(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve pairs made in one script call: the k-th pair's first side goes to the newer
    ticket exactly when the k-th coin (seeded, so known) is 1."""
    monkeypatch.setattr(queue_module, "PAIR_BATCH", 16)

    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        for index in range(12):
            for player_id in (f"o{index}", f"n{index}"):
                await set_rating(queues.redis, player_id, 1000 + 100 * index)
                await queues.join(player_id, player_id, SPEC)
        random.seed(5)
        coins = [random.choice("01") for _ in range(16)]
        random.seed(5)
        matches = await queues.pair(SPEC.queue_id)
        assert [match["seats"][0]["p"] for match in matches] == [
            f"n{index}" if coins[index] == "1" else f"o{index}" for index in range(12)
        ]
        assert "0" in coins[1:12] and "1" in coins[1:12]  # both ways after the first pair
        await close(queues)

    run(scenario())


def test_ids_have_the_forms_of_their_kind(redis_url: str) -> None:
    # Game ids made by pairing have the form of every other game id (seating.py: g + 14).
    async def scenario() -> None:
        queues = await make_queues(redis_url, ticket_liveness=30.0)
        tickets = [await queues.join(p, p, SPEC) for p in ("x", "y")]
        assert all(re.fullmatch(r"t[a-z2-7]{12}", t.ticket) for t in tickets)
        # the player's ticket key lives as long as the ticket, not for ever
        assert 0 < await queues.redis.ttl(keys.player_queue("x")) <= 30
        [match] = await queues.pair(SPEC.queue_id)
        assert re.fullmatch(r"g[a-z2-7]{14}", match["g"])
        await close(queues)

    run(scenario())


def test_a_pairing_round_pairs_every_queue_makes_the_games_and_forgets_idle_queues(
    redis_url: str, engine_address: str
) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, engine_address)
        unrated = dataclasses.replace(SPEC, rated=False)
        tickets = {}
        for spec, players in ((SPEC, ("a", "b")), (unrated, ("c", "d"))):
            for player_id in players:
                tickets[player_id] = await queues.join(player_id, player_id, spec)
        now = await queues._now()
        shards = queues.seating.store.shards
        for queue_id, active in (("qidle", now - 120_000), ("qquiet", now - 1_000)):
            await queues.redis.zadd(keys.queues(keys.shard(queue_id, shards)), {queue_id: active})
        waits = "wargame_matchmaker_queue_wait_seconds_count"
        before = REGISTRY.get_sample_value(waits) or 0.0
        assert await queues.pair_all() == 2
        assert REGISTRY.get_sample_value(waits) == before + 2
        for player_id in ("a", "c"):
            status = await queues.status(player_id, tickets[player_id])
            game, _, _ = await queues.seating.store.load(status.match["g"])
            assert game is not None and {s.player for s in game.seats} >= {player_id}
        index = {
            text(q)
            for shard in range(shards)
            for q in await queues.redis.zrange(keys.queues(shard), 0, -1)
        }
        # a queue idle for over a minute with nobody waiting is forgotten; the others stay
        assert index == {SPEC.queue_id, unrated.queue_id, "qquiet"}
        await close(queues)

    run(scenario())


def test_a_spec_the_engine_refuses_is_refused_with_its_reason(
    redis_url: str, engine_address: str
) -> None:
    """A preset the engine does not know (asked only when the first state is made): the
    engine's reason and message reach the caller as a refusal, not an internal error."""

    async def scenario() -> Refusal:
        queues = await make_queues(redis_url, engine_address)
        try:
            with pytest.raises(Refusal) as caught:
                await queues.spec("war", {}, "no_such_preset", TimeControl(60_000, 0), False)
            return caught.value
        finally:
            await close(queues)

    refusal = run(scenario())
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_PRESET")
    assert refusal.message.startswith("unknown preset 'no_such_preset'; presets: ")
    assert [field for field, _ in refusal.fields] == ["preset"]


def test_the_pairer_pairs_every_interval_without_being_poked(redis_url: str) -> None:
    """Players who join between rounds are paired by the next round on the interval alone
    (a replica pokes its pairer when one of its players joins; a join on another replica
    does not)."""

    async def scenario() -> None:
        queues = await make_queues(redis_url)
        rounds: list[int] = []
        pair_all = queues.pair_all

        async def counted() -> int:
            paired = await pair_all()
            rounds.append(paired)
            return paired

        queues.pair_all = counted  # type: ignore[method-assign]
        pairer = queue_module.Pairer(queues, interval=0.05)
        stop = asyncio.Event()
        task = asyncio.create_task(pairer.run(stop))
        await until(lambda: len(rounds) >= 1)
        tickets = [await queues.join(p, p, SPEC) for p in ("x", "y")]
        first = len(rounds)
        await until(lambda: sum(rounds[first:]) == 1)
        assert not pairer.poke.is_set()
        assert (await queues.status("x", tickets[0])).kind == "matched"
        stop.set()
        pairer.poke.set()
        await task
        await close(queues)

    run(scenario())


async def arrive(queues: Queues, waiting: list[tuple[str, int, int]], alive_until: int) -> None:
    """Tickets (name, rating, join time in ms) in the queue in this order of arrival, as
    queue_join.lua leaves them, in one round trip."""
    ratings, joined, alive, tickets, *_, arrivals, _ = keys.queue_keys(SPEC.queue_id)
    pipe = queues.redis.pipeline(transaction=False)
    for arrival, (ticket, rating, since) in enumerate(waiting, 1):
        pipe.zadd(ratings, {ticket: rating})
        pipe.zadd(joined, {ticket: since})
        pipe.zadd(alive, {ticket: alive_until})
        pipe.zadd(arrivals, {ticket: arrival})
        pipe.hset(tickets, ticket, json.dumps({"p": ticket}))
    await pipe.execute()


def test_a_full_batch_pairs_the_oldest_pair_even_past_the_first_chunk(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pairing takes `arrivals` 256 tickets at a time, and the next chunk starts after the
    # tickets left unpaired at the front. With one pair a script call, the first call makes
    # the older pair (just past a first chunk of tickets nobody is near), not the newer one
    # far behind it; the next call makes that one.
    monkeypatch.setattr(queue_module, "PAIR_BATCH", 1)

    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=0.0)
        now = millis(await queues.redis.time())
        alone = (f"alone{n}" for n in itertools.count())
        names = [next(alone) for _ in range(256)] + ["older1", "older2"]
        names += [next(alone) for _ in range(300)] + ["newer1", "newer2"]
        near = {"older1": 1_000_000, "older2": 1_000_005, "newer1": 2_000_000, "newer2": 2_000_005}
        waiting = [(name, near.get(name, 100 * n), now) for n, name in enumerate(names)]
        await arrive(queues, waiting, alive_until=now + 600_000)
        made = await queues.pair(SPEC.queue_id)
        assert [sorted(match["tickets"]) for match in made] == [
            ["older1", "older2"],
            ["newer1", "newer2"],
        ]
        await close(queues)

    run(scenario())


def test_a_pair_with_a_ticket_left_unpaired_keeps_the_next_chunk_whole(redis_url: str) -> None:
    # A ticket that joined through a replica older than arrival numbers (its join time long
    # ago, its arrival number new) has a wide window: it pairs with a newer ticket tried
    # before it and left unpaired. Pairing takes `arrivals` 256 tickets at a time, skipping
    # those left unpaired at the front: that one no longer is, so the next chunk starts one
    # earlier, and its first ticket is tried too.
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=10.0, window_growth=1.0)
        now = millis(await queues.redis.time())
        waiting = [("new", 0, now), ("old", 500, now - 1_000_000)]  # windows 10 and 1000
        waiting += [(f"alone{n}", 10_000 + 100 * n, now) for n in range(254)]  # none near
        # In the second chunk: one whose window reaches the other (not the other way round).
        waiting += [("next1", 100_000, now - 1_000_000), ("next2", 100_500, now)]
        await arrive(queues, waiting, alive_until=now + 600_000)
        made = await queues.pair(SPEC.queue_id)
        assert sorted(sorted(match["tickets"]) for match in made) == [
            ["new", "old"],
            ["next1", "next2"],
        ]
        await close(queues)

    run(scenario())
