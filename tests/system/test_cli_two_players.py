"""Two `wargame` processes playing each other over the matchmaker, and a third watching.

Invites, live moves in both directions, a draw offer declined, "not your turn", and the
game to its end; quick match from the queue with a rated result on the leaderboard.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system.cli_support import WAR_CITADEL, Cli, Stack, clients, game_id_of, run, stack

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-two-players")]
__all__ = ["clients", "stack"]


def test_an_invited_game_between_two_clients_to_the_end(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "war", "--invite", "--side", "south", "--setup", WAR_CITADEL]
    south = run(clients, [*args, "--name", "alice"], tmp_path / "alice", stack)
    south.expect(r"Invite code: (\S+) ")
    code = south.child.match.group(1)
    game_id = game_id_of(south)
    south.expect(r"waiting for an opponent")
    south.send("Mj1xj10")
    south.expect_text("error: the game has not started: waiting for an opponent")

    north = run(clients, ["play", "--join", code, "--name", "bob"], tmp_path / "bob", stack)
    north.expect_text(f"Game {game_id}: you play North")
    north.expect(r"waiting for South \(alice\)")
    watcher = run(clients, ["watch", game_id], tmp_path / "carol", stack)
    watcher.expect(r"watching - South \(alice\) to act")

    south.expect(r"South > ")
    assert re.search(r"North\s+bob", south.screen())  # the opponent's seat, seen live
    south.send("Mj1xj10")
    south.expect_text("You: Mj1xj10")

    north.expect_text("South: Mj1xj10")  # live, while waiting
    north.expect_text("enters North's Citadel j10")
    watcher.expect_text("South: Mj1xj10")
    north.expect(r"North > ")

    south.send("Ka1-a2")
    south.expect(r"error: not your turn: North \(bob\) to act\r?\n")

    north.send("draw")
    north.expect_text("Your draw offer stands.")
    south.expect_text("North offers a draw - type `accept` or `decline`.")
    south.send("decline")
    south.expect_text("You decline the draw.")
    north.expect(r"declin")  # live: the answer to the offer

    north.send("a7-a6")
    north.expect(r"You: a7-a6")
    for client in (north, south, watcher):
        if client is not north:
            client.expect(r"North: a7-a6")
        client.expect(r"Game over: ")
    south.expect(r"you win - south wins")
    north.expect(r"you lose - south wins")
    watcher.expect(r"South wins - south wins")
    for client in (south, north, watcher):
        assert client.wait() == 0


def test_quick_match_from_the_queue_rated_and_on_the_leaderboard(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    first = run(
        clients,
        ["play", "napoleonic", "--queue", "--rated", "--name", "dora"],
        tmp_path / "dora",
        stack,
    )
    first.expect(r"looking for an opponent for napoleonic")
    second = run(
        clients,
        ["play", "napoleonic", "--queue", "--rated", "--name", "eve"],
        tmp_path / "eve",
        stack,
    )
    second.expect(r"Game (\S+): you play (Red|Black)", timeout=30)
    first.expect(r"Game (\S+): you play (Red|Black)", timeout=30)
    assert first.child.match.group(1) == second.child.match.group(1)
    loser = first if first.child.match.group(2) == "Red" else second
    loser.expect(r"(Red|Black) - (movement|deployment)|waiting for")
    loser.send("resign")
    for client in (first, second):
        client.expect(r"Game over: ")
        client.expect(r"resign")
        assert client.wait() == 0
    board = run(clients, ["leaderboard", "napoleonic"], tmp_path / "dora", stack)
    board.expect(r"rank\s+player\s+rating")
    board.expect(r"1\s+(dora|eve)\s+\d+")
    board.expect(r"2\s+(dora|eve)\s+\d+")
    assert board.wait() == 0


def test_leaving_the_queue_with_ctrl_c(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    alone = run(clients, ["play", "battle", "--queue"], tmp_path, stack)
    alone.expect(r"looking for an opponent for battle")
    alone.expect(r"1 waiting, place 1")
    alone.interrupt()
    assert alone.wait() == 130
