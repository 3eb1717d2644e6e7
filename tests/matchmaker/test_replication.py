"""Commits on a Redis with a replica: answered only once the replica holds them (WAIT on the
commit's own connection), refused as UNAVAILABLE while no replica confirms, and accepted
again once the primary has no replica left; scripts come back after a SCRIPT FLUSH."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from redis.crc import key_slot

from matchmaker import keys
from matchmaker.redis_client import TRANSIENT_ERRORS, standalone_replicas
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Commit, CommitOutcome, Store, Update
from tests.matchmaker.conftest import (
    Client,
    InProcessMatchmaker,
    fast_settings,
    players_of,
    run,
)
from tests.matchmaker.helpers import (
    as_advised,
    captured_logs,
    legal_actions,
    start_game,
    store_client,
)
from tests.servers import RedisClusterServers, RedisServer, start_redis, start_redis_cluster
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

# A commit asks for one replica, so it is answered once one holds it: long before this
# wait would run out (a commit waiting for more replicas than there are would take it all).
# Commits a replica is meant to confirm use it: a short wait can run out on a busy machine.
LONG_WAIT = 20.0


def wait_for(condition: object, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def waits_on(server: RedisServer) -> int:
    """How many WAIT commands `server` has run."""
    client = redis.Redis(port=server.port)
    try:
        return int(client.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
    finally:
        client.close()


def replica_of(primary: RedisServer, directory: Path) -> RedisServer:
    """A replica of `primary`, started and in sync."""
    replica = start_redis(directory, extra=("--replicaof", "127.0.0.1", str(primary.port)))
    check = redis.Redis(port=replica.port)
    wait_for(
        lambda: check.info("replication").get("master_link_status") == "up",
        "the replica did not connect",
    )
    check.close()
    return replica


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[RedisServer, RedisServer]]:
    """A primary and its replica, in sync."""
    primary = start_redis(tmp_path / "primary")
    replica = replica_of(primary, tmp_path / "replica")
    yield primary, replica
    if replica.process.poll() is None:
        os.kill(replica.process.pid, signal.SIGCONT)
    replica.stop()
    primary.stop()


@pytest.fixture
def on_replica(pair: tuple[RedisServer, RedisServer]) -> Iterator[Any]:
    """A client of the pair's replica (what it holds), closed after the test."""
    client = redis.Redis(port=pair[1].port)
    yield client
    client.close()


def hasty_and_patient(client: Any, url: str, replica_wait: float) -> tuple[Store, Store]:
    """Two stores on one client: one that waits `replica_wait` for a replica to confirm a
    commit, and one that waits `LONG_WAIT` (its commits are meant to be confirmed)."""
    settings = Settings(redis_url=url, replica_wait=replica_wait)
    patient = dataclasses.replace(settings, replica_wait=LONG_WAIT)
    return Store(client, Scripts(client), settings), Store(client, Scripts(client), patient)


def change(version: int, key: str = "") -> Commit:
    return Commit(
        game_id="g1",
        expected_version=version,
        fields={"status": "running"},
        update=Update(b"u", side="south"),
        ttl=600,
        idempotency_key=key,
        fingerprint="f" if key else "",
    )


