"""Live updates on a Redis Cluster whose hash slots move to another primary (resharding).

The watched games of a moved slot, and only those, are listened for on the primary that
now serves it; the listener of the old primary keeps serving its other games on its
connection; and every watcher receives every update, none lost or repeated (module
docstring of `matchmaker.watch`). The slots move as the Redis Cluster specification's live
resharding moves them (CLUSTER SETSLOT IMPORTING / MIGRATING, MIGRATE of the slot's keys,
CLUSTER SETSLOT NODE), on a cluster of this module's own, so the session's cluster keeps
its layout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
import redis.asyncio
from redis.crc import key_slot

from matchmaker import keys
from matchmaker.server import Replica
from matchmaker.store import Commit, Update
from matchmaker.watch import Watcher
from tests.matchmaker.conftest import flush_cluster
from tests.matchmaker.helpers import captured_logs
from tests.matchmaker.test_watch import parts, until
from tests.servers import RedisClusterServers, start_redis_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A 3-primary Redis Cluster of this module's (its slots are moved by the tests)."""
    servers = start_redis_cluster(tmp_path_factory.mktemp("resharded-cluster"), primaries=3)
    yield servers
    servers.stop()


@pytest.fixture
def cluster_url(cluster: RedisClusterServers) -> str:
    """The module's cluster, flushed."""
    flush_cluster(cluster)
    return cluster.url


def node_name(port: int) -> str:
    """The name redis-py (and so the replica's listeners) gives the primary on `port`."""
    return f"127.0.0.1:{port}"


def node_client(port: int) -> Any:
    """A client of the one node on `port` (commands sent to it alone, no redirection)."""
    return redis.Redis(port=port)


def owner(cluster: RedisClusterServers, channel: str) -> int:
    """The port of the primary serving `channel`'s slot (CLUSTER SLOTS)."""
    slot = key_slot(channel.encode())
    with node_client(cluster.nodes[0].port) as client:
        ranges = client.execute_command("CLUSTER", "SLOTS")
    for first, last, primary, *_ in ranges:
        if first <= slot <= last:
            return int(primary[1])
    raise AssertionError(f"no primary serves slot {slot}")


def staying_game(cluster: RedisClusterServers, beside: str) -> str:
    """A game served by the same primary as game `beside`, in another slot."""
    channel = keys.game_channel(beside)
    for index in range(1000):
        game = f"g-staying-{index}"
        other = keys.game_channel(game)
        if key_slot(other.encode()) != key_slot(channel.encode()) and owner(
            cluster, other
        ) == owner(cluster, channel):
            return game
    raise AssertionError(f"no game found beside {beside}")


def move_slot(cluster: RedisClusterServers, channel: str, target: int) -> None:
    """Move the slot of `channel` (with its keys) to the primary on port `target`, as the
    Redis Cluster specification's live resharding does: the target imports, the source
    migrates, MIGRATE moves the keys, then CLUSTER SETSLOT NODE on the target, the other
    primaries and the source last (the source then lets the slot's shard channels go, and
    by then every primary answers the slot's new owner)."""
    slot = key_slot(channel.encode())
    source = owner(cluster, channel)
    at = {node.port: node_client(node.port) for node in cluster.nodes}
    try:
        ids = {
            port: client.execute_command("CLUSTER", "MYID").decode() for port, client in at.items()
        }
        at[target].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
        at[source].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
        while moving := at[source].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            at[source].execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *moving)
        others = [port for port in at if port not in (source, target)]
        for port in (target, *others, source):
            at[port].execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
    finally:
        for client in at.values():
            client.close()
    assert owner(cluster, channel) == target


