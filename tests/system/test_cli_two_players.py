"""Two `wargame` processes playing each other over the matchmaker, and a third watching.

Invites, live moves in both directions, a draw offer declined, "not your turn", and the
game to its end; quick match from the queue, a rated game resigned (after the question),
both rating changes, a rematch offered and accepted, and the leaderboard with its legend.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from cli_client.updates import NOTICE_GRACE_SECONDS
from tests.system.cli_support import WAR_CITADEL, Cli, Stack, echoed, game_id_of, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-two-players")]

HELP_LINE = "board            draw"  # a line of `help`


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
    north.expect_text("South (alice) declines your draw offer: play on.")  # live

    north.send("a7-a6")
    north.expect(r"You: a7-a6")
    for client in (north, south, watcher):
        if client is not north:
            client.expect(r"North: a7-a6")
        client.expect(r"Game over: ")
    # The result sentence says who won once: in its verdict, not again in its detail.
    south.expect(r"you win - (?!South wins)\S")
    north.expect(r"you lose - (?!South wins)\S")
    watcher.expect(r"South wins - (?!South wins)\S")
    assert watcher.wait() == 0  # a spectator's client ends with the game
    for client in (south, north):
        client.expect(r"rematch or quit > ")
        client.quit()
    assert "Rating" not in south.screen()  # a friendly game: no rating changes


def test_quick_match_rated_resigned_rating_changes_leaderboard_and_rematch(
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
    game_id = first.child.match.group(1)
    assert game_id == second.child.match.group(1)
    loser, winner = (first, second) if first.child.match.group(2) == "Red" else (second, first)
    loser.expect(r"(Red|Black) - (movement|deployment)|waiting for")
    # Resigning asks first; anything but yes plays on.
    loser.send("resign")
    loser.expect_text("Resign and lose the game? Type y to confirm; anything else plays on.")
    loser.expect(r"Resign and lose the game\? y/N > ")
    loser.send("n")
    loser.expect_text("Not done: play on.")
    loser.send("resign")
    loser.expect(r"y/N > ")
    loser.send("y")
    for client in (first, second):
        client.expect(r"Game over: ")
        client.expect(r"resign")
    # The rating change of both players, once the matchmaker has settled it.
    names = {first: "dora", second: "eve"}
    loser.expect(
        rf"Rating \(napoleonic\): (you 1500 -> 1[0-4]\d\d \(-\d+\); {names[winner]} 1500 -> "
        rf"1[5-9]\d\d \(\+\d+\)|{names[winner]} 1500 -> 1[5-9]\d\d \(\+\d+\); you 1500 -> "
        rf"1[0-4]\d\d \(-\d+\))",
        timeout=30,
    )
    winner.expect(r"Rating \(napoleonic\): .*you 1500 -> 1[5-9]\d\d \(\+\d+\)", timeout=30)

    # Play again: the winner offers, the loser is told and accepts; sides swapped.
    winner.expect(r"rematch or quit > ")
    winner.send("rematch")
    winner.expect_text("Rematch offered: waiting for your opponent to accept")
    loser.expect(rf"{names[winner]}\) offers a rematch, sides swapped: `rematch` accepts")
    loser.expect(r"rematch offered - rematch or quit > ")
    loser.send("rematch")
    loser.expect(r"Game (\S+): you play Black\.")  # Red before
    rematch_id = loser.child.match.group(1)
    assert rematch_id != game_id
    winner.expect(rf"{names[loser]}")  # the opponent's seat, now taken
    winner.expect(r"Red - (movement|deployment)|waiting for Black")
    for client in (first, second):
        client.send("quit")
        client.expect_text(f"you left game {rematch_id}; it goes on")
        assert client.wait() == 0

    board = run(clients, ["leaderboard", "napoleonic"], tmp_path / "dora", stack)
    board.expect_text("The best-rated players of napoleonic")
    board.expect(r"rank\s+player\s+rating\s+RD\s+games")
    board.expect(rf"1\s+{names[winner]}\s+1[5-9]\d\d\?\s+\d+\s+1\r?\n")
    board.expect(rf"2\s+{names[loser]}\s+1[0-4]\d\d\?\s+\d+\s+1\r?\n")
    board.expect_text("rating  Glicko-2 estimate of playing strength; everyone starts at 1500")
    board.expect(r"RD\s+rating deviation, how sure the rating is")
    board.expect(r"games\s+rated games finished")
    board.expect(r"\?\s+provisional: RD above 110")
    assert board.wait() == 0


def test_a_quick_match_pairing_is_no_disconnection_of_either_player(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # Paired players leave the queue's stream for the game's: neither is told that the
    # other disconnected, left on its turn or reconnected (the matchmaker may look before
    # a stream opens), however long the one to wait looks (its wait, timed on the status
    # line, past the grace a disconnection is held for).
    players = [
        run(clients, ["play", "war", "--queue", "--name", name], tmp_path / name, stack)
        for name in ("fay", "gus")
    ]
    for cli in players:
        cli.expect(r"Game (\S+): you play (South|North)", timeout=30)
    waiting = next(cli for cli in players if cli.child.match.group(2) == "North")
    past_grace = math.ceil(NOTICE_GRACE_SECONDS) + 2
    waiting.wait_screen(
        lambda c: any(
            int(found.group(1)) >= past_grace
            for found in re.finditer(r"waiting for South \(\w+\) 0:(\d\d)", c.text())
        )
    )
    for cli in players:
        before = cli.screen().count(HELP_LINE)
        cli.send("help")  # all the loop had to say before it is on the screen
        echoed(cli, HELP_LINE, before)
        seen = cli.screen()
        assert "disconnected" not in seen and "reconnected" not in seen, seen[-3000:]
    for cli in players:
        cli.quit()


def test_leaving_the_queue_with_ctrl_c(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    alone = run(clients, ["play", "battle", "--queue"], tmp_path, stack)
    alone.expect(r"looking for an opponent for battle")
    alone.expect(r"1 waiting, place 1")
    alone.interrupt()
    alone.expect_text("You left the queue for battle: no game was started.")
    assert alone.wait() == 130, alone.screen()  # the screen says why, if it does not
