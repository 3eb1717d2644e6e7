"""The game store on a real Redis (and Redis Cluster): the commit compare-and-set, the
stream, the sharded due index and browse lists."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import time
from typing import Any

import pytest
import redis

from matchmaker import keys
from matchmaker.record import (
    BOT_PLAYER,
    ActionEntry,
    GameRecord,
    GameStatus,
    RatingStatus,
    Seat,
    SeatKind,
    moves_json,
    parse_moves,
)
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Commit, Store, Update, millis
from matchmaker.store import text as store_text
from tests.matchmaker.conftest import TEST_SECRET_KEY, both_stores, run
from tests.matchmaker.helpers import store_client, sync_client
from wargame.runtime.refusal import Refusal
from wargame.v1 import game_pb2, napoleonic_pb2
from wargame.v1.matchmaker_pb2 import WatchGameResponse

pytestmark = pytest.mark.integration


async def make_store(redis_url: str, **changes: object) -> Store:
    redis = await store_client(redis_url)
    settings = dataclasses.replace(Settings(redis_url=redis_url), **changes)  # type: ignore[arg-type]
    return Store(redis, Scripts(redis), settings)


def change(version: int, **fields: object) -> Commit:
    return Commit(
        game_id="g1",
        expected_version=version,
        fields=dict(fields),
        update=Update(f"update {version + 1}".encode(), side="south"),
        ttl=600,
    )


def test_redis_time_is_read_in_whole_milliseconds() -> None:
    # TIME answers seconds and microseconds (as bytes); the clocks and deadlines use ms.
    assert millis((b"1700000000", b"999999")) == 1_700_000_000_999
    assert millis((b"12", b"345678")) == 12_345
    assert millis((b"12", b"1000")) == 12_001
    assert millis((b"12", b"700999")) == 12_700


def test_a_redis_reply_is_read_as_text_bytes_or_not() -> None:
    # Replies come as bytes; a Lua number comes as an int, and a decoded reply as text.
    assert store_text(b"g\xc3\xb1") == "gñ"
    assert store_text(7) == "7"
    assert store_text("2-0") == "2-0"


@both_stores
def test_commit_is_a_compare_and_set_on_the_version(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        first = await store.commit(change(0, status="open"))
        assert (first.outcome, first.version) == ("ok", 1)
        again = await store.commit(change(0, status="open"))
        assert (again.outcome, again.version) == ("conflict", 1)
        entry = ActionEntry(
            "south",
            "e3-e5",
            "e3-e5",
            game_pb2.Action(side="south", notation="e3-e5").SerializeToString(),
        )
        moves = moves_json("[]", [entry])
        second = await store.commit(
            dataclasses.replace(change(1, status="running", moves=moves), actions=[entry])
        )
        assert (second.outcome, second.version) == ("ok", 2)
        stale = await store.commit(change(1, status="finished"))
        assert (stale.outcome, stale.version) == ("conflict", 2)
        record, _, _ = await store.load("g1")
        assert record is not None and record.version == 2 and record.status == "running"
        assert [m.row() for m in record.moves] == [entry.row()]
        assert await store.actions("g1") == [game_pb2.Action(side="south", notation="e3-e5")]
        updates = await store.updates_after("g1", 0)
        assert [u.version for u in updates] == [1, 2]
        assert updates[1].message == b"update 2" and updates[1].side == "south"
        assert [u.version for u in await store.updates_after("g1", 1)] == [2]
        assert 0 < await store.redis.ttl(keys.game("g1")) <= 600
        assert await store.redis.ttl(keys.game_stream("g1")) > 0
        await store.redis.aclose()

    run(scenario())


def test_a_commit_without_an_update_writes_the_game_and_nothing_to_its_stream(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(dataclasses.replace(change(0, status="open"), update=None))
        assert await store.redis.hmget(keys.game("g1"), ["version", "status"]) == [b"1", b"open"]
        assert await store.redis.exists(keys.game_stream("g1")) == 0
        await store.redis.aclose()

    run(scenario())


@pytest.mark.parametrize(("keep", "left"), [(2, [b"a1", b"a2"]), (1, [b"a1"]), (0, [])])
def test_a_takeback_keeps_the_first_actions_it_names(
    redis_url: str, keep: int, left: list[bytes]
) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0))
        await store.redis.rpush(keys.game_actions("g1"), b"a1", b"a2", b"a3")
        await store.commit(dataclasses.replace(change(1), keep_actions=keep))
        assert await store.redis.lrange(keys.game_actions("g1"), 0, -1) == left
        await store.redis.aclose()

    run(scenario())


def test_a_key_seen_before_returns_the_first_commit(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, idempotency_ttl=300.0)
        await store.commit(change(0))
        idem = keys.game_idempotency("g1", "p1", "key-1")
        commit = dataclasses.replace(
            change(1, status="running"), idempotency_key=idem, fingerprint="abc"
        )
        assert (await store.commit(commit)).outcome == "ok"
        # Kept for the idempotency TTL (not the stream's length, 2000) from the first commit.
        assert 0 < await store.redis.ttl(idem) <= 300
        retry = await store.commit(commit)
        assert (retry.outcome, retry.version, retry.fingerprint) == ("duplicate", 2, "abc")
        record, _, prior = await store.load("g1", idempotency_key=idem)
        assert record is not None and record.version == 2 and prior == b"abc|2"
        assert 0 < await store.redis.ttl(idem) <= store.settings.idempotency_ttl
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_scripts_come_back_after_every_primary_forgot_them(redis_url: str) -> None:
    """A restarted primary, or a replica promoted since the scripts were loaded, answers
    NOSCRIPT: the scripts are loaded again (on every primary) and the call goes through."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.scripts.load()
        await store.commit(change(0))
        checker: Any = sync_client(redis_url)
        checker.script_flush()  # on a cluster: on every primary
        assert not any(checker.script_exists(store.scripts.sha("commit")))
        assert (await store.commit(change(1))).version == 2
        record, _, _ = await store.load("g1")
        assert record is not None and record.version == 2
        checker.close()
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_exactly_one_of_many_concurrent_commits_wins(redis_url: str) -> None:
    async def scenario() -> None:
        stores = [await make_store(redis_url) for _ in range(8)]
        await stores[0].commit(change(0))
        results = await asyncio.gather(
            *(s.commit(change(1, winner=str(i))) for i, s in enumerate(stores) for _ in range(3))
        )
        winners = [r for r in results if r.outcome == "ok"]
        assert len(winners) == 1 and winners[0].version == 2
        assert all(r.outcome == "conflict" and r.version == 2 for r in results if r.outcome != "ok")
        assert len(await stores[0].updates_after("g1", 0)) == 2
        for s in stores:
            await s.redis.aclose()

    run(scenario())


