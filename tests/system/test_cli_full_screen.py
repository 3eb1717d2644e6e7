"""The full-screen game view, read through a terminal emulator as a person sees it.

A real `wargame` in a pseudo-terminal plays the bot; pyte turns everything it writes into
the screen a person would see. The view keeps one board, a side panel whose clocks tick,
the move list, the latest events and the input line; it follows resizes; and the line mode
stays for pipes and `--plain`.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from engine_service.convert.tags import tag_key
from engine_service.rules import rulesets
from engine_service.service import RulesEngine
from tests import seeds
from tests.conftest import TEST_SEAL_KEY
from tests.matchmaker.helpers import serving_engine
from tests.system.cli_support import WARGAME, Cli, Stack, game_id_of, prompt_row, run
from wargame.v1 import engine_pb2

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-full-screen")]

FILES = "a  b  c  d  e  f  g  h  i  j"
ALTERNATE_SCREEN = "\x1b[?1049h"


def full_screen(clients: list[Cli], tmp_path: Path, stack: Stack, *args: str, **kw: object) -> Cli:
    """A client in the full-screen view (Unicode, colours), South against the bot."""
    cli = run(
        clients, ["play", "war", "--side", "south", *args], tmp_path, stack,
        ascii_only=False, size=kw.pop("size", (40, 120)), **kw,
    )  # fmt: skip
    # The whole view, not only its input line: a frame may reach the terminal in parts.
    cli.wait_screen(lambda c: panel_beside_board(c) is not None)
    return cli


def clock(cli: Cli, side: str) -> int:
    """A side's clock on the screen, in seconds."""
    match = re.search(rf"{side}\s+\S.*?\s(\d+):(\d\d)", cli.text())
    assert match, cli.text()
    return int(match.group(1)) * 60 + int(match.group(2))


def board_rows(cli: Cli) -> tuple[int, int]:
    """The rows of the two file-label lines around the board."""
    rows = [index for index, row in enumerate(cli.rows()) if FILES in row]
    assert len(rows) == 2, cli.text()  # exactly one board on the screen
    return rows[0], rows[1]


def panel_beside_board(cli: Cli) -> bool | None:
    """Whether the side panel's title is beside the board (None: no whole view yet)."""
    rows = cli.rows()
    labels = [index for index, row in enumerate(rows) if FILES in row]
    titles = [index for index, row in enumerate(rows) if "The Game of War" in row]
    if len(labels) != 2 or len(titles) != 1 or not rows[-1].startswith("South ›"):
        return None
    return titles[0] < labels[1]


