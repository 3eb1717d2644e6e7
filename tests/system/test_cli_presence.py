"""Presence in a friendly game between two clients: thinking is not leaving.

Time is moved by configuration: this module's matchmaker forfeits a side to act that has
left `ABANDON_AFTER` seconds after warning it (instead of ten minutes), and notices within
about a second that a player's streams have ended. With the client open, a player thinks
for twelve times that (the issue's twelve-minute think against a ten-minute limit, and
more) and is not abandoned. A player who closes the client is announced to the opponent
("disconnected", then "reconnected" when it comes back); one who closes it on its turn is
warned with the time left, and then loses as abandoned, all shown in both displays.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from matchmaker import keys
from matchmaker.settings import Settings
from tests.servers import ServiceProcess
from tests.system.cli_support import Cli, Stack, game_id_of, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-presence")]

ABANDON_AFTER = 1.0
# A presence lives 3 s (renewed every 0.2 s): a busy machine may hold a renewal up for more
# than a second, and a present player must never seem to have left.
PRESENCE = [
    "--abandon-after", str(ABANDON_AFTER), "--presence-interval", "0.2", "--presence-ttl", "3",
    "--presence-check", "0.2",
]  # fmt: skip
THINK = 6 * ABANDON_AFTER  # twice a presence's life: renewed all along


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, engine_process: ServiceProcess
) -> Iterator[Stack]:
    """Redis and a matchmaker that warns and forfeits players who left within seconds."""
    made = Stack(tmp_path_factory.mktemp("cli-presence"), engine_process.address, PRESENCE)
    yield made
    made.stop()


def redis_ms(url: str) -> int:
    """Redis's clock, in ms (the matchmaker's deadlines are read from it)."""
    client = redis.Redis.from_url(url)
    try:
        seconds, micros = client.time()
    finally:
        client.close()
    return int(seconds) * 1000 + int(micros) // 1000


def swept_after(url: str, game_id: str, moment_ms: int) -> bool:
    """Whether the matchmaker's sweeper has looked at the game's presence after `moment_ms`
    (each look schedules the next one `--presence-check` later)."""
    client = redis.Redis.from_url(url)
    try:
        index = keys.game_due(game_id) or keys.due(keys.shard(game_id, Settings().index_shards))
        due = client.zscore(index, game_id)
    finally:
        client.close()
    return due is not None and due > moment_ms


def full_screen(clients: list[Cli], args: list[str], home: Path, stack: Stack) -> Cli:
    """A client in the full-screen view (Unicode), whose screen is read as a person sees it."""
    return run(clients, args, home, stack, ascii_only=False, size=(40, 130))


def invited_war(clients: list[Cli], home: Path, stack: Stack) -> tuple[Cli, Cli, str]:
    """Alice's friendly game of War (she is South, to act), Bob seated by her invite code:
    both clients full-screen, and the game's id."""
    args = ["play", "war", "--invite", "--side", "south", "--name", "alice"]
    alice = full_screen(clients, args, home / "alice", stack)
    code = alice.wait_screen(r"Invite code: (\S+) ")
    assert code is not None
    game_id = game_id_of(alice)
    bob = full_screen(
        clients, ["play", "--join", code.group(1), "--name", "bob"], home / "bob", stack
    )
    bob.wait_screen(r"waiting for South \(alice\)")
    alice.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    return alice, bob, game_id


