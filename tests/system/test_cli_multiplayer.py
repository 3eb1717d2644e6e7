"""A Napoleonic Chess battle of four through `wargame` in real pseudo-terminals:
`--scenario` and `--seat`, bots in chosen seats, the lobby's free seats, and the side panel
with every player, its alliance, who is awaited and who is out, to the end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system.cli_support import Cli, Player, Stack, game_id_of, run
from wargame.v1 import matchmaker_pb2

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-multiplayer")]

BATTLE = ["napoleonic", "--scenario", "grand_battle_2v2", "--plain"]


def test_two_people_and_two_bots_by_scenario_and_seat(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    red = run(
        clients,
        [
            "play",
            *BATTLE,
            "--seat",
            "red",
            "--invite",
            "--bot-seats",
            "black,green",
            "--name",
            "alice",
        ],
        tmp_path / "alice",
        stack,
    )
    red.expect(r"Waiting for players for the free seats Blue\. Invite code: (\S+) ")
    code = red.child.match.group(1)
    game_id = game_id_of(red)
    red.expect_text(f"wargame play --join {code} --seat SIDE")

    blue = run(
        clients,
        ["play", "--join", code, "--seat", "blue", "--plain", "--name", "bob"],
        tmp_path / "bob",
        stack,
    )
    blue.expect_text(
        f"Game {game_id}: you play Blue with Red; the bot plays Black, Green at level 1 of 5."
    )
    # Every player with its alliance; red is awaited.
    blue.expect(r"Red\s+alice\s+<\s+south\s+awaited")
    blue.expect(r"Black\s+bot, level \d\s+north")
    blue.expect(r"Blue\s+bob \(you\)\s+south")
    blue.expect(r"Green\s+bot, level \d\s+north")

    red.expect(r"Red[^\n]*> ")
    red.send("resign!")  # red surrenders alone: out, its ally plays on
    red.expect(r"Red\s+alice \(you\)\s+south\s+out")
    blue.expect(r"Red\s+alice\s+south\s+out")
    player = Player(stack, tmp_path / "bob")
    try:
        view = player.game(game_id)
        assert view.status == matchmaker_pb2.GAME_STATUS_RUNNING
        blue.expect(r"Blue[^\n]*> ")  # after black's whole turn (a bot, niced: a minute at load 50)
        blue.send("resign!")
        for client in (blue, red):
            client.expect(r"Game over: ")
        blue.expect(r"north")
        view = player.game(game_id)
        assert view.status == matchmaker_pb2.GAME_STATUS_FINISHED
        assert set(view.outcome.winners) == {"black", "green"}
    finally:
        player.close()
    for client in (blue, red):
        client.expect(r"quit > ")
        client.quit()


def test_the_lobby_shows_free_seats(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    host = run(
        clients,
        [
            "play",
            *BATTLE,
            "--seat",
            "black",
            "--vs",
            "human",
            "--bot-seats",
            "green",
            "--name",
            "carol",
        ],
        tmp_path / "carol",
        stack,
    )
    host.expect(r"Waiting for players for the free seats Red, Blue")
    game_id = game_id_of(host)
    lobby = run(clients, ["lobby", "napoleonic"], tmp_path / "dave", stack)
    lobby.expect_text(f"{game_id}  napoleonic, 4 seats, 2 free")
    assert lobby.wait() == 0
    screen = lobby.screen()
    assert re.search(r"red\s+free", screen) and re.search(r"blue\s+free", screen), screen
    assert re.search(r"black\s+carol", screen) and re.search(r"green\s+bot", screen), screen
    assert f"take a seat: wargame play --join {game_id} --seat red" in screen
    joiner = run(
        clients, ["play", "--join", game_id, "--seat", "blue", "--plain"], tmp_path / "erin", stack
    )
    joiner.expect_text(f"Game {game_id}: you play Blue")
    again = run(clients, ["lobby", "napoleonic"], tmp_path / "dave", stack)
    again.expect_text(f"{game_id}  napoleonic, 4 seats, 1 free")
    assert again.wait() == 0


def test_the_scenarios_with_their_players(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    games = run(clients, ["games", "napoleonic"], tmp_path / "frank", stack)
    games.expect_text("grand_battle_2v2: red, blue (south) against black, green (north)")
    assert games.wait() == 0


def rank_labels(cli: Cli) -> list[str]:
    """The rank numbers down the board's left edge, top to bottom, as the screen shows them."""
    return [match.group(1) for row in cli.rows() if (match := re.match(r"\s?(\d{1,2}) ", row))]


