"""The hub of live updates on a real Redis: the watcher limit's retry hint, a listener that
loses its connection says why, an update wakes only the streams waiting for one and those a
slice at a time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY
from redis.asyncio.cluster import RedisCluster

from matchmaker import keys
from matchmaker.record import GameStatus
from matchmaker.server import Replica
from matchmaker.store import Commit, Update
from matchmaker.watch import (
    BUFFER,
    READ_COUNT,
    WAKE_SLICE,
    Batch,
    Feed,
    Watcher,
    finished_at,
)
from tests.matchmaker.conftest import both_stores, fast_settings
from tests.matchmaker.helpers import captured_logs, store_client
from tests.matchmaker.test_views import war_record
from wargame.runtime.refusal import Reason, Refusal

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def parts(redis_url: str, **changes: Any) -> AsyncIterator[Replica]:
    """A replica's parts on the Redis (not serving; no engine needed to watch)."""
    replica = await Replica.connect(fast_settings(redis_url, **changes))
    try:
        yield replica
    finally:
        await replica.close()


async def taken(updates: Watcher) -> Batch:
    """The watcher's next batch (at most 15 s away)."""
    batch = await updates.next(asyncio.Event(), 15)
    assert batch is not None, "no batch for 15 s"
    return batch


def test_one_watcher_too_many_is_told_when_to_retry(redis_url: str) -> None:
    async def scenario() -> None:
        async with parts(
            redis_url, max_watchers=1, watch_seat_reserve=0, retry_hint=0.25
        ) as replica:
            async with replica.hub.subscribe("g-watched"):
                with pytest.raises(Refusal) as refused:
                    replica.hub.admit()
            replica.hub.admit()  # the one watcher left: room again
        refusal = refused.value
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            Reason.TOO_MANY_WATCHERS,
        )
        assert refusal.message == "this server holds its most live streams (1); retry in 0.25 s"
        assert refusal.metadata == {"retry_after_ms": "250"}
        assert refusal.retry_after == 0.25

    asyncio.run(scenario())


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait (polling the loop) until `check()` is true, at most 15 s."""

    async def poll() -> None:
        while not await check():
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(poll(), 15)
    except TimeoutError:
        raise AssertionError(f"not seen within 15 s: {what}") from None


@both_stores
def test_a_lost_update_listener_logs_why(redis_url: str) -> None:
    """Redis closes the listener's connection: the listener logs the error's text (what
    an operator reads to tell a failover from a network fault), then subscribes again (on
    a cluster, after looking up which primary now serves each of its channels)."""

    async def scenario() -> None:
        async with parts(redis_url) as replica, replica.hub.subscribe("g-watched"):
            channel = keys.game_channel("g-watched")
            # The primary serving the channel: the listener's node, where it subscribes.
            if isinstance(replica.redis, RedisCluster):
                primary = replica.redis.get_node_from_key(channel)
                assert primary is not None
                on: dict[str, Any] = {"target_nodes": primary}
                node = primary.name
            else:
                on, node = {}, "redis"

            async def subscribed() -> bool:
                counts = await replica.redis.execute_command("PUBSUB", "SHARDNUMSUB", channel, **on)
                return bool(counts[1])

            await until(subscribed, "the listener subscribed")
            with captured_logs() as logs:
                await replica.redis.execute_command("CLIENT", "KILL", "TYPE", "pubsub", **on)

                async def lost() -> bool:
                    return any(entry["event"] == "update listener lost" for entry in logs)

                await until(lost, "the listener's loss logged")
                await until(subscribed, "the listener subscribed again")
            (entry,) = [entry for entry in logs if entry["event"] == "update listener lost"]
            assert entry["node"] == node
            assert isinstance(entry["error"], str) and "closed" in entry["error"].lower()

    asyncio.run(scenario())


def test_a_listener_pings_through_silences_and_keeps_its_connection(redis_url: str) -> None:
    """No update for a while is not a lost connection: after each silence the listener
    PINGs, reads the answer and listens on, on the same connection, and a later commit
    still reaches the watcher. (A silence of 1 s: with a quarter of a second, a busy machine
    that stalled this process as long missed the answer to a PING.)"""

    async def scenario() -> None:
        async with parts(redis_url, watch_block=1.0) as replica:
            checker = await store_client(redis_url)
            try:
                async with replica.hub.subscribe("g-watched") as updates:

                    async def listener_ids() -> list[int]:
                        clients = await checker.execute_command("CLIENT", "LIST", "TYPE", "pubsub")
                        text = clients.decode() if isinstance(clients, bytes) else str(clients)
                        return [
                            int(line.split("id=", 1)[1].split()[0])
                            for line in text.splitlines()
                            if "ssub=1" in line.split()
                        ]

                    async def pings() -> int:
                        stats = await checker.info("commandstats")
                        return int(stats.get("cmdstat_ping", {}).get("calls", 0))

                    async def subscribed() -> bool:
                        return len(await listener_ids()) == 1

                    await until(subscribed, "the listener subscribed")
                    (listener,) = await listener_ids()
                    before = await pings()
                    task = replica.hub.listeners["redis"].task
                    with captured_logs() as logs:

                        async def silences() -> bool:
                            lost = any(e["event"] == "update listener lost" for e in logs)
                            return lost or task.done() or await pings() >= before + 3

                        await until(silences, "three PINGs after silences")
                    assert not task.done()
                    assert [e for e in logs if e["event"] == "update listener lost"] == []
                    assert await listener_ids() == [listener]
                    store = replica.store
                    update = Update(b"update 1", side="south")
                    await store.commit(Commit("g-watched", 0, {"status": "running"}, update=update))
                    batch = await taken(updates)
                    assert [entry.version for entry in batch.entries] == [1]
            finally:
                await checker.aclose()

    asyncio.run(scenario())


def test_a_listener_whose_ping_goes_unanswered_logs_so_and_subscribes_again(
    redis_url: str,
) -> None:
    """A primary that holds its answers (frozen, or paused as here) is noticed by the PING
    after a silence: the listener logs that the PING had no answer (not a closed
    connection: what tells an operator the primary hung), then subscribes again."""

    async def scenario() -> None:
        async with parts(redis_url, watch_block=0.25) as replica:
            checker = await store_client(redis_url)
            try:
                async with replica.hub.subscribe("g-paused"):
                    channel = keys.game_channel("g-paused")

                    async def subscribed() -> bool:
                        counts = await checker.execute_command("PUBSUB", "SHARDNUMSUB", channel)
                        return bool(counts[1])

                    await until(subscribed, "the listener subscribed")
                    with captured_logs() as logs:
                        await checker.execute_command("CLIENT", "PAUSE", 2000, "ALL")

                        async def lost() -> bool:
                            return any(entry["event"] == "update listener lost" for entry in logs)

                        await until(lost, "the listener's loss logged")
                        await until(subscribed, "the listener subscribed again")
                    # The first loss is the PING's. On a busy machine the next try can come
                    # while Redis is still paused, and be lost (and logged) too.
                    first, *_ = [
                        entry for entry in logs if entry["event"] == "update listener lost"
                    ]
                    assert (first["node"], first["error"]) == ("redis", "no answer to PING")
            finally:
                await checker.aclose()

    asyncio.run(scenario())


def test_a_watched_game_at_rest_costs_redis_no_reads(redis_url: str) -> None:
    """A feed reads the game's stream when woken and only then: once on subscribing (to
    catch up), once per announced update; while nothing happens, a watched game costs Redis
    no reads however long its watchers stay (thousands of quiet games cost nothing)."""

    async def scenario() -> None:
        async with parts(redis_url) as replica:
            checker = await store_client(redis_url)
            try:

                async def reads() -> int:
                    stats = await checker.info("commandstats")
                    return int(stats.get("cmdstat_xrange", {}).get("calls", 0))

                base = await reads()
                async with replica.hub.subscribe("g-at-rest") as updates:

                    async def caught_up() -> bool:
                        return await reads() >= base + 1

                    await until(caught_up, "the feed's read on subscribing")
                    update = Update(b"update 1", side="south")
                    await replica.store.commit(
                        Commit("g-at-rest", 0, {"status": "running"}, update=update)
                    )
                    batch = await taken(updates)
                    assert [entry.version for entry in batch.entries] == [1]
                    assert await reads() == base + 2
                    for _ in range(20):  # the replica's tasks run while these are answered
                        await replica.redis.ping()
                    assert await reads() == base + 2
                    assert updates.taken == updates.feed.handed
            finally:
                await checker.aclose()

    asyncio.run(scenario())


def test_a_stream_not_asking_for_an_update_costs_nothing_per_update(redis_url: str) -> None:
    """A stream busy elsewhere (its last message not yet taken by its client: gRPC asks it
    for the next one only once the write completed) is not woken, nor handed anything, per
    update: an update wakes only the streams waiting for one (counted by
    wargame_matchmaker_watchers_woken), one per update here however many streams are busy.
    A busy stream asking at last takes what it missed, in order, or, having missed more
    than the feed holds (`BUFFER`), word that it is behind (it reads its way back)."""

    def woken() -> float | None:
        return REGISTRY.get_sample_value("wargame_matchmaker_watchers_woken_total")

    async def scenario() -> None:
        async with parts(redis_url) as replica, contextlib.AsyncExitStack() as streams:
            hub = replica.hub
            reader = await streams.enter_async_context(hub.subscribe("g-busy"))
            busy = [await streams.enter_async_context(hub.subscribe("g-busy")) for _ in range(50)]
            version = 0

            async def move() -> list[int]:
                """One update, the reader waiting for it: the versions handed to it."""
                nonlocal version
                waiting = asyncio.ensure_future(taken(reader))
                await asyncio.sleep(0)  # the reader waits for its next batch
                update = Update(f"update {version + 1}".encode(), side="south")
                await replica.store.commit(
                    Commit("g-busy", version, {"status": "running"}, update=update)
                )
                version += 1
                return [entry.version for entry in (await waiting).entries]

            assert await move() == [1]  # the feed listens: every update from now on
            before = woken()
            missed = BUFFER + 2
            assert [await move() for _ in range(missed)] == [[v] for v in range(2, missed + 2)]
            after = woken()
            assert before is not None and after is not None, "no count of streams woken"
            assert after - before == missed, (after - before, missed)  # the reader alone
            # Asking at last: more missed than the feed holds, then the next ones in order.
            assert (await taken(busy[0])).behind
            for _ in range(3):
                await move()
            assert [[e.version for e in (await taken(busy[0])).entries] for _ in range(3)] == [
                [version - 2],
                [version - 1],
                [version],
            ]

    asyncio.run(scenario())


def test_a_call_ready_meanwhile_waits_behind_one_slice_of_the_streams_an_update_wakes(
    redis_url: str,
) -> None:
    """An update wakes the streams waiting for it `WAKE_SLICE` per turn of the event loop:
    a call that became ready once the first of them went on (a move's Redis reply) goes on
    behind at most that slice of them, not behind all two hundred."""

    async def scenario() -> None:
        async with parts(redis_url) as replica, contextlib.AsyncExitStack() as streams:
            hub = replica.hub
            watchers = [
                await streams.enter_async_context(hub.subscribe("g-woken")) for _ in range(200)
            ]
            update = Update(b"update 1", side="south")
            first = asyncio.ensure_future(taken(watchers[0]))
            await asyncio.sleep(0)
            await replica.store.commit(Commit("g-woken", 0, {"status": "running"}, update=update))
            assert [entry.version for entry in (await first).entries] == [1]  # listening
            order: list[str] = []

            async def woken(watcher: Watcher) -> None:
                while (await taken(watcher)).entries[-1].version < 2:
                    pass  # update 1, taken at once
                order.append("stream")
                if len(order) == 1:  # the move's reply arrives as the first goes on
                    asyncio.get_running_loop().call_soon(order.append, "move")

            waiting = [asyncio.ensure_future(woken(watcher)) for watcher in watchers]
            await asyncio.sleep(0)  # each waits for update 2
            update = Update(b"update 2", side="south")
            await replica.store.commit(Commit("g-woken", 1, {"status": "running"}, update=update))
            await asyncio.gather(*waiting)
            assert order.count("stream") == len(watchers)
            assert order.index("move") <= WAKE_SLICE, order.index("move")

    asyncio.run(scenario())


def test_a_feed_that_fell_behind_hands_out_every_entry_once_in_bounded_reads(
    redis_url: str,
) -> None:
    """A feed woken once after more than READ_COUNT entries were appended (its watchers fell
    behind: a burst while it was not listening) reads on until it has them all, at most
    READ_COUNT at a time: every entry handed out once, in order, none lost or repeated."""

    async def scenario() -> None:
        async with parts(redis_url) as replica:
            total = 2 * READ_COUNT + 7
            for version in range(total):
                update = Update(f"update {version + 1}".encode(), side="south")
                await replica.store.commit(
                    Commit("g-behind", version, {"status": "running"}, update=update)
                )
            feed = Feed(replica.hub, "g-behind", "0-0")  # not listening: woken here, once
            watcher = Watcher(feed)
            feed.watchers.add(watcher)
            try:
                feed.wake()
                reading = feed._reading
                assert reading is not None
                await asyncio.wait_for(reading, 15)
            finally:
                feed.close()
            batches = [await taken(watcher) for _ in range(feed.handed - watcher.taken)]
            assert [len(batch.entries) for batch in batches] == [READ_COUNT, READ_COUNT, 7]
            entries = [entry for batch in batches for entry in batch.entries]
            assert [entry.position for entry in entries] == [(v, 0) for v in range(1, total + 1)]
            assert [entry.message for entry in entries] == [
                f"update {v}".encode() for v in range(1, total + 1)
            ]
            # Each batch carries the game as read after its entries.
            assert [batch.game.version if batch.game else None for batch in batches] == [total] * 3
            assert feed.last_id == f"{total}-0"

    asyncio.run(scenario())


def test_a_stream_is_over_at_the_last_version_of_a_finished_game() -> None:
    finished = war_record(status=GameStatus.FINISHED, version=7)
    assert finished_at(finished, 7) and finished_at(finished, 8)
    assert not finished_at(finished, 6)  # updates are still to be sent
    assert not finished_at(war_record(version=7), 7)  # running: more will come
    assert not finished_at(None, 7)  # expired: nothing to say it ended


def test_a_listener_left_without_games_and_cut_off_is_forgotten(redis_url: str) -> None:
    """Once its last watcher has gone and its connection is lost, a listener ends and the
    replica forgets it; the next watcher of a game there gets a new one, which works."""

    async def scenario() -> None:
        async with parts(redis_url) as replica:
            hub = replica.hub
            channel = keys.game_channel("g-left")

            async def subscribed() -> bool:
                counts = await replica.redis.execute_command("PUBSUB", "SHARDNUMSUB", channel)
                return bool(counts[1])

            async with hub.subscribe("g-left"):
                listener = hub.listeners["redis"]
                await until(subscribed, "the listener subscribed")
            unsubscribed: list[str] = []

            async def left() -> bool:  # the listener's connection, its channel given up
                clients = await replica.redis.execute_command("CLIENT", "LIST")
                text = clients.decode() if isinstance(clients, bytes) else str(clients)
                unsubscribed[:] = [
                    line.split("id=", 1)[1].split()[0]
                    for line in text.splitlines()
                    if "cmd=sunsubscribe" in line.split()
                ]
                return bool(unsubscribed)

            await until(left, "the listener gave up its channel")
            await replica.redis.execute_command("CLIENT", "KILL", "ID", *unsubscribed)

            async def ended() -> bool:
                return listener.task.done()

            await until(ended, "the listener ended")
            assert hub.listeners == {}
            async with hub.subscribe("g-later") as updates:
                assert hub.listeners["redis"] is not listener
                update = Update(b"update 1", side="south")

                async def delivered() -> bool:
                    with contextlib.suppress(Refusal):  # the game exists once committed
                        await replica.store.commit(
                            Commit("g-later", 0, {"status": "running"}, update=update)
                        )
                    return updates.feed.handed > updates.taken

                await until(delivered, "an update delivered through the new listener")
                batch = await taken(updates)
                assert [entry.version for entry in batch.entries] == [1]

    asyncio.run(scenario())


def test_a_move_ready_meanwhile_waits_behind_one_stream_of_those_a_shared_read_wakes(
    redis_url: str,
) -> None:
    """Fifty streams opening on one game share one read; while a move is being handled,
    they go on one per turn of the event loop: the move's reply, ready once the first of
    them went on, is taken up before the second goes on, not behind all fifty."""

    async def scenario() -> None:
        async with parts(redis_url) as replica:
            hub = replica.hub
            order: list[str] = []
            read = asyncio.Event()
            reply: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            async def game() -> str:
                await read.wait()
                return await replica.store.last_update_id("g-shared")  # a real read

            waiting = 0

            async def stream(index: int) -> None:
                nonlocal waiting
                waiting += 1
                await hub.shared(("game", "g-shared"), game)
                order.append(f"stream {index}")
                if not reply.done():
                    reply.set_result(None)  # the move's reply arrives meanwhile

            async def move() -> None:
                await reply
                order.append("move")

            hub.traffic.calls += 1  # the move, being handled
            streams = [asyncio.create_task(stream(index)) for index in range(50)]
            moving = asyncio.create_task(move())
            while waiting < len(streams):  # every stream waits on the shared read
                await asyncio.sleep(0)
            read.set()
            await asyncio.gather(*streams, moving)
            hub.traffic.calls -= 1
        assert order.index("move") <= 2, order

    asyncio.run(scenario())
