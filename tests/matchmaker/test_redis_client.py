"""The Redis client's command packer: hiredis's C packer must send exactly what redis-py's
own packer sends (RESP arrays of bulk strings), multi-word command names split in words.
Connecting: a Redis out of reach, or a cluster refusing the client's setup, is refused with
the reason the client or the server gave; one too slow to answer at start-up is asked again;
a listener's dedicated connection makes one attempt and sends no health-check PING of its
own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.asyncio.connection import Connection
from redis.exceptions import RedisClusterException

from matchmaker import keys
from matchmaker.record import GameStatus
from matchmaker.redis_client import (
    TRANSIENT_ERRORS,
    BoundedCluster,
    RedisSetupError,
    connect,
    listener_connection,
    packed,
)
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Store
from tests.matchmaker.conftest import flush_cluster, run
from tests.matchmaker.helpers import store_client
from tests.servers import RedisClusterServers, RedisServer, free_port, start_redis_cluster

COMMANDS: list[tuple[Any, ...]] = [
    ("SET", "k", "v"),
    (b"SET", b"k", b"v", "EX", 60),
    ("HSET", "h", "f", 1.5, "g", b"\x00\xff"),
    ("CONFIG GET", "maxmemory"),
    (b"CONFIG GET", "maxmemory"),
    (b"CLIENT SETNAME", "replica-1"),
    ("EVALSHA", "0" * 40, 2, "a", "b", "x"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: repr(args[0]))
def test_commands_are_packed_as_redis_py_packs_them(args: tuple[Any, ...]) -> None:
    ours = packed(Connection)()
    reference = Connection()
    assert b"".join(ours.pack_command(*args)) == b"".join(reference.pack_command(*args))


@pytest.mark.parametrize("name", ["CONFIG GET", b"CONFIG GET"])
def test_a_command_name_of_two_words_goes_as_two_arguments_before_the_rest(
    name: str | bytes,
) -> None:
    sent = b"".join(packed(Connection)().pack_command(name, "maxmemory"))
    assert sent == b"*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$9\r\nmaxmemory\r\n"


# -- connecting, and the listeners' dedicated connections ------------------------------------


def test_commands_beyond_the_connections_are_served_first_come_first_served(
    redis_url: str,
) -> None:
    """With every connection busy, a released connection goes to the command that has
    waited longest, not to one that asks just then: the holder of a pool of one that asks
    again right after its command goes to the back of the line."""

    async def scenario() -> list[str]:
        client = await connect(redis_url, socket_timeout=5.0, connections=1)
        other = await connect(redis_url, socket_timeout=5.0, connections=1)
        served: list[str] = []

        async def holder() -> None:
            await client.blpop(["fair:go"], timeout=30)  # holds the one connection
            served.append("holder")
            await client.get("fair:holder")  # asks again at once
            served.append("holder")

        async def command(name: str) -> None:
            await client.get("fair:" + name)
            served.append(name)

        try:
            held = asyncio.create_task(holder())
            while (await other.info("clients"))["blocked_clients"] < 1:
                await asyncio.sleep(0.01)  # until the BLPOP holds the one connection
            waiting = [asyncio.create_task(command(name)) for name in ("b", "c", "d")]
            for _ in range(10):  # each waiter gets in line (no I/O before it waits)
                await asyncio.sleep(0)
            assert served == []
            await other.lpush("fair:go", "1")
            await asyncio.gather(held, *waiting)
        finally:
            await client.aclose()
            await other.aclose()
        return served

    # redis-py's own pool handed the connection straight back: holder, holder, b, c, d.
    assert run(scenario()) == ["holder", "b", "c", "d", "holder"]


@pytest.mark.integration
def test_a_redis_out_of_reach_is_refused_with_the_clients_reason() -> None:
    """The setup error carries what the Redis client said (where it failed to connect and
    why), not just the name of the error's class."""
    port = free_port()

    async def scenario() -> None:
        with pytest.raises(RedisSetupError) as refused:
            await connect(f"redis://127.0.0.1:{port}/0", socket_timeout=5.0, connections=1)
        assert f"connecting to 127.0.0.1:{port}" in str(refused.value)

    asyncio.run(scenario())


@pytest.mark.integration
def test_a_listeners_connection_makes_one_attempt_and_never_pings_by_itself(
    redis_url: str,
) -> None:
    """A listener reconnects on its own terms (after re-homing its channels, with its own
    pause), so its dedicated connection neither retries a failed command or connect nor
    slips a health-check PING between the pushed messages."""

    async def scenario() -> None:
        client = await store_client(redis_url)
        try:
            name, factory = listener_connection(client, "wg:game:{g1}:stream")
            connection = factory()
            assert name == "redis"
            assert connection.retry.get_retries() == 0
            assert connection.health_check_interval == 0
            await connection.connect()  # type: ignore[no-untyped-call]
            await connection.send_command("PING")
            assert await connection.read_response() == b"PONG"
            await connection.disconnect()
        finally:
            await client.aclose()

    asyncio.run(scenario())


