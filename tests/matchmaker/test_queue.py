"""Quick-match queues on a real Redis: atomic pairing, widening windows, liveness."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import random
from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.engine import Engine
from matchmaker.errors import ServiceError
from matchmaker.players import Players
from matchmaker.queue import Queues, QueueSpec
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.sessions import Sessions, TimeControl
from matchmaker.settings import Settings
from matchmaker.store import Store
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client

pytestmark = pytest.mark.integration
SPEC = QueueSpec("war", {"compulsion": "legality"}, "", TimeControl(60_000, 1_000), True)


async def make_queues(redis_url: str, **changes: object) -> Queues:
    """Queues without the engine (pairing and waiting never call it)."""
    settings = dataclasses.replace(Settings(redis_url=redis_url, rate_limit=0), **changes)  # type: ignore[arg-type]
    redis = await store_client(redis_url)
    scripts = Scripts(redis)
    engine = Engine("127.0.0.1:1", settings)
    players = Players(redis, scripts, settings)
    sessions = Sessions(Store(redis, scripts, settings), engine, players, settings)
    return Queues(
        redis=redis,
        scripts=scripts,
        engine=engine,
        players=players,
        sessions=sessions,
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


@both_stores
def test_many_concurrent_joins_and_pairers_never_pair_a_ticket_twice(redis_url: str) -> None:
    async def scenario() -> None:
        pairers = [await make_queues(redis_url) for _ in range(4)]
        first = pairers[0]
        rng = random.Random(7)
        players = [f"p{i}" for i in range(300)]
        for player_id in players:
            await set_rating(first.redis, player_id, rng.gauss(1500, 150))

        async def join_and_pair(index: int, player_id: str) -> list[dict[str, Any]]:
            queues = pairers[index % len(pairers)]
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
        # As if "low" had waited 21 s: its window (625) now reaches "high".
        joined = keys.queue_joined(SPEC.queue_id)
        oldest: list[Any] = await queues.redis.zrange(joined, 0, 0)
        await queues.redis.zincrby(joined, -21_000, oldest[0])
        matches = await queues.pair(SPEC.queue_id)
        assert len(matches) == 1
        assert sorted(seat["p"] for seat in matches[0]["seats"]) == ["high", "low"]
        await close(queues)

    run(scenario())


def test_nearest_rating_is_preferred(redis_url: str) -> None:
    async def scenario() -> None:
        queues = await make_queues(redis_url, window_base=500.0)
        for player_id, rating in (("a", 1500), ("far", 1900), ("near", 1520)):
            await set_rating(queues.redis, player_id, rating)
            await queues.join(player_id, player_id, SPEC)
        matches = await queues.pair(SPEC.queue_id)
        assert sorted(seat["p"] for seat in matches[0]["seats"]) == ["a", "near"]
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
        with pytest.raises(ServiceError) as caught:
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
        assert await queues.redis.hkeys(keys.queue_tickets(SPEC.queue_id)) != []
        raw = await queues.redis.hvals(keys.queue_tickets(SPEC.queue_id))
        assert [json.loads(value)["p"] for value in raw] == ["live"]
        await close(queues)

    run(scenario())
