"""The game store on a real Redis: the commit compare-and-set, the stream, the due index."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from redis.asyncio import Redis

from matchmaker import keys
from matchmaker.record import ActionEntry, GameStatus, moves_json
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Commit, Store, Update
from tests.matchmaker.conftest import run
from wargame.v1 import game_pb2

pytestmark = pytest.mark.integration


def make_store(redis_url: str, **changes: object) -> Store:
    redis = Redis.from_url(redis_url)
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


def test_commit_is_a_compare_and_set_on_the_version(redis_url: str) -> None:
    async def scenario() -> None:
        store = make_store(redis_url)
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


def test_a_key_seen_before_returns_the_first_commit(redis_url: str) -> None:
    async def scenario() -> None:
        store = make_store(redis_url)
        await store.commit(change(0))
        idem = keys.game_idempotency("g1", "p1", "key-1")
        commit = dataclasses.replace(
            change(1, status="running"), idempotency_key=idem, fingerprint="abc"
        )
        assert (await store.commit(commit)).outcome == "ok"
        retry = await store.commit(commit)
        assert (retry.outcome, retry.version, retry.fingerprint) == ("duplicate", 2, "abc")
        record, _, prior = await store.load("g1", idempotency_key=idem)
        assert record is not None and record.version == 2 and prior == b"abc|2"
        assert 0 < await store.redis.ttl(idem) <= store.settings.idempotency_ttl
        await store.redis.aclose()

    run(scenario())


def test_exactly_one_of_many_concurrent_commits_wins(redis_url: str) -> None:
    async def scenario() -> None:
        stores = [make_store(redis_url) for _ in range(8)]
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
        store = make_store(redis_url, stream_maxlen=10)
        for version in range(300):
            await store.commit(change(version))
        length = await store.redis.xlen(keys.game_stream("g1"))
        assert length < 300  # approximate trimming keeps at least 10, far fewer than 300
        latest = await store.updates_after("g1", 298)
        assert [u.version for u in latest] == [299, 300]
        await store.redis.aclose()

    run(scenario())


def test_due_games_are_claimed_once_and_rescheduled_unless_lowered(redis_url: str) -> None:
    async def scenario() -> None:
        stores = [make_store(redis_url) for _ in range(4)]
        store = stores[0]
        now = await store.time_ms()
        await store.redis.zadd(keys.due(), {f"g{i}": now - 1 for i in range(40)})
        await store.redis.zadd(keys.due(), {"later": now + 60_000})
        claims = await asyncio.gather(*(s.claim_due(30_000, 15) for s in stores))
        claimed = [game for _, games in claims for game in games]
        assert sorted(claimed) == sorted(f"g{i}" for i in range(40))  # each exactly once
        lease, games = claims[0]
        assert lease >= now + 30_000
        # Nobody lowered g: the sweeper's reschedule holds.
        assert await store.reschedule(games[0], lease, now + 5_000)
        assert await store.redis.zscore(keys.due(), games[0]) == now + 5_000
        # A writer lowered it meanwhile (ZADD LT): the sweeper leaves it alone.
        await store.schedule(games[1], now + 1_000)
        assert not await store.reschedule(games[1], lease, now + 50_000)
        assert await store.redis.zscore(keys.due(), games[1]) == now + 1_000
        # Dropping is conditional too.
        assert await store.reschedule(games[2], lease, None)
        assert await store.redis.zscore(keys.due(), games[2]) is None
        for s in stores:
            await s.redis.aclose()

    run(scenario())


def test_browse_lists_are_bounded_and_newest_first(redis_url: str) -> None:
    async def scenario() -> None:
        store = make_store(redis_url, browse_size=5)
        for i in range(8):
            await store.list_add(GameStatus.OPEN, "war", f"g{i}", 1000 + i)
        await store.list_add(GameStatus.OPEN, "battle", "b0", 1006)
        rows = await store.list_page([GameStatus.OPEN], ["war", "battle"], 0, 3)
        # Newest first across both lists (ties by id); one more row than asked: "more pages".
        assert [row[2] for row in rows] == ["g7", "b0", "g6", "g5"]
        assert await store.redis.zcard(keys.browse("open", "war")) == 5
        await store.redis.aclose()

    run(scenario())