def test_the_stream_is_trimmed(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, stream_maxlen=10)
        for version in range(300):
            await store.commit(change(version))
        length = await store.redis.xlen(keys.game_stream("g1"))
        assert length < 300  # approximate trimming keeps at least 10, far fewer than 300
        latest = await store.updates_after("g1", 298)
        assert [u.version for u in latest] == [299, 300]
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_due_games_are_claimed_once_and_rescheduled_unless_lowered(redis_url: str) -> None:
    async def scenario() -> None:
        stores = [await make_store(redis_url, index_shards=4) for _ in range(4)]
        store = stores[0]
        now = await store.time_ms()
        for i in range(40):
            await store.schedule(f"g{i}", now - 1)
        await store.schedule("later", now + 60_000)
        # Every shard holds some of the games (no single key takes them all).
        sizes = [await store.redis.zcard(keys.due(shard)) for shard in range(4)]
        assert sum(sizes) == 41 and all(sizes)

        async def claim_all(s: Store) -> list[tuple[int, int, str]]:
            out = []
            for shard in range(4):
                lease, games = await s.claim_due(shard, 30_000, 5)
                out += [(shard, lease, game) for game in games]
            return out

        claims = [c for batch in await asyncio.gather(*map(claim_all, stores)) for c in batch]
        claims += await claim_all(store)  # what a first pass left (5 a shard per call)
        claims += await claim_all(store)
        assert sorted(game for _, _, game in claims) == sorted(f"g{i}" for i in range(40))
        (shard, lease, game), (shard1, lease1, game1), (shard2, lease2, game2) = claims[:3]
        assert lease >= now + 30_000
        # A renewal moves the lease on; the old lease no longer holds the claim.
        renewed = await store.renew(shard, game, lease, 60_000)
        assert renewed > lease and await store.renew(shard, game, lease, 60_000) == 0
        # Nobody lowered g: the sweeper's reschedule (with the renewed lease) holds.
        assert not await store.reschedule(shard, game, lease, now + 5_000)
        assert await store.reschedule(shard, game, renewed, now + 5_000)
        assert await store.redis.zscore(keys.due(shard), game) == now + 5_000
        # A writer lowered it meanwhile (ZADD LT): the sweeper leaves it alone.
        await store.schedule(game1, now + 1_000)
        assert await store.renew(shard1, game1, lease1, 30_000) == 0
        assert not await store.reschedule(shard1, game1, lease1, now + 50_000)
        assert await store.redis.zscore(keys.due(shard1), game1) == now + 1_000
        # Dropping is conditional too.
        assert await store.reschedule(shard2, game2, lease2, None)
        assert await store.redis.zscore(keys.due(shard2), game2) is None
        for s in stores:
            await s.redis.aclose()

    run(scenario())