NO_COLOUR_SEATS = ("blue", "green")
# Each alliance's men on the board: Red and Blue outlined (capitals without colours),
# Black and Green filled (small letters), whoever looks.
MEN = {
    (True, True): "[♔♕♖♗♘♙]", (True, False): "[♚♛♜♝♞♟]",
    (False, True): "[ICAG]", (False, False): "[icag]",
}  # fmt: skip


def own_army_at_the_bottom(cli: Cli, seat: str, ranks: list[str]) -> None:
    """Wait for the board with `ranks` down the screen, and check that the two rows above
    the bottom one hold the seat's own men (on the board, not beside it)."""
    cli.wait_screen(lambda c: rank_labels(c) == ranks)
    board = cli.rows()
    bottom = next(i for i, row in enumerate(board) if re.match(r"\s?(\d{1,2}) ", row))
    width = len(board[bottom - 1].rstrip())  # the file labels' row: the board's columns
    rows = [row[:width] for row in board[bottom + 7 : bottom + 9]]  # above the bottom rank
    own = MEN[seat not in NO_COLOUR_SEATS, seat in ("red", "blue")]
    assert all(len(re.findall(own, row)) >= 14 for row in rows), (seat, cli.text())


def test_every_player_of_four_sees_its_own_army_at_the_bottom_and_allies_the_same_board(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # Full screen, 120x45, then 80x24, one person in each seat of grand_battle_2v2 (Blue
    # and Green without colours): Red and its ally Blue see ranks 10 to 1 down the screen
    # (their armies on rows 2-3 at the bottom), Black and Green ranks 1 to 10 (their own
    # rows 8-9 at the bottom).
    seats = ["red", "blue", "black", "green"]
    wide: dict[str, object] = {"ascii_only": False, "size": (45, 120)}
    plain = {"env": {"NO_COLOR": "1"}}  # (NO_COLOUR_SEATS)
    red = run(
        clients, ["play", "napoleonic", "--scenario", "grand_battle_2v2", "--seat", "red",
                  "--invite", "--name", "red"],
        tmp_path / "red", stack, **wide,
    )  # fmt: skip
    red.wait_screen(r"Invite code: (\S+)")
    code = re.search(r"Invite code: (\S+)", red.screen())
    assert code is not None
    players = {"red": red}
    for seat in seats[1:]:
        players[seat] = run(
            clients, ["play", "--join", code.group(1), "--seat", seat, "--name", seat],
            tmp_path / seat, stack, **wide, **(plain if seat in NO_COLOUR_SEATS else {}),
        )  # fmt: skip
    down = [str(rank) for rank in range(10, 0, -1)]
    for seat, cli in players.items():
        cli.wait_screen(r"Green\s+green")  # every seat taken
        own_army_at_the_bottom(cli, seat, down if seat in ("red", "blue") else down[::-1])
        (tmp_path / f"screen-{seat}.txt").write_text(cli.text())
    # Joining reopens a player's stream: no "disconnected" (then "reconnected") for that,
    # however long the others look (their wait for Red's move, timed on the status line).
    for seat in seats[1:]:
        players[seat].wait_screen(r"waiting for Red \(red\) 0:(0[7-9]|[1-9]\d)")
    for seat, cli in players.items():
        assert "disconnected" not in cli.text(), (seat, cli.text())
    for seat, cli in players.items():  # a terminal of 80x24: the same boards, drawn again
        cli.resize(24, 80)
        cli.view.erase_in_display(2)  # (what the screen shows now, the client drew)
        own_army_at_the_bottom(cli, seat, down if seat in ("red", "blue") else down[::-1])
        assert all(len(row) <= 80 for row in cli.rows())
    for cli in players.values():
        cli.interrupt()