def test_a_commit_is_answered_once_a_replica_holds_it(
    pair: tuple[RedisServer, RedisServer], on_replica: Any
) -> None:
    primary, replica = pair

    async def scenario() -> None:
        client = await store_client(primary.url)
        store, patient = hasty_and_patient(client, primary.url, 0.5)
        assert await store.replication.of(keys.game("g1")) == 1
        assert (await patient.commit(change(0))).outcome == CommitOutcome.OK
        # Answered: the replica has it already (WAIT, on the commit's own connection).
        assert on_replica.hget(keys.game("g1"), "version") == b"1"
        # A primary restarted without its scripts: loaded again, the commit goes through.
        await client.script_flush()
        assert (await patient.commit(change(1))).version == 2
        assert on_replica.hget(keys.game("g1"), "version") == b"2"
        # The replica stops answering: the commit is saved, but not confirmed.
        idem = keys.game_idempotency("g1", "p1", "k1")
        os.kill(replica.process.pid, signal.SIGSTOP)
        with pytest.raises(Refusal) as unconfirmed:
            await store.commit(change(2, idem))
        assert (unconfirmed.value.code, unconfirmed.value.reason) == (
            Code.UNAVAILABLE,
            Reason.STORE_UNAVAILABLE,
        )
        # Told apart from a store that cannot be reached: the change is kept, and the
        # same idempotency key finds it.
        assert unconfirmed.value.message == (
            "the change is saved but no Redis replica has confirmed it yet; "
            "retry with the same idempotency key; retry in 1 s"
        )
        assert unconfirmed.value.retry_after
        # Its client retries with the same key once the replica is back: the first commit.
        os.kill(replica.process.pid, signal.SIGCONT)
        again = await patient.commit(change(2, idem))
        assert (again.outcome, again.version) == (CommitOutcome.DUPLICATE, 3)
        # The replica is gone for good: commits stand as Redis keeps them.
        replica.stop()
        wait_for(
            lambda: redis.Redis(port=primary.port).info("replication")["connected_slaves"] == 0,
            "the primary still counts its replica",
        )
        # (The client still counts the replica: its commit waits in vain, then the client
        # reads the replication again, finds none and tells the operator.)
        with captured_logs() as logs:
            assert (await store.commit(change(3))).version == 4
        assert [
            (entry["game_id"], entry["log_level"])
            for entry in logs
            if entry["event"] == "commit confirmed by no replica: its primary has none"
        ] == [("g1", "warning")]
        await client.aclose()

    run(scenario())


def test_a_retried_commit_is_confirmed_like_the_first(
    pair: tuple[RedisServer, RedisServer], on_replica: Any
) -> None:
    """A retry that finds its commit made (DUPLICATE) is answered only once a replica holds
    that commit: answered at once, a failover could still lose the move it acknowledges."""
    primary, replica = pair

    async def scenario() -> None:
        client = await store_client(primary.url)
        store, patient = hasty_and_patient(client, primary.url, 0.5)
        assert (await patient.commit(change(0))).version == 1
        idem = keys.game_idempotency("g1", "p1", "k1")
        os.kill(replica.process.pid, signal.SIGSTOP)
        for _ in range(2):  # the commit, then its retry: the replica holds neither
            with pytest.raises(Refusal) as unconfirmed:
                await store.commit(change(1, idem))
            assert unconfirmed.value.code == Code.UNAVAILABLE
        os.kill(replica.process.pid, signal.SIGCONT)
        again = await patient.commit(change(1, idem))
        assert (again.outcome, again.version) == (CommitOutcome.DUPLICATE, 2)
        assert on_replica.hget(keys.game("g1"), "version") == b"2"
        await client.aclose()

    run(scenario())


def test_a_submission_sent_again_is_answered_once_a_replica_holds_it(
    pair: tuple[RedisServer, RedisServer],
    engine_address: str,
    engine_channel: grpc.Channel,
    clients: Callable[..., Client],
    on_replica: Any,
) -> None:
    """A player whose move was refused as unconfirmed sends it again with the same
    idempotency key: the answer is the first commit's, but only once a replica holds it.
    Answered from the idempotency record alone, a failover then could lose a move the
    player was told was made."""
    primary, replica = pair
    server = InProcessMatchmaker(fast_settings(primary.url, engine_address, replica_wait=0.5))
    server.start()
    try:
        players = players_of(server.address, clients, "south", "north")
        game = start_game(players, "war")
        engine = engine_pb2_grpc.RulesEngineStub(engine_channel)
        mover = players[game.state.to_act[0]]
        request = mm.SubmitActionsRequest(
            game_id=game.id,
            expected_version=game.version,
            idempotency_key="k1",
            actions=[legal_actions(engine, game.state)[0].action],
        )
        os.kill(replica.process.pid, signal.SIGSTOP)
        for _ in range(2):  # the move, then the same again: the replica holds neither
            with pytest.raises(grpc.RpcError) as unconfirmed:
                mover.SubmitActions(request)
            details = error_details(unconfirmed.value)
            assert (details.code, details.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "STORE_UNAVAILABLE",
            )
            assert "no Redis replica has confirmed it yet" in details.message
        os.kill(replica.process.pid, signal.SIGCONT)
        made = as_advised(mover.SubmitActions, request).game
        assert made.version == game.version + 1
        assert on_replica.hget(keys.game(game.id), "version") == str(made.version).encode()
    finally:
        server.stop()