def lost_connections(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The listeners' lost connections logged (a moved slot loses none)."""
    return [entry for entry in logs if entry["event"] == "update listener lost"]


def two_games(cluster: RedisClusterServers) -> tuple[str, str, int, int]:
    """Game "g-moving" and a game staying beside it (one primary, other slots), the port of
    their primary and of another primary to move "g-moving"'s slot to."""
    moving = "g-moving"
    source = owner(cluster, keys.game_channel(moving))
    target = next(node.port for node in cluster.nodes if node.port != source)
    return moving, staying_game(cluster, moving), source, target


@contextlib.asynccontextmanager
async def replica_losing_no_connection(cluster_url: str) -> AsyncIterator[Replica]:
    """A replica's parts on the cluster, whose listeners have lost no connection when it
    closes. PINGs after 5 s of silence only: no loaded machine's slow answer taken for a
    loss."""
    with captured_logs() as logs:
        async with parts(cluster_url, watch_block=5.0) as replica:
            yield replica
    assert lost_connections(logs) == []


async def subscribers(port: int, channel: str) -> int:
    """How many connections the primary on `port` has subscribed to `channel`."""
    client: Any = redis.asyncio.Redis(port=port)
    try:
        counts = await client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    finally:
        await client.aclose()
    return int(counts[1])


async def commit(replica: Replica, game_id: str, version: int) -> None:
    """Commit update `version + 1` of the game (created by its first commit)."""
    update = Update(f"update {version + 1}".encode(), side="south")
    await replica.store.commit(Commit(game_id, version, {"status": "running"}, update=update))


async def versions(updates: Watcher, last: int) -> list[int]:
    """The versions handed to a watcher, batch after batch, until version `last` (at most
    15 s for each batch)."""
    seen: list[int] = []
    while not seen or seen[-1] < last:
        batch = await updates.next(asyncio.Event(), 15)
        if batch is None:
            raise AssertionError(f"handed {seen}, then nothing for 15 s (up to {last})")
        assert batch.error is None, batch.error
        seen += [entry.version for entry in batch.entries]
    return seen


def test_the_watchers_of_a_moved_slot_follow_it_to_its_new_primary_and_lose_nothing(
    cluster: RedisClusterServers, cluster_url: str
) -> None:
    """A watched game's slot moves to another primary: the old primary drops the game's
    channel, the replica listens for it on the new primary, and its watcher receives every
    update (the one committed before the replica caught up too), each once, in order. A
    game of the same primary in another slot stays on the old listener, same connection,
    and its watcher too receives every update."""

    async def scenario() -> None:
        moving, staying, source, target = two_games(cluster)
        moving_channel, staying_channel = keys.game_channel(moving), keys.game_channel(staying)
        async with replica_losing_no_connection(cluster_url) as replica:
            hub = replica.hub
            async with (
                hub.subscribe(moving) as moving_updates,
                hub.subscribe(staying) as updates,
            ):

                async def both_subscribed() -> bool:
                    counts = [
                        await subscribers(source, c) for c in (moving_channel, staying_channel)
                    ]
                    return counts == [1, 1]

                await until(both_subscribed, "both games listened for on their primary")
                listener = hub.listeners[node_name(source)]
                await commit(replica, moving, 0)
                await commit(replica, staying, 0)
                assert await versions(moving_updates, 1) == [1]
                assert await versions(updates, 1) == [1]

                await asyncio.to_thread(move_slot, cluster, moving_channel, target)
                await commit(replica, moving, 1)  # the replica may not have caught up yet

                async def followed() -> bool:
                    return await subscribers(target, moving_channel) == 1

                await until(followed, "the moved game listened for on its new primary")
                await commit(replica, moving, 2)
                await commit(replica, staying, 1)
                assert await versions(moving_updates, 3) == [2, 3]
                assert await versions(updates, 2) == [2]
                moved_to = hub.listeners[node_name(target)]
                assert list(moved_to.feeds) == [moving_channel.encode()]
                assert hub.listeners[node_name(source)] is listener
                assert list(listener.feeds) == [staying_channel.encode()]
                assert not listener.task.done()
                assert await subscribers(source, staying_channel) == 1

    asyncio.run(scenario())


def test_a_game_placed_on_its_primary_as_its_slot_moves_away_is_listened_for_on_the_new_one(
    cluster: RedisClusterServers, cluster_url: str
) -> None:
    """A new watcher's game is handed to the listener of the primary the replica knows for
    it, and the slot moves away before the listener subscribes there (Redis answers MOVED):
    that game, and no other, goes to the listener of the new primary, and the old listener
    keeps its connection and its other games. Every watcher receives the next update."""

    async def scenario() -> None:
        moving, staying, source, target = two_games(cluster)
        moving_channel, staying_channel = keys.game_channel(moving), keys.game_channel(staying)
        async with replica_losing_no_connection(cluster_url) as replica:
            hub = replica.hub
            await commit(replica, moving, 0)
            await commit(replica, staying, 0)
            async with hub.subscribe(staying) as updates:

                async def subscribed() -> bool:
                    return await subscribers(source, staying_channel) == 1

                await until(subscribed, "the staying game listened for")
                listener = hub.listeners[node_name(source)]
                async with hub.subscribe(moving) as moving_updates:
                    assert hub.feeds[moving].listener is listener
                    # The listener has not sent its SSUBSCRIBE yet: the slot moves now, the
                    # replica's loop held meanwhile (called here, not in a thread).
                    move_slot(cluster, moving_channel, target)

                    async def followed() -> bool:
                        return await subscribers(target, moving_channel) == 1

                    await until(followed, "the moved game listened for on its new primary")
                    await commit(replica, moving, 1)
                    await commit(replica, staying, 1)
                    assert await versions(moving_updates, 2) == [2]
                    assert await versions(updates, 2) == [2]
                    assert hub.feeds[moving].listener is hub.listeners[node_name(target)]
                    assert hub.listeners[node_name(source)] is listener
                    assert list(listener.feeds) == [staying_channel.encode()]
                    assert not listener.task.done()

    asyncio.run(scenario())