@pytest.mark.integration
def test_a_cluster_that_refuses_the_clients_setup_is_refused_with_the_servers_reason(
    tmp_path: Path,
) -> None:
    """A Redis Cluster whose user may not run COMMAND (which the cluster client reads at
    setup): the setup error carries the server's reason (NOPERM's text), what an operator
    needs to fix the user's rights, not just the name of the error's class."""
    cluster = start_redis_cluster(tmp_path, primaries=3)
    try:
        for node in cluster.nodes:
            admin: Any = redis.Redis(port=node.port)  # execute_command is untyped
            admin.execute_command("ACL", "SETUSER", "default", "-command")
            admin.close()

        async def scenario() -> None:
            with pytest.raises(RedisSetupError) as refused:
                await connect(cluster.url, socket_timeout=5.0, connections=1)
            assert "no permissions to run the 'command' command" in str(refused.value)

        asyncio.run(scenario())
    finally:
        cluster.stop()


class Relay:
    """A relay to the Redis on `port` that keeps its `silent`-th connection silent (accepted,
    never answered: a Redis too busy to answer) and passes the others through."""

    def __init__(self, port: int, silent: int) -> None:
        self.port = port
        self.silent = silent
        self.accepted = 0
        self._held: list[asyncio.StreamWriter] = []

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[str]:
        """Relaying while inside: its redis:// URL."""
        server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        try:
            yield f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"
        finally:
            server.close()
            for writer in self._held:
                writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.accepted == self.silent:
            self._held.append(writer)
            return
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def _connected_through(relay: Relay) -> None:
    """Connect through `relay` (answers within 0.5 s) and be answered."""
    async with relay.serving() as url:
        client = await connect(url, socket_timeout=0.5, connections=2)
        try:
            assert await client.ping()
        finally:
            await client.aclose()


@pytest.mark.integration
def test_a_redis_that_does_not_answer_the_first_question_in_time_is_asked_again(
    redis_server: RedisServer,
) -> None:
    """At start-up a Redis that does not answer in time (a busy machine, a Redis stalled
    by its fork) is asked again: the probe's first connection, which reads what the Redis
    is, stays silent, and the client starts on its second try."""
    relay = Relay(redis_server.port, silent=1)
    asyncio.run(_connected_through(relay))
    assert relay.accepted >= 3  # the silent probe, the second probe, the pool's connection


@pytest.mark.integration
def test_a_cluster_that_does_not_answer_a_first_connection_in_time_is_asked_again(
    redis_cluster: RedisClusterServers,
) -> None:
    """The same for a cluster node: the cluster client's first connection (the one after
    the probe's) stays silent, and the client starts on its second try."""
    relay = Relay(redis_cluster.nodes[0].port, silent=2)  # the node of its URL
    asyncio.run(_connected_through(relay))
    assert relay.accepted >= 3  # the probe's, the silent one, the second try


# -- transactions on a cluster, through a failover --------------------------------------------


def primary_ports(port: int) -> set[int]:
    """The ports of the cluster's live primaries, as the node on `port` sees them."""
    client: Any = redis.Redis(port=port)  # execute_command is untyped
    try:
        nodes = client.execute_command("CLUSTER NODES")
    finally:
        client.close()
    return {
        int(address.split(":")[1])
        for address, node in nodes.items()
        if "master" in node["flags"] and "fail" not in node["flags"] and node["slots"]
    }


def replica_ports(port: int, primary: int) -> list[int]:
    """The ports of the replicas of the primary on `primary`, as the node on `port` sees them."""
    client: Any = redis.Redis(port=port)  # execute_command is untyped
    try:
        nodes = client.execute_command("CLUSTER NODES")
    finally:
        client.close()
    ports = {address: int(address.split(":")[1]) for address in nodes}
    ids = {node["node_id"] for address, node in nodes.items() if ports[address] == primary}
    return [ports[address] for address, node in nodes.items() if node["master_id"] in ids]


def take_over(port: int, allowed: bool) -> None:
    """Let the replica on `port` take over its failed primary, or keep it from doing so."""
    client = redis.Redis(port=port)
    try:
        client.config_set("cluster-replica-no-failover", "no" if allowed else "yes")
    finally:
        client.close()


def slots_with_a_replica(port: int) -> int:
    """How many slot ranges the slot map lists with a replica (one in sync)."""
    client: Any = redis.Redis(port=port)  # execute_command is untyped
    try:
        return sum(len(entry) > 3 for entry in client.execute_command("CLUSTER SLOTS"))
    finally:
        client.close()


