"""A game of each kind against the bot, played to the end by a real `wargame` in a pty.

Each starts from a position that ends in a few actions (`--setup`), so the whole game is
typed, drawn, answered by the bot through the matchmaker, and finished with the result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system.cli_support import (
    BATTLE_CITADEL,
    NAPOLEONIC_GUARDS,
    WAR_CITADEL,
    Cli,
    Stack,
    clients,
    game_id_of,
    run,
    stack,
)

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-bot-games")]
__all__ = ["clients", "stack"]  # fixtures used by name


def test_game_of_war_citadel_taken_and_held(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(
        clients,
        ["play", "war", "--vs", "bot", "--side", "south", "--setup", WAR_CITADEL],
        tmp_path,
        stack,
    )
    cli.expect_text("Registered as")
    cli.expect_text("you play South")
    cli.expect(r"South > ")
    screen = cli.screen()
    assert "# Citadel" in screen and re.search(r"1\s+K#", screen)  # South's King on its Citadel a1
    cli.send("moves j1")
    cli.expect_text("Mj1-j9")
    cli.send("Mj1xj10")
    cli.expect_text("You: Mj1xj10")
    cli.expect_text("enters North's Citadel j10")
    cli.expect(r"North: a7-a[56]")  # the bot's only men: a Troop
    cli.expect_text("Game over: you win")
    cli.expect_text("held North's Citadel")
    cli.expect_text("wargame record")
    assert cli.wait() == 0


def test_game_of_battle_citadel_taken_after_the_bots_move(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "battle", "--side", "attacker", "--clock", "10+5", "--setup", BATTLE_CITADEL]
    cli = run(clients, args, tmp_path, stack)
    cli.expect_text("you play Attacker")
    cli.expect(r"Defender: \d+-\d+")  # the bot (defender) moves first
    cli.expect(r"Attacker > ")
    screen = cli.screen()
    assert "T#19" in screen and "c34" in screen  # the Citadel on 19, the attacking Cavalry on 34
    assert re.search(r"Attacker\s+\S+ \(you\)\s+(10:00|9:[0-5]\d)\s+<", screen)  # its clock runs
    assert "~ river" in screen and "=47" in screen and "+70" in screen
    cli.send("34x19")
    cli.expect_text("You: 34x19")
    cli.expect_text("Game over: you win")
    cli.expect_text("taken the Citadel")
    assert cli.wait() == 0


def test_napoleonic_guards_eliminated_with_the_phases_walked_through(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "napoleonic", "--side", "red", "-o", "first_player=black"]
    cli = run(clients, [*args, "--setup", NAPOLEONIC_GUARDS], tmp_path, stack)
    cli.expect_text("you play Red")
    # Black (the bot) plays its turn first; if it attacks, Red is asked for supports.
    while cli.expect([r"Movement: move any of your units", r"Defence: support"], timeout=30) == 1:
        cli.expect(r"Red - defence > ")
        cli.send("end")
    cli.expect(r"Red - movement > ")
    cli.send("end")
    cli.expect_text("Attacks: declare each attack")
    cli.expect(r"Red - attack declaration > ")
    cli.send("moves")
    cli.expect_text("attack h7>h8")
    cli.send("attack h7>h8")
    cli.expect(r"attacks: h7>h8")
    # The running sums, from the engine's own resolution of a copy of the state.
    cli.expect_text("Attack on Guards at h8: attack 2 vs defence 2 (before supports)")
    cli.send("attack g8>h8")
    cli.expect(r"attacks: h7>h8, g8>h8")
    cli.expect_text("Attack on Guards at h8: attack 3 vs defence 2 (before supports)")
    cli.send("end")
    cli.expect(r"Attack on Guards at h8: attack 3 vs defence 2 -> eliminated")
    cli.expect_text("attack:  artillery h7 +2, infantry g8 +1")
    cli.expect_text("Game over: you win")
    assert cli.wait() == 0


def test_in_game_errors_hints_and_leaving(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    cli = run(clients, ["play", "war", "--side", "south"], tmp_path, stack)
    cli.expect(r"South > ")
    game_id = game_id_of(cli)
    cli.send("a1-a5")
    cli.expect(r"error: illegal: .*Mortar on a1 cannot go to a5[^\n]*\n")
    cli.send("zz-top")
    cli.expect(r"error: not understood: [^\n]*\n")
    cli.send("help")
    cli.expect_text("Notation: Squares a1..j10")
    cli.send("hint")
    # The verdict in words (wins in 2, loses in 3, about even, +1.5 material), no raw score.
    cli.expect(r"Hint: \S+ \((about even|wins in \d|loses in \d|[-+]\d+\.\d material)")
    cli.send("e3-e4")
    cli.expect(r"North: ")  # the bot answers
    cli.expect(r"South > ")
    cli.interrupt()
    cli.expect_text(f"you left game {game_id}; it goes on")
    assert cli.wait() == 130
    # Come back to it, then leave with end of input.
    again = run(clients, ["resume", game_id], tmp_path, stack)
    again.expect_text(f"Resuming game {game_id}: you play South")
    again.expect(r"Moves so far: e3-e4, \S+")
    again.expect(r"South > ")
    again.end_input()
    again.expect_text("end of input: you left game")
    assert again.wait() == 0


def test_a_finished_game_cannot_be_resumed_and_its_record_replays(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["play", "war", "--side", "south", "--setup", WAR_CITADEL], tmp_path, stack)
    cli.expect(r"South > ")
    game_id = game_id_of(cli)
    cli.send("Mj1xj10")
    cli.expect_text("Game over: you win")
    assert cli.wait() == 0
    resume = run(clients, ["resume", game_id], tmp_path, stack)
    resume.expect(r"wargame: error: the game is over: you win — south wins[^\n]*\n")
    assert resume.wait() == 1
    record_file = tmp_path / "game.record"
    record = run(clients, ["record", game_id, "-o", str(record_file)], tmp_path, stack)
    record.expect_text(f"wrote the record of game {game_id}")
    assert record.wait() == 0
    assert "Mj1xj10" in record_file.read_text()
    replay = run(clients, ["replay", str(record_file)], tmp_path, stack)
    replay.expect_text("start (2 actions)")
    replay.expect(r"replay 0/2 > ")
    replay.send("")
    replay.expect_text("Action 1/2: South: Mj1xj10")
    replay.send("b")
    replay.expect_text("start (2 actions)")
    replay.send("2")
    replay.expect(r"Action 2/2: North: a7-a[56]")
    replay.expect_text("Result: south wins")
    replay.send("q")
    assert replay.wait() == 0
