"""Attack at Dawn between two `wargame` processes: secret arrays, commit, automatic reveal.

The engine hashes each array with its salt; the client sends only the digest and keeps the
array and salt in its private identity file. Before the reveal, nothing the matchmaker
stored (every Redis key, every value) contains either player's salt or array.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import redis

from tests.system.cli_support import Cli, Stack, game_id_of, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-attack-at-dawn")]

RED = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK = "a7=A b7=C c7=C e7=G f7=C g7=C h7=A a6=I b6=I c6=I d6=I e6=I f6=I g6=I h6=I"


def redis_dump(url: str) -> bytes:
    """Everything stored in Redis, keys and values, as one blob."""
    client = redis.Redis.from_url(url)
    out = []
    try:
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            out.append(key)
            if kind == b"string":
                out.append(client.get(key) or b"")
            elif kind == b"hash":
                out += [item for pair in client.hgetall(key).items() for item in pair]
            elif kind == b"list":
                out += client.lrange(key, 0, -1)
            elif kind == b"set":
                out += list(client.smembers(key))
            elif kind == b"zset":
                out += list(client.zrange(key, 0, -1))
            elif kind == b"stream":
                for entry in client.xrange(key) or []:
                    fields = entry[1] or {}
                    out += [item for pair in fields.items() for item in pair]
    finally:
        client.close()
    return b"\n".join(value if isinstance(value, bytes) else str(value).encode() for value in out)


def kept_secret(home: Path) -> dict[str, str]:
    path = home / "identity.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secrets = json.loads(path.read_text()).get("secrets", {})
    assert len(secrets) == 1
    return dict(next(iter(secrets.values())))


def test_secret_deployments_are_committed_by_digest_and_revealed(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    red_home, black_home = tmp_path / "red", tmp_path / "black"
    red = run(
        clients,
        ["play", "napoleonic", "--invite", "--side", "red", "-o", "deployment=attack_at_dawn"],
        red_home,
        stack,
    )
    red.expect(r"Invite code: (\S+) ")
    code = red.child.match.group(1)
    game_id = game_id_of(red)
    black = run(clients, ["play", "--join", code], black_home, stack)
    black.expect_text(f"Game {game_id}: you play Black")
    for client in (red, black):
        client.expect_text("Attack at Dawn: set up your army in secret")
        client.expect(r"to place: 2xA 4xC 1xG 8xI")

    red.send("commit")
    red.expect_text("error: place your army first")
    red.send("a2=A b2=C c2=C e2=G")
    red.expect(r"to place: 2xC 1xA 8xI|to place: 1xA 2xC 8xI")
    red.send("clear")
    red.send(RED)
    red.expect_text("to place: nothing")
    red.send("commit")
    red.expect_text("Committed: only the digest was sent")
    red.expect(r"You: commit [0-9a-f]{64}\r?\n")
    black.expect(r"Red: commit [0-9a-f]{64}\r?\n")

    secret = kept_secret(red_home)
    assert secret["array"] == RED and len(secret["salt"]) == 64
    stored = redis_dump(stack.redis.url)
    assert secret["salt"].encode() not in stored
    assert b"a2=A b2=C" not in stored and RED.encode() not in stored

    black.send(BLACK)
    black.expect_text("to place: nothing")
    black.send("commit")
    for client in (red, black):
        client.expect_text("Revealing your array.")
        client.expect_text("Deployment is complete")
    red.expect(r"Red - movement > ")
    stored = redis_dump(stack.redis.url)
    assert secret["salt"].encode() in stored  # revealed now, as the rules say
    assert json.loads((red_home / "identity.json").read_text()).get("secrets") == {}
    red.send("resign!")  # no question asked
    for client in (red, black):
        client.expect(r"Game over: ")
        client.expect(r"rematch or quit > ")
        client.quit()