def test_readers_cover_every_shard_count_used_on_the_redis(redis_url: str) -> None:
    async def scenario() -> None:
        wide = await make_store(redis_url, index_shards=32)
        await wide.agree_shards()
        narrow = await make_store(redis_url, index_shards=8)
        await narrow.agree_shards()
        assert (narrow.shards, narrow.read_shards) == (8, 32)  # writes to 8, reads 32
        # A game in a shard only the wider setting writes to is still claimed.
        game_id = next(f"g{i}" for i in itertools.count() if keys.shard(f"g{i}", 32) >= 8)
        await wide.schedule(game_id, 1)
        assert (await narrow.claim_due(keys.shard(game_id, 32), 1000, 10))[1] == [game_id]
        for s in (wide, narrow):
            await s.redis.aclose()

    run(scenario())


@both_stores
def test_browse_lists_are_bounded_and_newest_first(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, browse_size=8, index_shards=2)
        ids = [f"g{i}" for i in range(40)]
        for i, game_id in enumerate(ids):
            await store.list_add(GameStatus.OPEN, "war", game_id, 1000 + i)
        await store.list_add(GameStatus.OPEN, "battle", "b0", 1036)
        rows = await store.list_page([GameStatus.OPEN], ["war", "battle"], 0, 3)
        # Newest first across both lists and both shards (ties by id); one more row than
        # asked: "more pages".
        assert [row[2] for row in rows] == ["g39", "g38", "g37", "b0"]
        # Each shard keeps its newest browse_size / shards games.
        listed: list[tuple[float, str]] = [(1036, "b0")]
        for shard in range(2):
            kept: Any = await store.redis.zrange(keys.browse("open", "war", shard), 0, -1)
            assert len(kept) == 4
            newest = [g for g in reversed(ids) if keys.shard(g, 2) == shard][:4]
            assert sorted(member.decode() for member in kept) == sorted(newest)
            listed += [(1000 + ids.index(g), g) for g in newest]
        # A later page: its rows and one more, in the same order across lists and shards.
        listed.sort(key=lambda row: (-row[0], row[1]))
        page = await store.list_page([GameStatus.OPEN], ["war", "battle"], 2, 3)
        assert [(row[3], row[2]) for row in page] == listed[2:6]
        assert all(row[0] == "open" for row in page)
        assert all((row[1] == "battle") == (row[2] == "b0") for row in page)
        await store.redis.aclose()

    run(scenario())


def test_a_commit_sent_after_redis_forgot_its_scripts_is_made_once(redis_url: str) -> None:
    """On one Redis node the due time, the commit and the due time again go in one round
    trip; a Redis that lost the scripts (restarted, failed over) gets them again and the
    commit is made once, its due time set."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.scripts.load()
        await store.redis.script_flush()
        done = await store.commit(dataclasses.replace(change(0, status="running"), due_ms=5000))
        assert (done.outcome, done.version) == ("ok", 1)
        assert await store.redis.zscore(store._due("g1"), "g1") == 5000
        await store.redis.script_flush()
        again = await store.commit(dataclasses.replace(change(1), due_ms=7000))
        assert (again.outcome, again.version) == ("ok", 2)
        assert await store.redis.zscore(store._due("g1"), "g1") == 5000  # only ever lowered
        assert [u.version for u in await store.updates_after("g1", 0)] == [1, 2]
        await store.redis.aclose()

    run(scenario())


def test_a_finished_games_updates_expire_before_its_record(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        await store.commit(
            dataclasses.replace(change(1, status="finished"), trim_stream_to=4, stream_ttl=60)
        )
        assert 0 < await store.redis.ttl(keys.game_stream("g1")) <= 60
        assert 60 < await store.redis.ttl(keys.game("g1")) <= 600
        assert 60 < await store.redis.ttl(keys.game_actions("g1")) <= 600 or not (
            await store.redis.exists(keys.game_actions("g1"))
        )
        await store.redis.aclose()

    run(scenario())


def running(version: int, to_act: str) -> GameRecord:
    """A running game of a bot (South) and Ada (North), `to_act` to act, at `version`."""
    game = GameRecord.from_hash("g1", {})
    game.status, game.version = GameStatus.RUNNING, version
    game.seats = [
        Seat("south", BOT_PLAYER, "Bot", SeatKind.BOT),
        Seat("north", "p-ada", "Ada", SeatKind.HUMAN),
    ]
    game.state_bytes = game_pb2.GameState(to_act=[to_act]).SerializeToString()
    return game


def test_a_commit_that_makes_the_game_due_now_wakes_the_sweeper(redis_url: str) -> None:
    """A bot's turn is due at once: its commit wakes this replica's sweeper; a human's
    turn is due only later (a look at whether the player is still there), so it does not."""

    async def scenario() -> None:
        woken: list[int] = []
        made = await make_store(redis_url)  # wired as a replica wires it: its sweeper's poke
        store = Store(made.redis, made.scripts, made.settings, wake=lambda: woken.append(1))
        now = await store.time_ms()
        humans_turn = running(1, "north")
        done = await store.commit_change(None, humans_turn, now, WatchGameResponse())
        assert (done.outcome, woken) == ("ok", [])
        bots_turn = running(2, "south")
        done = await store.commit_change(humans_turn, bots_turn, now, WatchGameResponse())
        assert (done.outcome, woken) == ("ok", [1])
        assert await store.redis.zscore(store._due("g1"), "g1") == now
        await store.redis.aclose()

    run(scenario())


def test_the_last_update_id_is_the_newest_entry_of_the_games_stream(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        assert await store.last_update_id("g1") == "0-0"
        await store.commit(change(0))
        await store.commit(change(1))
        await store.commit(dataclasses.replace(change(0), game_id="g2"))
        assert await store.last_update_id("g1") == "2-0"
        await store.add_notice("g1", 2, {"n": "REMATCH_OFFERED", "s": "south"})
        assert await store.last_update_id("g1") == "2-1"
        await store.add_notice("g1", 2, {"n": "REMATCH_OFFERED", "s": "north"})
        assert await store.last_update_id("g1") == "2-2"  # the next notice of the version
        assert await store.last_update_id("g2") == "1-0"
        await store.redis.aclose()

    run(scenario())


def test_the_update_of_one_version_is_read_while_the_stream_keeps_it(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        for version in range(3):
            await store.commit(change(version))
        kept = await store.update_at("g1", 2)
        assert kept is not None and (kept.position, kept.message, kept.side) == (
            (2, 0),
            b"update 2",
            "south",
        )
        assert await store.update_at("g1", 4) is None  # not made yet
        await store.redis.aclose()

    run(scenario())


def test_updates_are_read_after_a_version_oldest_first_and_at_most_as_many_as_asked(
    redis_url: str,
) -> None:
    """A watcher catches up in batches: the updates after a version, oldest first, no
    more than `count` of them."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        for version in range(5):
            await store.commit(change(version))
        assert [u.version for u in await store.updates_after("g1", 1, 2)] == [2, 3]
        assert [u.version for u in await store.updates_after("g1", (3, 0), 10)] == [4, 5]
        await store.redis.aclose()

    run(scenario())