@pytest.mark.integration
@pytest.mark.timeout(900)  # a cluster's start and failover: minutes at load 35
def test_a_transaction_through_a_failover_stays_in_the_servers_event_loop(
    tmp_path: Path,
) -> None:
    """redis-py's own cluster transactions queue each command through `asyncio.run` in a
    thread; after a primary fails, that second event loop re-initialises the client and
    meets its locks and connections (RuntimeError: "bound to a different event loop",
    answered INTERNAL). Ours run in the caller's loop: every browse-list write and every
    command beside them through the failover succeeds or meets a transient error
    (answered UNAVAILABLE with a retry hint), and the writes that succeeded are kept."""
    cluster = start_redis_cluster(tmp_path, primaries=3, replicas=1)
    try:
        first = cluster.nodes[0].port
        deadline = time.monotonic() + 60
        while slots_with_a_replica(first) < 3:
            assert time.monotonic() < deadline, "the replicas did not join"
            time.sleep(0.05)

        async def scenario() -> None:
            client = await store_client(cluster.url)
            store = Store(client, Scripts(client), Settings(redis_url=cluster.url, replica_wait=0))
            games = [f"g{i}" for i in range(40)]
            victim = next(port for port in primary_ports(first) if port != first)
            standbys = replica_ports(first, victim)
            for port in standbys:  # until a command has met the lost primary (below)
                take_over(port, allowed=False)
            cluster.node_of(victim).stop()
            outcomes: dict[str, int] = {}
            added: set[str] = set()

            async def add(game_id: str) -> None:
                try:
                    await store.list_add(GameStatus.OPEN, "war", game_id, 1)
                    added.add(game_id)
                    outcome = "ok"
                except TRANSIENT_ERRORS:
                    outcome = "transient"
                except Exception as error:  # the failure this test is about
                    outcome = f"{type(error).__name__}: {error}"
                outcomes[outcome] = outcomes.get(outcome, 0) + 1

            async def other(game_id: str) -> None:
                try:
                    await client.hset(keys.game(game_id), "seen", 1)
                    outcome = "ok"
                except TRANSIENT_ERRORS:
                    outcome = "transient"
                except Exception as error:
                    outcome = f"{type(error).__name__}: {error}"
                outcomes[outcome] = outcomes.get(outcome, 0) + 1

            async def a_round() -> None:
                added.clear()
                await asyncio.gather(*(add(g) for g in games), *(other(g) for g in games))
                assert set(outcomes) <= {"ok", "transient"}, outcomes
                await asyncio.sleep(0.05)

            # Commands meet the lost primary: no replica takes over until one has (on a busy
            # machine the take-over could otherwise come before the first command).
            deadline = time.monotonic() + 300
            while not outcomes.get("transient"):
                assert time.monotonic() < deadline, f"the lost primary was never met: {outcomes}"
                await a_round()
            for port in standbys:
                take_over(port, allowed=True)
            # Until the replica is promoted and every game's writes go through again.
            deadline = time.monotonic() + 300
            while len(primary_ports(first)) < 3 or len(added) < len(games):
                assert time.monotonic() < deadline, f"no recovery from the failover: {outcomes}"
                await a_round()
            rows = await store.list_page([GameStatus.OPEN], ["war"], 0, len(games))
            assert {row[2] for row in rows} == set(games)
            await client.aclose()

        run(scenario())
    finally:
        cluster.stop()


@pytest.mark.integration
def test_a_transaction_on_a_cluster_runs_its_commands_in_order_on_one_slot(
    redis_cluster: RedisClusterServers,
) -> None:
    async def scenario() -> None:
        flush_cluster(redis_cluster)
        client = await store_client(redis_cluster.url)
        pipe = client.pipeline(transaction=True)
        pipe.zadd("z{t}", {"a": 1, "b": 2, "c": 3})
        pipe.zremrangebyrank("z{t}", 0, -3)
        pipe.set("s{t}", "v", ex=60)
        pipe.get("missing{t}")
        assert await pipe.execute() == [3, 1, b"OK", None]
        assert await client.zrange("z{t}", 0, -1) == [b"b", b"c"]
        assert 0 < await client.ttl("s{t}") <= 60
        across = client.pipeline(transaction=True)
        across.set("a{one}", 1)
        across.set("a{two}", 1)
        with pytest.raises(RedisClusterException, match="one slot"):
            await across.execute()
        assert await client.exists("a{one}", "a{two}") == 0
        await client.aclose()

    run(scenario())


@pytest.mark.integration
def test_a_script_call_on_a_cluster_finds_its_primary_by_its_first_key_alone(
    redis_cluster: RedisClusterServers,
) -> None:
    """A commit names five keys of one slot: the client works out one slot per call (redis-py's
    own path hashed every key, and more, per call), and the script runs on that slot's
    primary with every key it was given."""

    async def scenario() -> None:
        flush_cluster(redis_cluster)
        client = await store_client(redis_cluster.url)
        assert isinstance(client, BoundedCluster)
        hashed: list[Any] = []
        keyslot = client.keyslot

        def counted(key: Any) -> int:
            hashed.append(key)
            return keyslot(key)

        client.keyslot = counted  # type: ignore[method-assign]
        names = [f"{{g}}:{part}" for part in ("game", "actions", "stream", "idem", "due")]
        script = "return {#KEYS, redis.call('SET', KEYS[5], ARGV[1])}"
        for round_ in range(3):
            assert await client.eval(script, len(names), *names, round_) == [5, b"OK"]
        assert hashed == [names[0]] * 3
        client.keyslot = keyslot  # type: ignore[method-assign]
        assert await client.get(names[4]) == b"2"
        await client.aclose()

    run(scenario())