def test_a_replica_that_joined_since_they_were_counted_confirms_the_next_commit(
    tmp_path: Path,
) -> None:
    """The replicas are counted every few seconds; one that joins between two counts (an
    old primary back as the replica of the one promoted in its place) must not let a
    commit stand unconfirmed: it could be promoted in turn without the commit."""
    primary = start_redis(tmp_path / "primary")
    replica: RedisServer | None = None
    try:

        async def scenario() -> None:
            nonlocal replica
            client = await store_client(primary.url)
            store, patient = hasty_and_patient(client, primary.url, 0.5)
            patient.replication = store.replication  # one matchmaker's count
            store.replication.FRESH = math.inf  # counted once, just before the replica joins
            assert await store.replication.of(keys.game("g1")) == 0
            assert (await store.commit(change(0))).version == 1  # none to confirm it
            replica = replica_of(primary, tmp_path / "replica")
            os.kill(replica.process.pid, signal.SIGSTOP)
            idem = keys.game_idempotency("g1", "p1", "k1")
            with pytest.raises(Refusal) as unconfirmed:
                await store.commit(change(1, idem))
            assert (unconfirmed.value.code, unconfirmed.value.reason) == (
                Code.UNAVAILABLE,
                Reason.STORE_UNAVAILABLE,
            )
            os.kill(replica.process.pid, signal.SIGCONT)
            again = await patient.commit(change(1, idem))
            assert (again.outcome, again.version) == (CommitOutcome.DUPLICATE, 2)
            on_replica = redis.Redis(port=replica.port)
            assert on_replica.hget(keys.game("g1"), "version") == b"2"
            on_replica.close()
            await client.aclose()

        run(scenario())
    finally:
        if replica is not None:
            os.kill(replica.process.pid, signal.SIGCONT)
            replica.stop()
        primary.stop()