def test_board_ticking_clocks_moves_events_and_input_on_one_screen(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = full_screen(clients, tmp_path, stack, "--clock", "10+5")
    screen = cli.text()
    assert "The Game of War" in screen and "Moves" in screen and "none yet" in screen
    assert "⌂ Citadel" in screen and "♔♚ K King" in screen  # the legend: symbols, letters
    assert "South: outlined ♔, capitals K · North: filled ♚, small letters k" in screen
    top, bottom = board_rows(cli)
    assert bottom - top == 11  # ten ranks between the labels

    # South's clock runs while South thinks, and the screen shows it going down.
    started = clock(cli, "South")
    cli.wait_screen(lambda c: clock(c, "South") < started)
    assert clock(cli, "North") == 600

    sent = time.monotonic()
    cli.send("e3-e4")
    cli.wait_screen(r"You: e3-e4")
    cli.wait_screen(r"1\. e3-e4  2\. \S+")  # the move list, with the bot's answer
    answered = time.monotonic() - sent  # the bot thought no longer than this
    cli.wait_screen(r"North: \S+")  # the events of the bot's move
    cli.wait_screen(lambda c: panel_beside_board(c) is not None)
    top, bottom = board_rows(cli)  # still one board, drawn in place
    column = cli.rows()[top].index("e  f")
    rank4 = next(row for row in cli.rows()[top:bottom] if row.startswith(" 4 "))
    assert rank4[column] != " "  # the Troop now on e4
    # Its increment after the bot's move: North had 600 s, used at most `answered` of them
    # (a second more for the screen's rounding) and gained 5; without the increment it
    # would show at most 600 - used.
    assert 605 - math.ceil(answered) - 1 <= clock(cli, "North") <= 605

    cli.quit()
    assert "you left game" in cli.text()


def test_a_resize_redraws_the_view(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    cli = full_screen(clients, tmp_path, stack, size=(40, 120))

    assert panel_beside_board(cli)
    cli.resize(50, 60)  # too narrow for both: the panel goes below the board
    cli.wait_screen(lambda c: panel_beside_board(c) is False)
    assert all(len(row) <= 60 for row in cli.rows())
    cli.resize(40, 120)
    cli.wait_screen(lambda c: panel_beside_board(c) is True)
    cli.quit()


def test_the_side_panel_keeps_whole_words_in_a_terminal_of_80_columns(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # The most common terminal size: beside War's board the panel has about 40 columns,
    # less than its title and the Flying Machines' line; they wrap by words, never cut.
    cli = full_screen(clients, tmp_path, stack, size=(24, 80))
    game_id = game_id_of(cli)
    rows = cli.rows()
    title = next(index for index, row in enumerate(rows) if "The Game of War" in row)
    column = rows[title].index("The Game of War")
    top = board_rows(cli)[1]
    panel = " ".join(" ".join(row[column:].split()) for row in rows[title:top])
    assert f"The Game of War (Hudson Maxim, 1910) game {game_id}" in panel, cli.text()
    assert "Flying Machines in reserve: South 2 · North 2" in panel, cli.text()
    assert "South: outlined ♔, capitals K · North: filled ♚, small letters k" in panel
    cli.quit()


def test_a_hint_answers_in_the_view_while_the_input_line_stays(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = full_screen(clients, tmp_path, stack)
    cli.send("hint")
    cli.wait_screen(r"Hint \(level \d\): \S+")
    assert "thinking about a hint" in cli.screen()  # the status line while it was asked
    cli.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    cli.interrupt()
    assert cli.wait() == 130
    assert "interrupted: you left game" in cli.text()


def test_plain_keeps_the_scrolling_log_in_a_terminal(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(
        clients, ["play", "war", "--side", "south", "--plain"], tmp_path, stack,
        ascii_only=False,
    )  # fmt: skip
    cli.expect("South › ")
    cli.send("e3-e4")
    cli.expect(r"North: \S+")
    cli.expect("South › ")
    cli.quit()
    assert ALTERNATE_SCREEN not in "".join(cli._seen)
    assert cli.screen().count(FILES) >= 4  # a board for each change, one below the other


def test_pipes_get_the_line_mode(stack: Stack, tmp_path: Path) -> None:
    environment = {
        **os.environ, "WARGAME_ENGINE": stack.engine, "WARGAME_MATCHMAKER": stack.address,
        "WARGAME_HOME": str(tmp_path), "LANG": "C.UTF-8",
    }  # fmt: skip
    done = subprocess.run(
        [WARGAME, "play", "war", "--side", "south"], input=b"e3-e4\nquit\n",
        env=environment, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii() and b"\x1b[" not in done.stdout
    assert b"You: e3-e4" in done.stdout and b"you left game" in done.stdout


def test_resigning_asks_first_and_the_view_goes_on_to_a_rematch(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = full_screen(clients, tmp_path, stack, "--level", "1")
    cli.wait_screen(r"North\s+bot, level 1")  # the side panel
    cli.send("resign")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("Resign and lose the game? y/N ›"))
    cli.send("no")  # (elsewhere `no` declines a draw: here it answers the question)
    cli.wait_screen(r"Not done: play on\.")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    cli.send("resign")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("Resign and lose the game? y/N ›"))
    cli.send("y")
    cli.wait_screen(r"Game over: you lose — South resigns(?!;)")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("rematch or quit ›"))
    cli.send("rematch")
    cli.wait_screen(r"Game \S+: you play North against the bot at level 1 of 5")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("North ›"))  # the bot (South) moved
    flipped = FILES[::-1]  # North's own side at the bottom now: one board, the new game's
    cli.wait_screen(lambda c: sum(flipped in row for row in c.rows()) == 2)
    cli.wait_screen(r"South\s+bot, level 1")
    # The log is the new game's: read once the frame is drawn whole (the pseudo-terminal
    # hands it over in pieces, and the checks above may pass on the first ones).
    cli.wait_screen(lambda c: "Game over" not in c.text())
    cli.quit()


BATTLE_CELLS = set(range(1, 140))  # Richardson's board: squares numbered 1 to 139


def battle_board(cli: Cli) -> dict[int, int] | None:
    """The row of each of Battle's square numbers shown left of the side panel, or None
    while the view (panel title, input line) is not whole."""
    rows = cli.rows()
    titles = [index for index, row in enumerate(rows) if "War-Chess" in row]
    if len(titles) != 1 or not rows[-1].startswith(("Attacker ›", "Defender ›")):
        return None
    column = rows[titles[0]].index("War-Chess")  # where the side panel begins
    found: dict[int, int] = {}
    for index, row in enumerate(rows):
        if set(row) <= {"─", " "} and row:
            break  # the rule above the events
        for number in re.findall(r"(?<!\d)\d{1,3}(?!\d)", row[:column]):
            found.setdefault(int(number), index)
    return found


def rows_apart(cli: Cli, upper: int, lower: int) -> int | None:
    """How many rows below square `upper` square `lower` is shown (None: one is not shown)."""
    shown = battle_board(cli) or {}
    return shown[lower] - shown[upper] if upper in shown and lower in shown else None


def test_the_whole_battle_board_shows_at_80_by_24_and_the_normal_one_when_taller(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # The default terminal of a new player: Richardson's board of 19 rows of squares does
    # not fit there with a blank line between rows; the compact drawing (one line per row)
    # shows every square, the attacker's far rows too, with the side panel beside it.
    cli = run(
        clients, ["play", "battle", "--side", "defender"], tmp_path, stack,
        ascii_only=False, size=(24, 80),
    )  # fmt: skip
    cli.wait_screen(lambda c: (battle_board(c) or {}).keys() >= BATTLE_CELLS)
    shown = battle_board(cli)
    assert shown is not None
    assert "does not fit" not in cli.text()
    # The side panel beside it: the players and the whole legend, each item on one row.
    assert re.search(r"Attacker\s+bot, level \d", cli.text()), cli.text()
    assert "W Wagon (supply train)" in cli.text(), cli.text()
    assert "╪ bridge  ≈ river" in cli.text(), cli.text()
    assert shown[125] - shown[134] == 1  # the top rows: one line apart
    assert shown[1] - shown[7] == 1  # the bottom ones too
    assert all(len(row) <= 80 for row in cli.rows())

    cli.resize(50, 120)  # room for the normal drawing: a blank line between rows again
    cli.wait_screen(lambda c: rows_apart(c, 134, 125) == 2)
    assert (battle_board(cli) or {}).keys() >= BATTLE_CELLS
    cli.resize(24, 80)
    cli.wait_screen(lambda c: rows_apart(c, 134, 125) == 1)
    cli.quit()


def test_tab_completes_the_input_line_whatever_the_case(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = full_screen(clients, tmp_path, stack)
    cli.child.send("HE\t")  # one candidate (`help`): Tab puts it on the line as written
    cli.wait_screen(lambda c: prompt_row(c).rstrip().endswith("› help"))
    cli.child.send("\x15E3-\t")  # Ctrl-U clears the line; `e3-e4`, `e3-e5`... in a menu
    cli.wait_screen(lambda c: "e3-e4" in c.text() and "e3-e5" in c.text())
    cli.child.send("\t")  # the next Tab takes the first of them
    cli.wait_screen(lambda c: prompt_row(c).rstrip().endswith("› e3-e4"))
    cli.child.send("\r")
    cli.wait_screen(r"You: e3-e4")
    cli.quit()


HELP_WORDS = [  # each command of `help`, as its line begins
    "moves [SQUARE]", "hint             the engine", "draw             offer",
    "accept / decline", "resign           give up", "rematch          after",
    "board            draw", "help             this help", "quit             leave",
]  # fmt: skip
PAGER = r"PgUp/PgDn ↑↓ wheel scroll · Esc closes"
ESCAPE = "\x1b"


def page_up_to_the_log_s_first_line(cli: Cli, first: str, presses: int) -> None:
    """PageUp (at most `presses` times) until the log's first page is on the screen, then
    wait until its `first` line shows."""
    for _ in range(presses):
        cli.child.send("\x1b[5~")
        found = cli.wait_screen(r"the game's log: lines (\d+)-")
        if found is not None and found.group(1) == "1":
            break
    cli.wait_screen(lambda c: first in c.text())


def battle(
    clients: list[Cli], tmp_path: Path, stack: Stack, size: tuple[int, int], **kw: object
) -> Cli:
    """A client in the full-screen view of the Game of Battle, the defender against the bot."""
    cli = run(
        clients, ["play", "battle", "--side", "defender", "--level", "1"], tmp_path, stack,
        ascii_only=False, size=size, **kw,
    )  # fmt: skip
    cli.wait_screen(lambda c: battle_board(c) is not None and "Defender ›" in c.rows()[-1])
    return cli


# Each game at both sizes, in colour and NO_COLOR, is read by
# `test_what_each_game_says_and_draws_reads_whole_at_80x24_and_120x45` (one process each);
# the Battle tests below read the rest (Enter closes the pager, the wheel, lines after the
# result) at one combination, the others with `make test-slow`.
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("size", "colour"),
    [
        pytest.param((24, 80), "colour", id="80x24-colour"),
        pytest.param((45, 120), "colour", id="120x45-colour", marks=SLOW),
        pytest.param((24, 80), "NO_COLOR", id="80x24-NO_COLOR", marks=SLOW),
        pytest.param((45, 120), "NO_COLOR", id="120x45-NO_COLOR", marks=SLOW),
    ],
)
def test_help_and_moves_open_whole_in_a_pager_the_player_closes(
    stack: Stack, clients: list[Cli], tmp_path: Path, size: tuple[int, int], colour: str
) -> None:
    # Battle's board leaves the log two lines at 80x24 and three at 120x45: too few for
    # the help's command list or the legal moves; they open in a pager over the board.
    env = {"NO_COLOR": "1"} if colour == "NO_COLOR" else {}
    cli = battle(clients, tmp_path, stack, size, env=env)
    cli.send("help")
    # The whole pager, not only its first lines: a frame may reach the terminal in parts.
    cli.wait_screen(
        lambda c: (
            all(word in c.text() for word in HELP_WORDS)
            and re.search(r"help: lines 1-\d+ of \d+", c.text()) is not None
        )
    )
    assert re.search(PAGER, cli.text()), cli.text()
    assert all(len(row) <= size[1] for row in cli.rows())
    (tmp_path / f"help-{size[1]}x{size[0]}-{colour}.txt").write_text(cli.text())
    cli.child.send(ESCAPE)  # closed: the board again, and the input line
    cli.wait_screen(lambda c: PAGER not in c.text() and battle_board(c) is not None)

    cli.send("moves")
    cli.wait_screen(r"moves: lines 1-(\d+) of (\d+)")
    found = re.search(r"moves: lines 1-(\d+) of (\d+)", cli.text())
    assert found is not None
    assert "legal action(s) for Defender" in cli.text()
    if int(found.group(1)) < int(found.group(2)):  # more than a page: the rest below
        cli.child.send("\x1b[6~")  # PageDown
        cli.wait_screen(rf"moves: lines \d+-{found.group(2)} of {found.group(2)}")
    cli.send("")  # Enter on an empty line closes it too
    cli.wait_screen(lambda c: PAGER not in c.text() and battle_board(c) is not None)
    cli.quit()


@pytest.mark.parametrize(
    "size",
    [pytest.param((24, 80), id="80x24"), pytest.param((45, 120), id="120x45", marks=SLOW)],
)
def test_page_up_and_the_mouse_wheel_read_every_line_of_the_log(
    stack: Stack, clients: list[Cli], tmp_path: Path, size: tuple[int, int]
) -> None:
    cli = battle(clients, tmp_path, stack, size)
    game_id = game_id_of(cli)
    first = f"Game {game_id}: you play Defender"  # the first line the game wrote
    for _ in range(3):
        cli.send("board")  # nothing to say: the log keeps its lines
    cli.send("hint")
    cli.wait_screen(r"Hint \(level 2\): \S+")  # the coach: one level above the bot's 1
    cli.wait_screen(lambda c: first not in c.text())  # out of the two-line log pane
    page_up_to_the_log_s_first_line(cli, first, presses=40)
    cli.wait_screen(r"Hint \(level 2\): \S+")  # the whole log, its first and its last lines
    cli.child.send(ESCAPE)
    cli.wait_screen(lambda c: PAGER not in c.text())
    # The wheel over the log (an SGR mouse report, row 2 from the bottom): the log again.
    cli.child.send(f"\x1b[<64;5;{size[0] - 2}M")
    cli.wait_screen(r"the game's log: lines \d+-\d+ of \d+")
    cli.quit()


@pytest.mark.parametrize(
    "size",
    [pytest.param((24, 80), id="80x24", marks=SLOW), pytest.param((45, 120), id="120x45")],
)
def test_the_result_stays_in_the_side_panel(
    stack: Stack, clients: list[Cli], tmp_path: Path, size: tuple[int, int]
) -> None:
    cli = battle(clients, tmp_path, stack, size)
    cli.send("resign!")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("rematch or quit ›"))
    for _ in range(3):
        cli.send("board")  # lines after the result in the log
    cli.send("help")
    cli.wait_screen(PAGER)
    cli.child.send(ESCAPE)
    cli.wait_screen(lambda c: PAGER not in c.text() and "War-Chess" in c.text())
    rows = cli.rows()
    title = next(index for index, row in enumerate(rows) if "War-Chess" in row)
    column = rows[title].index("War-Chess")  # the side panel's column
    panel = " ".join(" ".join(row[column:].split()) for row in rows[title : len(rows) - 3])
    assert "Game over: you lose — Defender resigns" in panel, cli.text()
    cli.quit()


@pytest.mark.parametrize("plain", [False, True], ids=["full-screen", "plain"])
def test_the_invite_command_to_paste_is_never_broken(
    stack: Stack, clients: list[Cli], tmp_path: Path, plain: bool
) -> None:
    # The Napoleonic battle of four: the longest invite line ("--seat SIDE" too).
    args = ["play", "napoleonic", "--scenario", "grand_battle_2v2", "--seat", "red", "--invite"]
    size = (24, 80) if plain else (45, 120)
    args += ["--plain"] if plain else []
    cli = run(clients, args, tmp_path, stack, ascii_only=False, size=size)
    cli.wait_screen(lambda c: "Invite code: " in " ".join(c.text().split()))
    code = re.search(r"Invite code: (\S+)", " ".join(cli.text().split()))
    assert code is not None
    command = f"`wargame play --join {code.group(1)} --seat SIDE`"
    cli.wait_screen(lambda c: command in " ".join(c.text().split()))
    assert any(command in row for row in cli.rows()), cli.text()  # on one row
    cli.quit()


BELL = "\x07"


def clock_cell(cli: Cli, side: str) -> tuple[int, str, str] | None:
    """A side's clock on the screen (its label as shown; the time beside it or, in a narrow
    panel, below it): its seconds, the colour it is drawn in and what follows it on its
    row (None: not on the screen now)."""
    rows = cli.rows()
    for y, row in enumerate(rows):
        # Not the welcome ("you play Defender against the bot"), whose next row, the status
        # line, ends in a time too: read as the clock while a resized screen was redrawn.
        label = re.search(rf"(?<!play )\b{side}\s+\S", row)
        if not label:
            continue
        for at, start in ((y, label.end()), (y + 1, max(0, label.start() - 4))):
            found = re.search(
                r"(?<![\d:])(\d+):(\d\d)\b", rows[at][start:] if at < len(rows) else ""
            )
            if found:
                x = start + found.start(1)
                rest = rows[at][start + found.end() :]
                seconds = int(found.group(1)) * 60 + int(found.group(2))
                return seconds, cli.view.buffer[at][x].fg, rest
    return None


# Each game with the side that acts first (its clock runs from the start) as shown.
FIRST = {"war": "South", "battle": "Defender", "napoleonic": "Red"}


# Each set is a clock run low in real time: `make test` runs three of the nine a day (each
# game once, each mode once), `make test-slow` the other six.
@pytest.mark.parametrize(
    ("game", "mode"),
    seeds.by_turns(
        [
            pytest.param(game, mode, id=f"{game}-{mode}")
            for block, mode in enumerate(("colour", "NO_COLOR", "no-bell"))
            for game in [*FIRST][block:] + [*FIRST][:block]
        ],
        every=3,
    ),
)
def test_low_time_turns_the_clock_red_and_rings_the_bell_once(
    stack: Stack, clients: list[Cli], tmp_path: Path, game: str, mode: str
) -> None:
    # 24 seconds each: under 20 s the player's running clock is low. Read at 120x45, then
    # at 80x24 after a live resize: still low, and the bell never rings again.
    side = FIRST[game]
    env = {"NO_COLOR": "1"} if mode == "NO_COLOR" else {}
    extra = ["--no-bell"] if mode == "no-bell" else []
    args = ["play", game, "--side", side.lower(), "--clock", "0.4+0", *extra]
    cli = run(clients, args, tmp_path, stack, ascii_only=False, size=(45, 120), env=env)
    cli.wait_screen(lambda c: clock_cell(c, side) is not None)
    left, colour, _ = clock_cell(cli, side) or (0, "", "")
    if left > 20:  # (the screen came before the time ran low, as it does but when very busy)
        assert colour != "red" and " low" not in cli.text(), cli.text()
    cli.wait_screen(lambda c: (clock_cell(c, side) or (99,))[0] < 18)  # a few seconds low
    for rows, columns in ((45, 120), (24, 80)):
        if columns == 80:
            cli.resize(rows, columns)
            cli.view.erase_in_display(2)  # (what the screen shows now, the client drew)
            cli.wait_screen(lambda c: clock_cell(c, side) is not None)
        assert all(len(row) <= columns for row in cli.rows())
        cell = clock_cell(cli, side)
        assert cell is not None, cli.text()
        assert cell[0] > 0, cli.text()  # (still running: read before the flag fell)
        if mode == "NO_COLOR":
            assert cell[1] == "default" and cell[2].startswith(" low"), cli.text()
        else:
            assert cell[1] == "red", cli.text()
        bells = "".join(cli._seen).count(BELL)
        assert bells == (0 if mode == "no-bell" else 1), bells
    cli.quit()


@pytest.fixture
def held_bot(tmp_path: Path) -> Iterator[tuple[Stack, HeldSearches]]:
    """A stack whose engine is a real one that holds every search until the test releases
    it: a bot's turn cannot end before that (a budget of 600 s keeps the matchmaker waiting
    for the answer; once released, the engine searches for a moment only)."""
    held = HeldSearches()
    with serving_engine(held.servicer()) as address:
        made = Stack(tmp_path / "held", address, ["--bot-max-time", "600"])
        try:
            yield made, held
        finally:
            held.release()
            made.stop()


class HeldSearches:
    """The searches a held engine was asked for, and the event that lets them go on."""

    def __init__(self) -> None:
        self.sides: list[str] = []  # the side of each search asked for
        self.released = threading.Event()

    def release(self) -> None:
        """Let every search (held or to come) go on."""
        self.released.set()

    def servicer(self) -> RulesEngine:
        """The real engine, its SuggestAction held until `release`."""
        held = self

        class Held(RulesEngine):
            def SuggestAction(
                self, request: engine_pb2.SuggestActionRequest, context: grpc.ServicerContext
            ) -> engine_pb2.SuggestActionResponse:
                held.sides.append(request.side)
                while not held.released.wait(0.1):
                    if not context.is_active():
                        return engine_pb2.SuggestActionResponse()  # nobody waits for it
                request.time_budget.FromMilliseconds(50)
                return super().SuggestAction(request, context)

        return Held(rulesets(TEST_SEAL_KEY), tag_key=tag_key(TEST_SEAL_KEY))


NAPOLEONIC_FILES = "a  b  c  d  e  f  g  h"


def napoleonic_board_in_black_s_turn(cli: Cli) -> bool:
    """Whether the screen shows the whole Napoleonic board, Black's first turn beside it (the
    bot's seat marked as the one to act) and on the status line above the input line."""
    text, rows = cli.text(), cli.rows()
    return (
        text.count(NAPOLEONIC_FILES) == 2
        and "Turn 1 · Black · movement phase" in text
        and re.search(r"Black\s+bot, level 1\s+◀", text) is not None
        and "waiting for Black (bot)" in rows[-2]
        and rows[-1].startswith("›")
    )


def test_the_napoleonic_board_shows_while_the_bot_s_first_turn_goes_on(
    held_bot: tuple[Stack, HeldSearches], clients: list[Cli], tmp_path: Path
) -> None:
    # Black, the bot, opens; its first search is held, so its turn cannot end before the
    # screens are read: the player sees the board, and whose turn it is, while it goes on.
    stack, held = held_bot
    args = ["play", "napoleonic", "--side", "red", "-o", "first_player=black", "--level", "1"]
    args += ["--bot-time", "600"]
    sizes = {"colour": (45, 120), "NO_COLOR": (24, 80)}
    players = {}
    for mode, size in sizes.items():
        env = {"NO_COLOR": "1"} if mode == "NO_COLOR" else {}
        players[mode] = run(
            clients, args, tmp_path / mode, stack, ascii_only=False, size=size, env=env
        )
    for mode, cli in players.items():
        cli.wait_screen(napoleonic_board_in_black_s_turn)
        colours = {char.fg for row in cli.view.buffer.values() for char in row.values()}
        assert (colours == {"default"}) == (mode == "NO_COLOR"), colours
    for (rows, columns), cli in zip(reversed(sizes.values()), players.values(), strict=True):
        cli.resize(rows, columns)  # each at the other size: drawn again, still Black's turn
        cli.view.erase_in_display(2)  # (what the screen shows now, the client drew)
        cli.wait_screen(napoleonic_board_in_black_s_turn)
        assert all(len(row) <= columns for row in cli.rows())
    assert held.sides.count("black") >= len(players) and not held.released.is_set()
    assert all("none yet" in cli.text() for cli in players.values())  # no move played yet

    held.release()  # the bot's turn goes on to its end: Red's turn
    for cli in players.values():
        cli.wait_screen(r"Turn \d+ · Red · movement phase")
        cli.quit()


CHESS_PIECES = set("♔♕♖♗♘♙♚♛♜♝♞♟")
BATTLE_LAST_LINE_INFANTRY = "attacker to move; attacker: W129 C34; defender: T19 I42 L7"


@dataclass(frozen=True)
class Played:
    """A game from a set-up text, for reading what one player sees of it from start to end."""

    args: tuple[str, ...]  # `wargame play GAME ...`
    title: str  # the side panel's title
    prompt: str  # the input line's prompt, as it begins
    # At each size: a chess habit naming the wrong piece (what can go there instead), the
    # man who stands there named (the legal action), and the opponent's man touched.
    habits: dict[str, tuple[tuple[str, str], ...]]
    yours: dict[str, str]  # mode -> how the player's men are written
    # What takes the last man of a kind, one that neither army has any more: drawn from the
    # kinds on the board now, its symbol (and those sharing its glyph) would change.
    capture: tuple[str, ...]
    lost: dict[str, str]  # mode -> that kind's symbol (as the board showed it at the start)
    symbols: int  # how many symbols the set-up shows (one per kind and side)


PLAYED = {
    "war": Played(
        ("--side", "south", "--setup", "9k/10/10/9g/10/10/10/10/10/K8M S -:- citadels=a1,j10"),
        "The Game of War", "South ›",
        {
            "80x24": (
                ("Nj1-j5", "no Horse of yours can go to j5; what can: Mj1-j5"),
                ("Rj1-j5", "did you mean Mj1-j5? (M is the Mortar here)"),
                ("j7-j6", "j7 is North's General, not yours; yours are {yours}"),
            ),
            "120x45": (
                ("Nj1-j4", "no Horse of yours can go to j4; what can: Mj1-j4"),
                ("Rj1-j4", "did you mean Mj1-j4? (M is the Mortar here)"),
                ("j10-i10", "j10 is North's King, not yours; yours are {yours}"),
            ),
        },
        {"colour": "South's: outlined ♔, capitals K", "NO_COLOR": "South's: capitals K"},
        ("Mj1xj7",), {"colour": "♛", "NO_COLOR": "g"}, 4,
    ),
    "battle": Played(
        ("--side", "attacker", "--setup", BATTLE_LAST_LINE_INFANTRY),
        "War-Chess", "Attacker ›",
        {
            "80x24": (
                ("I34-35", "no Infantry of the Line of yours can go to 35; what can: 34-35"),
                ("C34-35", "did you mean 34-35?"),
                ("42-41", "42 is Defender's Infantry of the Line, not yours; yours are {yours}"),
            ),
            "120x45": (
                ("I34-33", "no Infantry of the Line of yours can go to 33; what can: 34-33"),
                ("C34-33", "did you mean 34-33?"),
                ("7-8", "7 is Defender's Light Infantry, not yours; yours are {yours}"),
            ),
        },
        {"colour": "Attacker's: filled ♟, small letters l", "NO_COLOR": "Attacker's: small letters l"},  # noqa: E501
        # The Citadel is drawn with the Infantry of the Line's glyph (the rook): both letters
        # all game, the Citadel too once the last Infantry of the Line is gone.
        ("34x42",), {"colour": "I", "NO_COLOR": "I"}, 5,
    ),
    "napoleonic": Played(
        ("--side", "red", "--setup", "board 8x8; red: d4=I c5=I a1=G h1=I; black: d5=C h8=G"),
        "Napoleonic Chess", "Red · ",
        {
            "80x24": (
                ("Gc5-c6", "no Guards of yours can go to c6; what can: move c5-c6"),
                ("Ga1-a2", "did you mean move a1-a2?"),
                ("move d5-d6", "d5 is Black's Cavalry, not yours; yours are {yours}"),
            ),
            "120x45": (
                ("Gd4-e4", "no Guards of yours can go to e4; what can: move d4-e4"),
                ("Ga1-b1", "did you mean move a1-b1?"),
                ("move h8-g8", "h8 is Black's Guards, not yours; yours are {yours}"),
            ),
        },
        {"colour": "Red's: outlined ♙, capitals I", "NO_COLOR": "Red's: capitals I"},
        ("end", "attack d4>d5", "attack c5>d5"), {"colour": "♞", "NO_COLOR": "c"}, 4,
    ),
}  # fmt: skip
SIZES = {"80x24": (24, 80), "120x45": (45, 120)}
MOVES_HEAD = "legal action(s) for"


def said(cli: Cli, text: str) -> None:
    """Wait until the screen shows `text`, whatever rows it was word-wrapped into."""
    cli.wait_screen(lambda c: text in " ".join(c.text().split()))


def whole_view(cli: Cli, game: Played, columns: int) -> bool:
    """Whether the screen shows the whole view (panel title, input line), no pager over it,
    and nothing wider than the terminal."""
    rows = cli.rows()
    return (
        any(game.title in row for row in rows)
        and rows[-1].startswith((game.prompt, "rematch or quit ›"))
        and PAGER not in cli.text()
        and all(len(row) <= columns for row in rows)
        and any(row and set(row) <= {"─"} for row in rows)  # the rule above the log
    )


def answered_last(cli: Cli, game: Played, head: str, columns: int) -> bool:
    """Whether the whole view shows the answer that has a row with `head` as the log's last:
    no refusal, moves or help below it (an answer of the other size may be in the log too)."""
    rows = cli.rows()
    if not any(head in row for row in rows) or not whole_view(cli, game, columns):
        return False
    last = max(index for index, row in enumerate(rows) if head in row)
    later = ("not understood", "illegal", MOVES_HEAD, HELP_WORDS[-1])
    below = [row for row in rows[last + 1 :] if head not in row]
    return all(len(row) <= columns for row in rows) and not any(
        word in row for row in below for word in later if word != head
    )


def board_symbols(cli: Cli, game: Played) -> set[str]:
    """The symbols of the men on the board: letters and chess glyphs left of the side panel,
    above the log (the grids' file labels left out)."""
    rows = cli.rows()
    column = next((row.index(game.title) for row in rows if game.title in row), None)
    rule = next((index for index, row in enumerate(rows) if row and set(row) <= {"─"}), None)
    found: set[str] = set()
    if column is None or rule is None:
        return found  # (no whole view yet)
    for row in rows[:rule]:
        left = row[:column]
        if all(len(word) == 1 and word.islower() for word in left.split()):
            continue  # a grid's file labels (or an empty row)
        found |= {char for char in left if char.isalpha() or char in CHESS_PIECES}
    return found


def lost_symbols(cli: Cli) -> list[str]:
    """The symbols of the lost men in the side panel, every side's."""
    found = re.findall(r"lost: (\S(?: \S)*)(?!\S)", cli.text())
    return [symbol for listed in found for symbol in listed.split()]


def panel_text(cli: Cli, game: Played) -> str:
    """The side panel's words, rows joined (from its title to the log's rule)."""
    rows = cli.rows()
    title = next((index for index, row in enumerate(rows) if game.title in row), None)
    rule = next((index for index, row in enumerate(rows) if row and set(row) <= {"─"}), None)
    if title is None or rule is None:
        return ""  # (no whole view yet)
    column = rows[title].index(game.title)
    return " ".join(" ".join(row[column:].split()) for row in rows[title:rule])


def resize(cli: Cli, game: Played, size: str) -> None:
    """Resize the terminal and wait for the whole view drawn again at that size."""
    rows, columns = SIZES[size]
    cli.resize(rows, columns)
    cli.view.erase_in_display(2)  # (what the screen shows now, the client drew)
    cli.wait_screen(lambda c: whole_view(c, game, columns))


# Each set is a whole game's session at two sizes: `make test` reads two of the six a day
# (two games, one in colour and one without), `make test-slow` the other four.
@pytest.mark.parametrize(
    ("game", "colour"),
    seeds.by_turns(
        [
            pytest.param(game, colour, id=f"{colour}-{game}")
            for colour, games in (
                ("colour", ("war", "battle", "napoleonic")),
                ("NO_COLOR", ("battle", "napoleonic", "war")),
            )
            for game in games
        ],
        every=3,
    ),
)
def test_what_each_game_says_and_draws_reads_whole_at_80x24_and_120x45(
    stack: Stack, clients: list[Cli], tmp_path: Path, game: str, colour: str
) -> None:
    # One player of each game, from a set-up text, at both sizes in one process (resized):
    # chess habits keep the piece and the opponent's man is named (items 4, 5); the help
    # reads whole and PageUp reads the log from its first line (item 1); a kind whose last
    # man is taken keeps its symbol on the board and in the lost list (item 6); the result
    # stays in the side panel (item 1).
    played = PLAYED[game]
    env = {"NO_COLOR": "1"} if colour == "NO_COLOR" else {}
    cli = run(
        clients, ["play", game, "--level", "1", *played.args], tmp_path, stack,
        ascii_only=False, size=SIZES["80x24"], env=env,
    )  # fmt: skip
    # (the whole board: a frame may reach the terminal in parts)
    cli.wait_screen(
        lambda c: whole_view(c, played, 80) and len(board_symbols(c, played)) == played.symbols
    )
    game_id = game_id_of(cli)
    at_start = board_symbols(cli, played)
    assert bool(at_start & CHESS_PIECES) == (colour == "colour"), at_start
    assert played.lost[colour] in at_start, at_start
    for size in SIZES:
        if size != "80x24":
            resize(cli, played, size)
            cli.wait_screen(lambda c: board_symbols(c, played) == at_start)
        for typed, answer in played.habits[size]:
            cli.send(typed)
            said(cli, answer.format(yours=played.yours[colour]))
        assert "did you mean F@" not in cli.text() and "has no legal move" not in cli.text()
        cli.send("help")  # whole: in the log, or in the pager when the log cannot hold it
        columns = SIZES[size][1]
        cli.wait_screen(
            lambda c, columns=columns: (  # type: ignore[misc]
                all(word in c.text() for word in HELP_WORDS)
                and (PAGER in c.text() or answered_last(c, played, HELP_WORDS[-1], columns))
            )
        )
        (tmp_path / f"help-{size}-{colour}.txt").write_text(cli.text())  # (as the player saw it)
        if PAGER in cli.text():
            cli.child.send(ESCAPE)
        cli.wait_screen(lambda c, columns=columns: whole_view(c, played, columns))  # type: ignore[misc]
        cli.send("moves")  # whole too: PageDown to its last line when longer than a page
        cli.wait_screen(
            lambda c, columns=columns: (  # type: ignore[misc]
                PAGER in c.text() or answered_last(c, played, MOVES_HEAD, columns)
            )
        )
        found = re.search(r"moves: lines 1-(\d+) of (\d+)", cli.text())
        if found is not None and int(found.group(1)) < int(found.group(2)):
            cli.child.send("\x1b[6~")  # PageDown
            cli.wait_screen(rf"moves: lines \d+-{found.group(2)} of {found.group(2)}")
        if PAGER in cli.text():
            cli.child.send(ESCAPE)
        cli.wait_screen(lambda c, columns=columns: whole_view(c, played, columns))  # type: ignore[misc]

    for typed in played.capture:
        cli.send(typed)
    cli.wait_screen(
        lambda c: bool(lost_symbols(c)) and (PAGER in c.text() or whole_view(c, played, 120))
    )
    if PAGER in cli.text():  # (a combat report too long for the log)
        cli.child.send(ESCAPE)
    for size in ("120x45", "80x24"):
        if size == "80x24":
            resize(cli, played, size)
        columns = SIZES[size][1]
        cli.wait_screen(
            lambda c, columns=columns: whole_view(c, played, columns) and bool(lost_symbols(c))  # type: ignore[misc]
        )
        # (the bot may have taken a man of the player's since: drawn as at the start too)
        assert played.lost[colour] in lost_symbols(cli), cli.text()
        assert set(lost_symbols(cli)) <= at_start, cli.text()
        assert board_symbols(cli, played) <= at_start, cli.text()

    first = f"Game {game_id}: you play"  # the log's first line, long out of the log pane
    page_up_to_the_log_s_first_line(cli, first, presses=60)
    cli.child.send(ESCAPE)
    cli.wait_screen(lambda c: whole_view(c, played, 80))

    cli.send("resign!")
    cli.wait_screen(lambda c: c.rows()[-1].startswith("rematch or quit ›"))
    result = "Game over: you lose"
    for size in ("80x24", "120x45"):
        if size == "120x45":
            resize(cli, played, size)
        cli.wait_screen(lambda c: result in panel_text(c, played))
    cli.quit()