def test_a_notice_after_the_finished_games_updates_expired_is_still_a_notice(
    redis_url: str,
) -> None:
    """A finished game's updates expire long before its record, and a rematch may still be
    offered meanwhile: its notice follows the game's last version (n >= 1), not taken for
    that version's update (which a watcher who saw the version would skip)."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        await store.commit(
            dataclasses.replace(change(1, status="finished"), trim_stream_to=4, stream_ttl=1)
        )
        stream = keys.game_stream("g1")
        deadline = asyncio.get_running_loop().time() + 15
        while await store.redis.exists(stream):  # gone after its 1 s
            assert asyncio.get_running_loop().time() < deadline, "the stream did not expire"
            await asyncio.sleep(0.05)
        await store.add_notice("g1", 2, {"n": "REMATCH_OFFERED", "s": "south", "g": "g9"})
        (entry,) = await store.updates_after("g1", 0)
        assert (entry.version, entry.seq) == (2, 1)
        assert entry.notice == {"n": "REMATCH_OFFERED", "s": "south", "g": "g9"}
        assert (entry.side, entry.message, entry.full_notations) == ("south", b"", ())
        assert await store.update_at("g1", 2) is None  # no update of version 2 is kept
        assert await store.updates_after("g1", (2, 0)) == [entry]  # a watcher who saw 2
        await store.redis.aclose()

    run(scenario())


# -- commit_change: what a change of a record writes --------------------------------------


def people(version: int, state: game_pb2.GameState, sides: tuple[str, str]) -> GameRecord:
    """A running game of two people at `version`."""
    game = GameRecord.from_hash("g1", {})
    game.status, game.version, game.ruleset = GameStatus.RUNNING, version, state.game
    game.seats = [Seat(sides[0], "p-ada", "Ada"), Seat(sides[1], "p-bob", "Bob")]
    game.state_bytes = state.SerializeToString()
    return game


def follow(game: GameRecord, **changes: Any) -> GameRecord:
    """The record of the game's next version."""
    return dataclasses.replace(game, version=game.version + 1, _state=None, **changes)


async def stream_fields(store: Store, game_id: str) -> list[dict[bytes, bytes]]:
    rows: Any = await store.redis.xrange(keys.game_stream(game_id))
    return [fields for _, fields in rows]


