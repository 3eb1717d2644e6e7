"""The game store on a real Redis (and Redis Cluster): the commit compare-and-set, the
stream, the sharded due index and browse lists."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from typing import Any

import pytest

from matchmaker import keys
from matchmaker.record import (
    BOT_PLAYER,
    ActionEntry,
    GameRecord,
    GameStatus,
    Seat,
    SeatKind,
    moves_json,
)
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Commit, Store, Update, millis
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client, sync_client
from wargame.v1 import game_pb2
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


def test_a_key_seen_before_returns_the_first_commit(redis_url: str) -> None:
    async def scenario() -> None:
        store = await make_store(redis_url)
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
        for shard in range(2):
            kept: Any = await store.redis.zrange(keys.browse("open", "war", shard), 0, -1)
            assert len(kept) == 4
            newest = [g for g in reversed(ids) if keys.shard(g, 2) == shard][:4]
            assert sorted(member.decode() for member in kept) == sorted(newest)
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
        store = await make_store(redis_url)
        woken: list[int] = []
        store.wake = lambda: woken.append(1)
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
        assert await store.last_update_id("g2") == "1-0"
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
        assert await store.update_at("g1", 2) is None  # no update of version 2 is kept
        assert await store.updates_after("g1", (2, 0)) == [entry]  # a watcher who saw 2
        await store.redis.aclose()

    run(scenario())