def test_a_replica_still_loading_its_first_copy_is_counted(tmp_path: Path) -> None:
    """A replica that has just joined and waits for its first copy (here the primary holds
    the copy back 60 s) will hold every write made meanwhile once it has loaded, and may
    then be promoted: a commit made meanwhile is refused as unconfirmed, not answered."""
    primary = start_redis(
        tmp_path / "primary",
        extra=("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "60"),
    )
    check = redis.Redis(port=primary.port)
    replica: RedisServer | None = None
    try:

        async def scenario() -> None:
            nonlocal replica
            client = await store_client(primary.url)
            store = Store(client, Scripts(client), Settings(redis_url=primary.url))
            store.replication.FRESH = math.inf  # counted once, just before the replica joins
            assert await store.replication.of(keys.game("g1")) == 0
            replica = start_redis(
                tmp_path / "replica", extra=("--replicaof", "127.0.0.1", str(primary.port))
            )
            wait_for(
                lambda: check.info("replication").get("slave0", {}).get("state") == "wait_bgsave",
                "the replica did not ask for its copy",
            )
            with pytest.raises(Refusal) as unconfirmed:
                await store.commit(change(0))
            assert unconfirmed.value.code == Code.UNAVAILABLE
            await client.aclose()

        run(scenario())
    finally:
        check.close()
        if replica is not None:
            replica.stop()
        primary.stop()


def test_a_backup_taking_a_snapshot_is_no_replica(tmp_path: Path) -> None:
    # `redis-cli --rdb` (any backup that reads a snapshot over the replication protocol)
    # connects as a replica that announces no port and acknowledges nothing: counting it
    # made every move wait for it in vain and fail while the backup ran.
    primary = start_redis(tmp_path / "primary")
    taker = socket.create_connection(("127.0.0.1", primary.port))
    try:
        taker.sendall(b"SYNC\r\n")  # as `redis-cli --rdb` does; nothing is read back
        check = redis.Redis(port=primary.port)
        wait_for(lambda: check.info("replication")["connected_slaves"] == 1, "no snapshot taker")
        assert check.info("replication")["slave0"]["port"] == 0
        check.close()

        async def scenario() -> None:
            client = await store_client(primary.url)
            store = Store(client, Scripts(client), Settings(redis_url=primary.url))
            assert await store.replication.of(keys.game("g1")) == 0
            assert (await store.commit(change(0))).outcome == CommitOutcome.OK
            await client.aclose()

        run(scenario())
        assert waits_on(primary) == 0
    finally:
        taker.close()
        primary.stop()


def test_a_replica_counts_once_it_has_said_where_it_listens(
    pair: tuple[RedisServer, RedisServer],
) -> None:
    primary, _replica = pair
    info = redis.Redis(port=primary.port).info("replication")
    assert standalone_replicas(info) == 1 == info["connected_slaves"]
    assert standalone_replicas({"connected_slaves": 1, "slave0": {"port": 0}}) == 0


def test_without_waiting_a_commit_is_answered_at_once(
    pair: tuple[RedisServer, RedisServer],
) -> None:
    primary, replica = pair

    async def scenario() -> None:
        client = await store_client(primary.url)
        settings = dataclasses.replace(Settings(redis_url=primary.url), replica_wait=0.0)
        store = Store(client, Scripts(client), settings)
        os.kill(replica.process.pid, signal.SIGSTOP)
        waits = waits_on(primary)
        assert (await store.commit(change(0))).outcome == CommitOutcome.OK
        assert waits_on(primary) == waits, "the commit waited for the stopped replica"
        await client.aclose()

    run(scenario())


def test_a_due_time_rides_with_its_commit_and_its_confirmation(
    pair: tuple[RedisServer, RedisServer], on_replica: Any
) -> None:
    """A bot's turn hangs on its game's due time: on one Redis it is lowered in the commit's
    own script, so the replica that confirms the commit holds it too; a commit the replica
    does not confirm is refused, its due time saved on the primary all the same."""
    primary, replica = pair

    async def scenario() -> None:
        client = await store_client(primary.url)
        store, patient = hasty_and_patient(client, primary.url, 0.2)
        due_index = keys.due(keys.shard("g1", store.shards))
        await patient.scripts.load()
        waits = waits_on(primary)
        due = dataclasses.replace(change(0), due_ms=1_000)
        assert (await patient.commit(due)).version == 1
        assert waits_on(primary) == waits + 1  # one WAIT: the commit's, with its due time
        assert on_replica.zscore(due_index, "g1") == 1_000
        os.kill(replica.process.pid, signal.SIGSTOP)
        with pytest.raises(Refusal) as unconfirmed:
            await store.commit(dataclasses.replace(change(1), due_ms=500))
        assert unconfirmed.value.code == Code.UNAVAILABLE
        # Saved on the primary all the same: the sweeper finds the game due.
        assert await client.zscore(due_index, "g1") == 500
        await client.aclose()

    run(scenario())


def test_a_commit_waits_for_one_replica_not_the_whole_wait(
    pair: tuple[RedisServer, RedisServer], on_replica: Any
) -> None:
    primary, _ = pair

    async def scenario() -> None:
        client = await store_client(primary.url)
        store = Store(
            client, Scripts(client), Settings(redis_url=primary.url, replica_wait=LONG_WAIT)
        )
        result = await asyncio.wait_for(store.commit(change(0)), LONG_WAIT / 2)
        assert result.outcome == CommitOutcome.OK
        assert on_replica.hget(keys.game("g1"), "version") == b"1"
        await client.aclose()

    run(scenario())


def holders(cluster: RedisClusterServers, key: str) -> int:
    """How many nodes of `cluster` (primaries or replicas) hold the game hash `key`."""
    count = 0
    for node in cluster.nodes:
        client: Any = redis.Redis(port=node.port)  # execute_command is untyped
        try:
            client.execute_command("READONLY")
            count += client.hget(key, "version") == b"1"
        except redis.ResponseError:  # MOVED: a node of another slot
            pass
        finally:
            client.close()
    return count


def slots_with_a_replica(cluster: RedisClusterServers) -> int:
    """How many slot ranges the cluster's slot map lists with a replica (the map a client
    reads lists a replica only once it is in sync)."""
    client: Any = redis.Redis(port=cluster.nodes[0].port)  # execute_command is untyped
    try:
        return sum(len(entry) > 3 for entry in client.execute_command("CLUSTER SLOTS"))
    finally:
        client.close()


def test_a_commit_on_a_cluster_waits_for_a_replica_of_its_primary(tmp_path: Path) -> None:
    """A Redis Cluster whose primaries have a replica each: the commit is sent to the game's
    primary and WAIT after it on the same connection; answered once the replica holds it.
    With replica_wait 0 nothing waits, neither the commit nor the due time it schedules."""
    cluster = start_redis_cluster(tmp_path, primaries=3, replicas=1)
    try:
        wait_for(
            lambda: slots_with_a_replica(cluster) == 3, "the slot map lists no replicas", timeout=60
        )

        async def scenario() -> None:
            client = await store_client(cluster.url)
            settings = Settings(redis_url=cluster.url, replica_wait=LONG_WAIT)
            store = Store(client, Scripts(client), settings)
            assert await store.replication.of(keys.game("g1")) == 1
            result = await asyncio.wait_for(store.commit(change(0)), LONG_WAIT / 2)
            assert (result.outcome, result.version) == (CommitOutcome.OK, 1)
            assert holders(cluster, keys.game("g1")) == 2  # the primary and its replica
            hasty = Store(client, Scripts(client), dataclasses.replace(settings, replica_wait=0))
            waits = sum(waits_on(node) for node in cluster.nodes)
            due = dataclasses.replace(change(0), game_id="g2", due_ms=1_000)
            assert (await hasty.commit(due)).outcome == CommitOutcome.OK
            due_index = keys.due(keys.shard("g2", hasty.shards))
            assert await client.zscore(due_index, "g2") == 1_000
            assert sum(waits_on(node) for node in cluster.nodes) == waits
            await client.aclose()

        run(scenario())
    finally:
        cluster.stop()


def cluster_nodes(port: int) -> dict[str, Any]:
    """CLUSTER NODES as the node on `port` sees it (redis-py's parsed form)."""
    client: Any = redis.Redis(port=port)  # execute_command is untyped
    try:
        nodes: dict[str, Any] = client.execute_command("CLUSTER NODES")
        return nodes
    finally:
        client.close()


def serving(cluster: RedisClusterServers, slot: int, seen_by: RedisServer) -> RedisServer | None:
    """The live primary serving `slot`, as the node `seen_by` sees the cluster."""
    for address, node in cluster_nodes(seen_by.port).items():
        flags = node["flags"].split(",")
        serves = any(int(pair[0]) <= slot <= int(pair[-1]) for pair in node["slots"])
        if serves and "master" in flags and "fail" not in flags:
            return cluster.node_of(int(address.split(":")[1]))
    return None  # none while a failover is under way


def primary_of(cluster: RedisClusterServers, slot: int, seen_by: RedisServer) -> RedisServer:
    """`serving`, there."""
    node = serving(cluster, slot, seen_by)
    assert node is not None, f"no primary serves slot {slot}"
    return node


def failing(cluster: RedisClusterServers, node: RedisServer, seen_by: RedisServer) -> bool:
    """True once `seen_by` has marked `node` as failing."""
    return "fail" in cluster_nodes(seen_by.port)[f"127.0.0.1:{node.port}"]["flags"].split(",")


def restart(cluster: RedisClusterServers, node: RedisServer) -> RedisServer:
    """`node` started again as it was (with its cluster config: it rejoins the cluster)."""
    process = subprocess.Popen(
        node.process.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    again = dataclasses.replace(node, process=process)
    cluster.nodes[cluster.nodes.index(node)] = again
    return again


def test_a_shard_confirms_its_commits_again_once_its_old_primary_rejoins_as_its_replica(
    tmp_path: Path,
) -> None:
    """A primary fails and its replica takes over (no replica of its own: commits stand
    unconfirmed). The old primary comes back as the new one's replica: within the refresh
    period commits wait for it again (WAIT). Then it freezes: commits are refused with the
    retry hint, also once the cluster marks it as failing (it may come back and take
    over). The new primary dies, the frozen one resumes and takes over: every acknowledged
    commit is there."""
    cluster = start_redis_cluster(tmp_path, primaries=3, replicas=1)
    frozen: list[RedisServer] = []
    try:
        wait_for(lambda: slots_with_a_replica(cluster) == 3, "no replicas", timeout=60)
        watcher = cluster.nodes[0]  # the node of the URL: never stopped
        game_id = next(
            game
            for game in (f"g{i}" for i in range(1, 100))
            if primary_of(cluster, key_slot(keys.game(game).encode()), watcher) is not watcher
        )
        slot = key_slot(keys.game(game_id).encode())

        def change_of(version: int) -> Commit:
            return dataclasses.replace(change(version), game_id=game_id)

        async def scenario() -> None:
            client = await store_client(cluster.url)
            settings = Settings(redis_url=cluster.url, replica_wait=LONG_WAIT, retry_hint=0.5)
            patient = Store(client, Scripts(client), settings)
            hasty = Store(client, Scripts(client), dataclasses.replace(settings, replica_wait=1))
            acknowledged = saved = 0

            async def commit() -> None:
                """Commit the game's next version, retrying what a failover refuses (and a
                commit sent before a replica that had just joined was counted: saved, not
                confirmed, to be asked again as its refusal says)."""
                nonlocal acknowledged, saved
                until = time.monotonic() + 60
                while True:
                    try:
                        result = await patient.commit(change_of(saved))
                    except TRANSIENT_ERRORS:
                        pass
                    except Refusal as refused:
                        assert (refused.code, refused.retry_after) == (Code.UNAVAILABLE, 0.5)
                    else:
                        saved = result.version  # a conflict: a refused try was saved after all
                        if result.outcome == CommitOutcome.OK:
                            acknowledged = saved
                            return
                        continue
                    assert time.monotonic() < until, "the failover did not end"
                    await asyncio.sleep(0.1)

            await commit()
            old = primary_of(cluster, slot, watcher)
            old.stop()
            wait_for(lambda: serving(cluster, slot, watcher) not in (None, old), "no failover", 60)
            promoted = primary_of(cluster, slot, watcher)
            await commit()  # the promoted primary has no replica: it stands unconfirmed
            back = restart(cluster, old)
            wait_for(lambda: slots_with_a_replica(cluster) == 3, "it did not rejoin", 60)
            waits = waits_on(promoted)
            until = time.monotonic() + 60
            while waits_on(promoted) == waits:  # the replica count is read again in time
                assert time.monotonic() < until, "no commit waits for the rejoined replica"
                await commit()
            os.kill(back.process.pid, signal.SIGSTOP)
            frozen.append(back)
            for _ in range(2):  # frozen, then marked as failing by the cluster
                with pytest.raises(Refusal) as unconfirmed:
                    await hasty.commit(change_of(saved))
                saved += 1  # saved on the primary, unconfirmed
                assert (unconfirmed.value.code, unconfirmed.value.retry_after) == (
                    Code.UNAVAILABLE,
                    0.5,
                )
                # A change without an idempotency key (as a new game's) is asked again.
                assert unconfirmed.value.message.startswith(
                    "the change is saved but no Redis replica has confirmed it yet; try again;"
                )
                wait_for(lambda: failing(cluster, back, watcher), "never marked failing", 60)
            promoted.stop()
            os.kill(back.process.pid, signal.SIGCONT)
            wait_for(lambda: serving(cluster, slot, watcher) is back, "no second failover", 60)
            record, _, _ = await patient.load(game_id)
            assert record is not None and record.version >= acknowledged
            await client.aclose()

        run(scenario())
    finally:
        for node in frozen:
            if node.process.poll() is None:
                os.kill(node.process.pid, signal.SIGCONT)
        cluster.stop()