@both_stores
def test_a_commit_of_a_change_writes_the_update_actions_and_what_changed(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, running_game_ttl=9000.0, idempotency_ttl=300.0)
        now = await store.time_ms()
        war = game_pb2.GameState(game="war", position="p", to_act=["south"])
        first = people(1, war, ("south", "north"))
        first.away = {"north": now - 5}
        done = await store.commit_change(None, first, now, WatchGameResponse(side="south"))
        assert (done.outcome, done.version) == ("ok", 1)
        with pytest.raises(ValueError, match="version 3 does not follow 1"):
            await store.commit_change(first, follow(follow(first)), now, WatchGameResponse())
        entry = ActionEntry(
            "south", "e3-e5", "e3-e5", game_pb2.Action(side="south").SerializeToString()
        )
        second = follow(first, away={}, moves_raw=moves_json("[]", [entry]))
        idem = keys.game_idempotency("g1", "p-ada", "k1")
        done = await store.commit_change(
            first,
            second,
            now + 7,
            WatchGameResponse(side="south"),
            full_notations=["e3-e5 (full)"],
            actions=[entry],
            idempotency_key=idem,
            fingerprint="fp",
        )
        assert (done.outcome, done.version) == ("ok", 2)
        retry = await store.commit_change(
            first, second, now + 9, WatchGameResponse(), idempotency_key=idem, fingerprint="fp"
        )
        assert (retry.outcome, retry.version, retry.fingerprint) == ("duplicate", 2, "fp")
        # A key without a request fingerprint records nothing: its retry is a conflict.
        other = keys.game_idempotency("g1", "p-ada", "k2")
        third = follow(second, acted_ms=5)
        kept = await store.commit_change(
            second, third, now, WatchGameResponse(), idempotency_key=other
        )
        assert (kept.outcome, kept.version) == ("ok", 3)
        again = await store.commit_change(
            second, third, now, WatchGameResponse(), idempotency_key=other
        )
        assert (again.outcome, again.version) == ("conflict", 3)
        stored, _, _ = await store.load("g1")
        assert stored is not None and stored.version == 3
        assert stored.away == {}  # a field set back to its default is written too
        assert [m.row() for m in stored.moves] == [entry.row()]
        assert await store.actions("g1") == [game_pb2.Action(side="south")]
        updates = await store.updates_after("g1", 0)
        assert [(u.version, u.side, u.full_notations) for u in updates] == [
            (1, "south", ()),
            (2, "south", ("e3-e5 (full)",)),
            (3, "", ()),
        ]
        messages = [WatchGameResponse.FromString(u.message) for u in updates]
        assert [(m.version, m.at.ToMilliseconds()) for m in messages][:2] == [
            (1, now),
            (2, now + 7),
        ]
        # A running game's keys, its updates included, live as long as a running game.
        for key in keys.game_keys("g1"):
            assert 300 < await store.redis.ttl(key) <= 9000
        await store.redis.aclose()

    run(scenario())


@pytest.mark.parametrize(("keep", "kept"), [(2, [5, 6]), (1, [6])])
def test_a_finished_game_keeps_its_last_updates_for_the_retries_only(
    redis_url: str, keep: int, kept: list[int]
) -> None:
    async def scenario() -> None:
        store = await make_store(
            redis_url, finished_stream_keep=keep, idempotency_ttl=300.0, finished_game_ttl=5000.0
        )
        now = await store.time_ms()
        war = game_pb2.GameState(game="war", position="p", to_act=["south"])
        game = people(1, war, ("south", "north"))
        await store.commit_change(None, game, now, WatchGameResponse())
        for _ in range(4):
            later = follow(game, acted_ms=game.acted_ms + 1)
            await store.commit_change(game, later, now, WatchGameResponse())
            game = later
        assert [u.version for u in await store.updates_after("g1", 0)] == [1, 2, 3, 4, 5]
        ended = follow(game, status=GameStatus.FINISHED)
        await store.commit_change(game, ended, now, WatchGameResponse())
        assert [u.version for u in await store.updates_after("g1", 0)] == kept
        assert 0 < await store.redis.ttl(keys.game_stream("g1")) <= 300
        assert 300 < await store.redis.ttl(keys.game("g1")) <= 5000
        await store.redis.aclose()

    run(scenario())


def deploying(phase: int, to_act: list[str]) -> game_pb2.GameState:
    return game_pb2.GameState(
        game="napoleonic",
        to_act=to_act,
        napoleonic=napoleonic_pb2.NapoleonicState(phase=phase),  # type: ignore[arg-type]
    )


