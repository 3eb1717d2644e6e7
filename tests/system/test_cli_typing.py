"""What players type, in a real pty against the bot: chess habits, mistakes, small commands.

Destination-only input and "did you mean" are read against the engine's legal actions;
a mistake is one line with the rule in words, word-wrapped to the terminal; `board flip`,
game names in any case, a welcome that names a square of the game being played; and in
Napoleonic Chess the units that moved, the running combat sums and `end` sent when it is
the only legal action.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system.cli_support import WAR_CITADEL, Cli, Launch, Stack, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-typing")]

NAPOLEONIC_ADVANCE = "board 8x8; red: d4=I c5=I a1=G h1=I; black: d5=I h8=G"


def test_chess_habits_read_against_the_legal_actions(launch: Launch) -> None:
    args = ["play", "War", "--side", "SOUTH", "--setup", WAR_CITADEL]  # names in any case
    cli = launch(args)
    cli.expect_text("you play South")
    cli.expect(r"South > ")
    cli.send("b1")
    cli.expect_text("error: not understood: more than one action goes to b1: Ka1-b1, Mj1-b1\r\n")
    cli.send("c3")
    cli.expect_text("error: not understood: no legal action goes to c3\r\n")
    cli.send("Rj1-j9")
    cli.expect(r"error: not understood: \S.* - did you mean Mj1-j9\? \(M is the Mortar here\)\r\n")
    cli.send("mvoes")
    cli.expect(r"error: not understood: .* - did you mean `moves`\?\r\n")
    cli.send("j9")
    cli.expect_text("j9 -> Mj1-j9 (the only legal action there)")
    cli.expect_text("You: Mj1-j9")
    cli.expect(r"North: \S+")
    cli.expect(r"South > ")
    cli.send("board flip")
    cli.expect(r"\n\s+j  i  h  g  f  e  d  c  b  a\s*\r\n")
    cli.quit()
    assert "accepted:" not in cli.screen()  # the notation's forms stay in `help`


def test_a_knights_move_from_the_opening_is_judged_as_the_horses(launch: Launch) -> None:
    # The chess habit of the issue itself: Nb1-c3 in the opening. c3 holds South's own
    # Troop, so no Horse goes there and nothing legal is suggested; the refusal says what
    # N is here and which rule Hb1-c3 breaks, instead of "no move".
    cli = launch(["play", "war", "--side", "south"])
    cli.expect(r"South > ")
    cli.send("Nb1-c3")
    cli.expect_text(
        "error: illegal: Nb1-c3 is Hb1-c3 here (H is the Horse): c3 is occupied by South's own"
    )
    cli.expect(r"Troop; the South Horse on b1 has no legal move - `moves b1`\s+lists what is legal")
    cli.quit()
    assert "is no move" not in cli.screen()


def test_a_mistake_is_one_line_in_words_wrapped_to_the_terminal(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["play", "war", "--side", "south"], tmp_path, stack, size=(40, 60))
    cli.expect(r"South > ")
    cli.send("e3-e6")
    expected = (
        "error: illegal: the South Troop on e3 cannot go to e6: a Troop steps forward, "
        "double-steps on its first move, captures diagonally forward or jumps an enemy Troop "
        "diagonally forward - `moves e3` lists what is legal"
    )

    def shown(c: Cli) -> bool:
        rows = c.rows()
        start = next((i for i, row in enumerate(rows) if row.startswith("error: illegal")), -1)
        if start < 0:
            return False
        end = next((i for i in range(start, len(rows)) if rows[i].endswith("is legal")), -1)
        return end >= 0 and " ".join(rows[start : end + 1]) == expected

    cli.wait_screen(shown)  # whole words on each row, nothing cut mid-word
    assert all(len(row) <= 60 for row in cli.rows())
    assert "(7)" not in cli.screen() and "e3-e4, e3-e5" not in cli.screen()
    cli.send("moves e3")  # the alternatives, when asked
    cli.expect_text("2 legal action(s) from e3 for South:")
    cli.expect_text("e3-e4  e3-e5")
    cli.quit()


def test_a_new_player_at_a_terminal_is_asked_for_a_name(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "war", "--side", "south", "--setup", WAR_CITADEL]
    cli = run(clients, args, tmp_path, stack, env={"WARGAME_NAME": ""})
    cli.expect_text("Your name for other players (Enter: ")
    cli.send("Ada Lovelace")
    cli.expect_text("Registered as Ada Lovelace (a guest)")
    cli.expect(r"South > ")
    cli.quit()
    # Known from then on: not asked again.
    again = run(clients, args, tmp_path, stack, env={"WARGAME_NAME": ""})
    again.expect(r"South > ")
    assert "Your name" not in again.screen() and "Registered" not in again.screen()


def test_the_first_lines_of_a_new_player_are_wrapped_by_words(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # A new player's first lines (registered, the game's welcome) are longer than a
    # 60-column terminal: each breaks between words, as the game's own messages do.
    args = ["play", "war", "--side", "south", "--level", "1", "--name", "newcomer"]
    cli = run(clients, args, tmp_path, stack, size=(40, 60))
    cli.expect(r"South > ")
    rows = cli.rows()

    def joined(start: str) -> str:
        first = next(index for index, row in enumerate(rows) if row.startswith(start))
        end = next(index for index in range(first, len(rows)) if rows[index].endswith("."))
        return " ".join(row.strip() for row in rows[first : end + 1])

    registered = next(row for row in rows if row.startswith("Registered as "))
    assert registered == "Registered as newcomer (a guest); your token is kept in", cli.text()
    assert re.fullmatch(
        r"Game \S+: you play South against the bot at level 1 of 5, the easiest \(`--level 5` "
        r"is the strongest\)\.",
        joined("Game "),
    ), cli.text()
    assert all(len(row) <= 60 for row in rows)
    cli.quit()


def test_the_battle_welcome_names_a_square_of_the_battle(launch: Launch) -> None:
    cli = launch(["play", "battle", "--side", "attacker"])
    cli.expect(r"`moves (\S+)`: from one square")
    square = cli.child.match.group(1)
    assert square.isdigit() and 1 <= int(square) <= 139, square
    cli.expect(r"Attacker > |waiting for Defender")
    cli.quit()


def test_napoleonic_marks_moves_sums_attacks_and_ends_what_has_no_choice(launch: Launch) -> None:
    cli = launch(["play", "napoleonic", "--side", "red", "--setup", NAPOLEONIC_ADVANCE])
    cli.expect(r"Red - movement > ")
    cli.send("move a1-b1")
    cli.expect_text("moved this turn: b1")
    cli.send("move h1-h2")  # (the last move is bracketed in ASCII; earlier ones are marked)
    cli.expect_text("moved this turn: b1, h2")
    cli.expect(r"\n1\s+\.\s+'G")  # the Guards on b1, marked as moved
    cli.expect_text("' moved this turn")
    cli.send("end")
    cli.expect(r"Red - attack declaration > ")
    cli.send("attack d4>d5")
    cli.expect_text("Attack on Infantry at d5: attack 1 vs defence 1 (before supports)")
    cli.send("attack c5>d5")
    # Only `end` is legal now: the client sends it, the combat is resolved.
    cli.expect_text("Nothing else is legal in the attack phase: `end` sent.")
    cli.expect_text("Attack on Infantry at d5: attack 2 vs defence 1 -> eliminated")
    cli.expect(r"Red - advance > ")
    cli.send("advance d4>d5")
    cli.expect_text("You: advance d4>d5")
    cli.expect_text("Nothing else is legal in the advance phase: `end` sent.")
    cli.expect(r"Black: ")  # the bot's turn came without another `end`
    cli.expect(r"Red - movement > ")
    cli.quit()
    assert "auto_skip_defence" not in cli.screen()  # option names stay out of the game


def said(cli: Cli, text: str) -> None:
    """Wait until the screen shows `text`, whatever rows it was word-wrapped into."""
    cli.wait_screen(lambda c: text in " ".join(c.text().split()))


# The three games at both sizes, in colour and NO_COLOR, from set-up positions:
# tests/system/test_cli_full_screen.py (`test_what_each_game_says_...`); the War opening
# (its Flying Machines in reserve) at one combination here, the others with `make test-slow`.
@pytest.mark.parametrize(
    ("size", "colour"),
    [
        pytest.param((24, 80), "colour", id="80x24-colour"),
        pytest.param((45, 120), "colour", id="120x45-colour", marks=pytest.mark.slow),
        pytest.param((24, 80), "NO_COLOR", id="80x24-NO_COLOR", marks=pytest.mark.slow),
        pytest.param((45, 120), "NO_COLOR", id="120x45-NO_COLOR", marks=pytest.mark.slow),
    ],
)
def test_chess_habits_keep_the_piece_and_the_opponents_man_is_named(
    launch: Launch, size: tuple[int, int], colour: str
) -> None:
    # Full screen: `Nf3` and `e2e4` in the War opening are never turned into a Flying
    # Machine's placement; moving one of North's men says whose it is and which are yours.
    env = {"NO_COLOR": "1"} if colour == "NO_COLOR" else {}
    cli = launch(["play", "war", "--side", "south"], ascii_only=False, size=size, env=env)
    cli.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    cli.send("Nf3")
    said(cli, "no Horse of yours can go to f3; what can: Ch1-f3, f2-f3, F@f3")
    cli.send("e2e4")
    said(cli, "there is no man on e2")
    cli.send("a8-a7")
    how = "outlined ♔, capitals K" if colour == "colour" else "capitals K"
    said(cli, f"a8 is North's Troop, not yours; yours are South's: {how}")
    seen = cli.screen()
    assert "did you mean F@" not in seen and "has no legal move" not in seen, seen[-2000:]
    cli.quit()
