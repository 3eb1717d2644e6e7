"""The Redis client's command packer: hiredis's C packer must send exactly what redis-py's
own packer sends (RESP arrays of bulk strings), multi-word command names split in words."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio.connection import Connection

from matchmaker.redis_client import packed

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