def test_hidden_deployments_are_sealed_at_rest_until_the_arrays_are_laid_out(
    redis_url: str,
) -> None:
    """While a secret deployment is pending, Redis holds the state, the hidden actions, their
    notations and the full notations of the update sealed; the store opens them as it
    reads; the commit that lays the arrays out writes the notations in the clear."""

    async def scenario() -> None:
        store = await make_store(redis_url, secret_key=TEST_SECRET_KEY)
        now = await store.time_ms()
        commit_phase = napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT
        first = people(1, deploying(commit_phase, ["red", "blue"]), ("red", "blue"))
        await store.commit_change(None, first, now, WatchGameResponse())
        raw: Any = await store.redis.hget(keys.game("g1"), "state")
        assert raw.startswith(b"\x00") and raw != first.state_bytes
        loaded, _, _ = await store.load("g1")
        assert loaded is not None and loaded.state == first.state

        hidden = ActionEntry(
            "red",
            "deploy a2=I ñ",
            "deploy",
            game_pb2.Action(side="red", notation="deploy a2=I ñ").SerializeToString(),
        )
        plain = ActionEntry(
            "blue",
            "pass",
            "pass",
            game_pb2.Action(side="blue", notation="pass").SerializeToString(),
        )
        moves_raw, moves = store.moves_after(loaded, [hidden, plain], pending=True)
        assert moves == [hidden, plain]  # memory holds the notations the field seals
        assert "deploy a2=I" not in moves_raw and '"deploy"' in moves_raw
        # Only the hidden notation is sealed: an action that hides nothing stays as it is.
        assert json.loads(moves_raw)[1] == ["blue", "pass"]
        # Unopened, a sealed row reads as its public notation (never as anything else).
        assert [m.notation for m in parse_moves(moves_raw)] == ["deploy", "pass"]
        second = follow(
            loaded,
            moves_raw=moves_raw,
            _moves=moves,
            state_bytes=deploying(commit_phase, ["blue"]).SerializeToString(),
        )
        await store.commit_change(
            loaded,
            second,
            now,
            WatchGameResponse(side="red"),
            full_notations=["deploy a2=I ñ", "pass"],
            actions=[hidden, plain],
        )
        raw_actions: Any = await store.redis.lrange(keys.game_actions("g1"), 0, -1)
        assert raw_actions[0].startswith(b"\x00") and raw_actions[1] == plain.action
        (_, sealed_update) = await stream_fields(store, "g1")
        assert sealed_update[b"f"].startswith(b"\x00") and b"deploy" not in sealed_update[b"f"]
        raw = await store.redis.hget(keys.game("g1"), "state")
        assert raw.startswith(b"\x00")
        loaded, _, _ = await store.load("g1")
        assert loaded is not None and loaded.state == second.state
        assert [(m.side, m.notation, m.public) for m in loaded.moves] == [
            ("red", "deploy a2=I ñ", "deploy"),
            ("blue", "pass", "pass"),
        ]
        assert await store.actions("g1") == [
            game_pb2.Action(side="red", notation="deploy a2=I ñ"),
            game_pb2.Action(side="blue", notation="pass"),
        ]
        (update,) = await store.updates_after("g1", 1)
        assert (update.side, update.full_notations) == ("red", ("deploy a2=I ñ", "pass"))
        assert not update.sealed_full  # read through the store: opened, nothing left sealed
        assert await store.update_at("g1", 2) == update

        # The arrays are laid out: the notations go back in the clear, the state too.
        laid_out = deploying(napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT, ["red"])
        move = ActionEntry("blue", "b7-b6", "b7-b6", b"")
        moves_raw, moves = store.moves_after(loaded, [move], pending=False)
        assert "deploy a2=I ñ" in moves_raw and moves == [*loaded.moves, move]
        third = follow(
            loaded, moves_raw=moves_raw, _moves=moves, state_bytes=laid_out.SerializeToString()
        )
        await store.commit_change(
            loaded, third, now, WatchGameResponse(), full_notations=["b7-b6 ñ"]
        )
        raw = await store.redis.hget(keys.game("g1"), "state")
        assert not raw.startswith(b"\x00")
        raw_moves: Any = await store.redis.hget(keys.game("g1"), "moves")
        assert "deploy a2=I ñ" in raw_moves.decode()
        assert (await stream_fields(store, "g1"))[2][b"f"] == '["b7-b6 ñ"]'.encode()
        # Once in the clear, later moves are appended as they are.
        plain_raw, entries = store.moves_after(third, [move], pending=False)
        assert entries is None and plain_raw == moves_json(moves_raw, [move])
        await store.redis.aclose()

    run(scenario())


# -- reads and bookkeeping beside the commits ---------------------------------------------