def test_a_long_think_with_the_client_open_is_not_abandonment(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    alice, bob, game_id = invited_war(clients, tmp_path, stack)

    # Alice thinks, the client open, for six times the abandonment delay: the sweeper
    # looks at who is present many times meanwhile, and she is still there.
    start = redis_ms(stack.redis.url)
    deadline = time.monotonic() + THINK + 30
    while not swept_after(stack.redis.url, game_id, start + int(THINK * 1000)):
        assert time.monotonic() < deadline, alice.text() + bob.text()  # (the game ended?)
        time.sleep(0.2)
    alice.send("e3-e4")
    bob.wait_screen(r"South: e3-e4")
    assert "South (alice) disconnected" not in bob.screen()
    assert not re.search(r"South\s+alice\s+away", bob.screen())  # the side panel
    assert "abandoned" not in bob.screen() and "abandoned" not in alice.screen()

    # Alice closes the client while Bob is to move: Bob sees her leave, and come back.
    bob.wait_screen(lambda c: c.rows()[-1].startswith("North ›"))
    alice.close()
    bob.wait_screen(r"South \(alice\) disconnected\.")
    bob.wait_screen(r"South\s+alice\s+away")  # the side panel
    assert "has left on their turn" not in bob.text()  # not her turn: no warning
    alice = full_screen(clients, ["resume", game_id], tmp_path / "alice", stack)
    alice.wait_screen(r"Resuming game")
    bob.wait_screen(r"South \(alice\) reconnected\.")
    bob.wait_screen(lambda c: "away" not in c.text())

    # Bob moves; Alice closes the client on her turn: warned with the time left, then out.
    bob.send("e8-e7")
    alice.wait_screen(r"North: e8-e7")
    alice.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    alice.close()
    bob.wait_screen(r"South \(alice\) disconnected\.")
    bob.wait_screen(
        r"South \(alice\) has left on their turn: they lose as abandoned in 0:0[01] \(at "
        r"\d\d:\d\d:\d\d\) unless they come back\."
    )
    bob.wait_screen(r"Game over: you win — \S.*abandon")
    bob.wait_screen(lambda c: c.rows()[-1].startswith("rematch or quit ›"))
    bob.quit()


def presence_lapsed(url: str, game_id: str) -> bool:
    """Whether every watcher field of the game's presence hash has lapsed (Redis time)."""
    client = redis.Redis.from_url(url)
    try:
        untils = [int(v) for v in client.hgetall(keys.game_presence(game_id)).values()]
    finally:
        client.close()
    return all(until < redis_ms(url) for until in untils)


@pytest.fixture
def restarting(tmp_path: Path, engine_process: ServiceProcess) -> Iterator[Stack]:
    """This module's matchmaker, but a presence lives 8 s: the time a restarted
    matchmaker gives the clients of its predecessor to come back (a busy machine may take a
    few seconds to start it and to reconnect them)."""
    changes = [*PRESENCE[:4], "--presence-ttl", "8", *PRESENCE[6:]]
    made = Stack(tmp_path / "restarting", engine_process.address, changes)
    yield made
    made.stop()


@pytest.mark.timeout(900)  # at load 35, a restarted matchmaker's sweeper took over 60 s
def test_a_matchmaker_restart_is_not_the_players_leaving(
    restarting: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # The matchmaker is down longer than a presence lives (a crash, then a slow restart):
    # when it is back, both clients reconnect, and nobody is announced as gone, warned or
    # abandoned; the game goes on.
    stack = restarting
    alice, bob, game_id = invited_war(clients, tmp_path, stack)
    assert stack.matchmaker is not None
    stack.matchmaker.kill()
    alice.wait_screen(r"lost connection to the matchmaker")
    deadline = time.monotonic() + 300
    while not presence_lapsed(stack.redis.url, game_id):
        assert time.monotonic() < deadline, "the presence never lapsed"
        time.sleep(0.2)
    stack.start_matchmaker()
    for cli in (alice, bob):
        cli.wait_screen(r"reconnected to the matchmaker")
    # Looked at by the new matchmaker's sweeper well after both came back (its due index
    # has the game one `--presence-check` after each look).
    since = redis_ms(stack.redis.url)
    deadline = time.monotonic() + 300
    while not swept_after(stack.redis.url, game_id, since + 2000):
        assert time.monotonic() < deadline, alice.text() + bob.text()  # (the game ended?)
        time.sleep(0.2)
    alice.send("e3-e4")
    bob.wait_screen(r"South: e3-e4")
    for cli in (alice, bob):
        screen = cli.text()
        assert "has left" not in screen and "disconnected" not in screen, screen
        assert "Game over" not in screen and "abandon" not in screen.split("reconnected to")[1]
    bob.send("e8-e7")
    alice.wait_screen(r"North: e8-e7")
