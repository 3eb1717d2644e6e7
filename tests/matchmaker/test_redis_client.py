"""The Redis client's command packer: hiredis's C packer must send exactly what redis-py's
own packer sends (RESP arrays of bulk strings), multi-word command names split in words.
Connecting: a Redis out of reach, or a cluster refusing the client's setup, is refused with
the reason the client or the server gave; a listener's dedicated connection makes one
attempt and sends no health-check PING of its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.asyncio.connection import Connection

from matchmaker.redis_client import RedisSetupError, connect, listener_connection, packed
from tests.matchmaker.helpers import store_client
from tests.servers import free_port, start_redis_cluster

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