def test_get_refuses_a_missing_an_implausible_or_an_unknown_game(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        game, now = await store.get("g1")
        assert (game.id, game.version, game.status) == ("g1", 1, "running")
        assert abs(now - await store.time_ms()) < 60_000
        refusals = []
        for game_id in ("", "g-1", "g2"):
            with pytest.raises(Refusal) as refused:
                await store.get(game_id)
            refusals.append((refused.value.reason, refused.value.message))
        assert refusals == [
            ("MISSING_FIELD", "game_id is required"),
            ("SESSION_NOT_FOUND", "no game 'g-1' (unknown or expired)"),
            ("SESSION_NOT_FOUND", "no game 'g2' (unknown or expired)"),
        ]
        await store.redis.aclose()

    run(scenario())


def test_only_a_full_read_gives_the_initial_state(redis_url: str) -> None:
    """The initial state is read for records only (`full`); every other read leaves it."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running", state=b"\x08\x02", initial=b"\x08\x01"))
        plain, _, _ = await store.load("g1")
        assert plain is not None and (plain.state_bytes, plain.initial_bytes) == (b"\x08\x02", b"")
        full, _, _ = await store.load("g1", full=True)
        assert full is not None and full.initial_bytes == b"\x08\x01"
        got, _ = await store.get("g1", full=True)
        assert got.initial_bytes == b"\x08\x01"
        assert (await store.get("g1"))[0].initial_bytes == b""
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_brief_read_gives_the_listed_games_without_their_states(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        entry = ActionEntry("south", "e3-e5", "e3-e5", b"")
        moves = moves_json("[]", [entry])
        await store.commit(change(0, status="open", game="war", state=b"\x08\x01", moves=moves))
        await store.commit(dataclasses.replace(change(0, status="running"), game_id="g2"))
        first, missing_game, second = await store.brief(["g1", "gone", "g2"])
        assert missing_game is None
        assert first is not None and (first.id, first.status, first.ruleset) == (
            "g1",
            "open",
            "war",
        )
        # Neither the state nor the moves are read for lists.
        assert (first.state_bytes, first.moves_raw, first.moves) == (b"", "[]", [])
        loaded, _, _ = await store.load("g1")  # a full load reads both
        assert loaded is not None and loaded.state_bytes == b"\x08\x01"
        assert [m.row() for m in loaded.moves] == [entry.row()]
        assert second is not None and (second.id, second.version, second.status) == (
            "g2",
            1,
            "running",
        )
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_games_due_time_is_only_ever_brought_forward(redis_url: str) -> None:
    """Writers only lower a game's due time (a sweeper that looks early finds nothing to do;
    one that looks late leaves a bot's turn or a clock undone): a later time leaves it, an
    earlier one replaces it, None changes nothing; a commit's due time likewise, lowered
    before the commit is tried, on one Redis (in the commit's round trip) and on a cluster
    (sent apart)."""

    async def scenario() -> None:
        store = await make_store(redis_url, index_shards=2)
        await store.schedule("g2", 5000)
        await store.schedule("g2", 7000)
        assert await store.redis.zscore(store._due("g2"), "g2") == 5000
        await store.schedule("g2", None)
        assert await store.redis.zscore(store._due("g2"), "g2") == 5000
        await store.schedule("g2", 3000)
        assert await store.redis.zscore(store._due("g2"), "g2") == 3000
        await store.schedule("g3", None)  # nothing to do: not made due
        assert await store.redis.zscore(store._due("g3"), "g3") is None

        first = await store.commit(dataclasses.replace(change(0), due_ms=5000))
        assert (first.outcome, await store.redis.zscore(store._due("g1"), "g1")) == ("ok", 5000)
        later = await store.commit(dataclasses.replace(change(1), due_ms=9000))
        assert (later.outcome, await store.redis.zscore(store._due("g1"), "g1")) == ("ok", 5000)
        sooner = await store.commit(dataclasses.replace(change(2), due_ms=4000))
        assert (sooner.outcome, await store.redis.zscore(store._due("g1"), "g1")) == ("ok", 4000)
        # The due time is lowered before the commit is tried: a commit that does not happen
        # (here a stale version; or a crash between the two) leaves the game due early.
        stale = await store.commit(dataclasses.replace(change(1), due_ms=2000))
        assert (stale.outcome, await store.redis.zscore(store._due("g1"), "g1")) == (
            "conflict",
            2000,
        )
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_game_leaves_its_browse_list_and_the_due_index(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, index_shards=2)
        for game_id in ("g1", "g2"):
            await store.list_add(GameStatus.OPEN, "war", game_id, 1000)
            await store.schedule(game_id, 5000)
        await store.list_remove(GameStatus.OPEN, "war", "g1")
        await store.list_remove(GameStatus.RUNNING, "war", "g2")  # not in that list
        rows = await store.list_page([GameStatus.OPEN], ["war"], 0, 10)
        assert [row[2] for row in rows] == ["g2"]
        await store.unschedule("g1")
        assert await store.redis.zscore(store._due("g1"), "g1") is None
        assert await store.redis.zscore(store._due("g2"), "g2") == 5000
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_an_invite_code_opens_one_game_for_a_while(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url, invite_ttl=500.0)
        assert await store.invite_target("7K3M9QX2HF4PT8WZ") is None
        assert await store.set_invite("7K3M9QX2HF4PT8WZ", "g1")
        assert not await store.set_invite("7K3M9QX2HF4PT8WZ", "g2")  # taken
        assert await store.invite_target("7K3M9QX2HF4PT8WZ") == "g1"
        assert 0 < await store.redis.ttl(keys.invite("7K3M9QX2HF4PT8WZ")) <= 500
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_commit_with_a_ttl_of_one_second_sets_it(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        commit = dataclasses.replace(change(0, status="running"), ttl=1)
        await store.commit(commit)
        assert await store.redis.ttl(keys.game("g1")) == 1
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_finished_game_records_its_first_rematch_only(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="finished"))
        assert await store.claim_rematch("g1", "g7") == "g7"
        assert await store.claim_rematch("g1", "g8") == "g7"
        assert await store.claim_rematch("gone", "g9") == ""
        record, _, _ = await store.load("g1")
        assert record is not None and record.rematch == "g7"
        await store.redis.aclose()

    run(scenario())


def test_bookkeeping_outside_the_versions_changes_only_what_differs(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="finished", rating_status="pending"))
        before, _, _ = await store.load("g1")
        assert before is not None
        settled = dataclasses.replace(before, rating_status=RatingStatus.DONE)
        await store.set_unversioned(before, settled)
        after, _, _ = await store.load("g1")
        assert after is not None and (after.version, after.rating_status) == (1, "done")
        await store.set_unversioned(after, after)  # nothing changed: nothing written
        with pytest.raises(ValueError, match=r"^a change of version goes through commit_change$"):
            await store.set_unversioned(after, dataclasses.replace(after, version=2))
        assert (await store.load("g1"))[0] == after
        await store.redis.aclose()

    run(scenario())


@both_stores
def test_a_load_with_a_token_check_answers_both(redis_url: str) -> None:
    """A submission reads its game and checks the player's token at once: in one round trip
    on one Redis, side by side on a cluster (the player's slot and the game's)."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running", initial=b"\x08\x01"))
        token_key = keys.player_token("p1", "ab" * 32)
        await store.redis.set(token_key, "t1")

        def auth(token: str) -> tuple[list[str], list[Any]]:
            player_keys = [
                keys.player_token("p1", token),
                keys.player("p1"),
                keys.player_tokens("p1"),
                keys.player_bucket("p1"),
                keys.player_rated("p1"),
                keys.player_games("p1"),
            ]
            return player_keys, [600, 0, 1, 1, 600]  # authenticate.lua's ARGV: no rate limit

        record, now, prior, reply = await store.load_with_auth("g1", auth=auth("ab" * 32))
        assert record is not None and (record.id, record.version) == ("g1", 1)
        assert record.initial_bytes == b""  # not a full read
        assert prior is None and abs(now - await store.time_ms()) < 60_000
        assert [int(reply[0]), store_text(reply[1])] == [1, "t1"]
        record, _, _, reply = await store.load_with_auth("g1", auth=auth("cd" * 32), full=True)
        assert record is not None and record.initial_bytes == b"\x08\x01"
        assert [int(item) for item in reply] == [0]  # an unknown token
        record, _, _, reply = await store.load_with_auth("g2", auth=auth("ab" * 32))
        assert record is None and int(reply[0]) == 1
        await store.redis.aclose()

    run(scenario())


def test_a_commit_announces_its_version_on_the_games_channel(redis_url: str) -> None:
    """The update a commit appends is announced on the game's shard channel, named like its
    stream (what wakes the replicas whose watchers follow the game), with its version."""
    client: Any = redis.Redis.from_url(redis_url)
    listener = client.pubsub()
    channel = keys.game_stream("g1").encode()
    listener.ssubscribe(channel)
    deadline = time.monotonic() + 30
    while (message := listener.get_sharded_message(timeout=1.0)) is None:
        assert time.monotonic() < deadline, "not subscribed"
    assert message["type"] == "ssubscribe"

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        await store.redis.aclose()

    run(scenario())
    deadline = time.monotonic() + 30
    while (message := listener.get_sharded_message(timeout=1.0)) is None:
        assert time.monotonic() < deadline, "no announcement"
    assert (message["type"], message["channel"], message["data"]) == ("smessage", channel, b"1")
    listener.close()
    client.close()


def test_a_commit_writes_to_the_game_hash_its_fields_and_the_version_only(redis_url: str) -> None:
    # The stream entry's fields ("u", "s") go to the stream, not to the game hash too.
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        assert set(await store.redis.hkeys(keys.game("g1"))) == {b"version", b"status"}
        await store.redis.aclose()

    run(scenario())


async def streams_left_by_a_last_millisecond(store: Store, script: str, *args: str) -> list[int]:
    """The PTTL of game g1's stream after each of 200 tries of `script` (KEYS: the game
    hash and its stream, ARGV `args`) run in one transaction right after the game is given
    1 ms to live, for the tries that added an entry: in the game's last millisecond (its
    PTTL 1 or 0 as the script reads it)."""
    await store.scripts.load()
    game, stream = keys.game("g1"), keys.game_stream("g1")
    left = []
    for _ in range(200):
        await store.redis.delete(stream)
        await store.redis.hset(game, "version", 1)
        pipe = store.redis.pipeline(transaction=True)
        pipe.pexpire(game, 1)
        pipe.evalsha(store.scripts.sha(script), 2, game, stream, *args)
        pipe.pttl(stream)
        _, reply, stream_ttl = await pipe.execute()
        entry = reply[0] if isinstance(reply, list) else reply
        if entry:
            left.append(stream_ttl)
    assert left, "the game expired before every try"
    return left


def test_a_notice_on_a_game_in_its_last_millisecond_leaves_no_stream_behind(
    redis_url: str,
) -> None:
    """A notice added as the game expires goes with it: its stream, new, gets the game's
    lifetime, not none (-1)."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        left = await streams_left_by_a_last_millisecond(store, "notice", "1", "100", "n", "X")
        assert -1 not in left
        await store.redis.aclose()

    run(scenario())
