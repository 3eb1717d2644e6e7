"""A game of each kind against the bot, played to the end by a real `wargame` in a pty.

Each starts from a position that ends in a few actions (`--setup`), so the whole game is
typed, drawn, answered by the bot through the matchmaker, and finished with the result;
then the game is played again with the sides swapped, and the bot answers a draw offer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.system.cli_support import (
    BATTLE_CITADEL,
    NAPOLEONIC_GUARDS,
    WAR_CITADEL,
    Cli,
    Launch,
    Player,
    Stack,
    game_id_of,
    run,
)
from wargame.v1 import matchmaker_pb2

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-bot-games")]


def test_game_of_war_citadel_taken_and_held(launch: Launch) -> None:
    cli = launch(["play", "war", "--vs", "bot", "--side", "south", "--setup", WAR_CITADEL])
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
    # The engine writes `#C` on North's reply, after which the Citadel held: the player
    # reads that reply plain, and the result line says who won.
    assert re.search(r"North: a7-a[56]\s", cli.screen()) and "#C" not in cli.screen()
    cli.expect_text("wargame record")
    cli.expect_text("Play again: `rematch` starts a new game with the sides swapped")
    cli.quit()


def test_game_of_battle_citadel_taken_after_the_bots_move(launch: Launch) -> None:
    args = ["play", "battle", "--side", "attacker", "--clock", "10+5", "--setup", BATTLE_CITADEL]
    cli = launch(args)
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
    cli.end_input()  # after the game, end of input leaves too
    assert cli.wait() == 0


def test_napoleonic_guards_eliminated_with_the_phases_walked_through(launch: Launch) -> None:
    args = ["play", "napoleonic", "--side", "red", "-o", "first_player=black"]
    cli = launch([*args, "--setup", NAPOLEONIC_GUARDS])
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
    cli.expect(r"Game over: you win \S Red eliminates Black's Guards(?!:)")  # sides as shown
    cli.quit_after_the_game()


def test_in_game_errors_hints_and_leaving(launch: Launch) -> None:
    cli = launch(["play", "war", "--side", "south"])
    cli.expect(r"South > ")
    game_id = game_id_of(cli)
    cli.send("a1-a5")
    cli.expect(r"error: illegal: .*Mortar on a1 cannot go to a5[^\n]*\n")
    cli.send("zz-top")
    cli.expect(r"error: not understood: [^\n]*\n")
    cli.send("help")
    cli.expect_text("Notation: Squares a1..j10")
    cli.send("hint")
    # The coach's level (one above the bot's, which is 1 for a first game: the easiest),
    # then the verdict in words (wins in 2, loses in 3, about even, +1.5 material), no raw score.
    cli.expect(r"Hint \(level 2\): \S+ \((about even|wins in \d|loses in \d|[-+]\d+\.\d material)")
    cli.send("e3-e4")
    cli.expect(r"North: ")  # the bot answers
    cli.expect(r"South > ")
    cli.interrupt()
    # Nobody else waits in a game against the bot: it waits for its player, never abandoned.
    cli.expect_text(f"you left game {game_id}; the bot waits for you - `wargame resume")
    assert cli.wait() == 130
    # Come back to it, then leave with end of input.
    again = launch(["resume", game_id])
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
    cli.quit_after_the_game()
    resume = run(clients, ["resume", game_id], tmp_path, stack)
    resume.expect(r"wargame: error: the game is over: you win — the South Mortar on j10 held")
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
    replay.expect_text("Result: South wins")
    replay.send("q")
    assert replay.wait() == 0


def test_play_again_against_the_bot_with_the_sides_swapped(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "war", "--side", "south", "--level", "2", "--setup", WAR_CITADEL]
    cli = run(clients, args, tmp_path, stack)
    cli.expect_text("against the bot at level 2 of 5")
    cli.expect(r"South > ")
    first = game_id_of(cli)
    cli.send("rematch")
    cli.expect_text("error: `rematch` is for after the game; this one is still being played")
    cli.send("Mj1xj10")
    cli.expect_text("Game over: you win")
    cli.expect_text("Play again: `rematch` starts a new game with the sides swapped")
    cli.expect(r"rematch or quit > ")
    cli.send("e3-e4")
    cli.expect_text("error: the game is over: `rematch` plays again, `quit` leaves")
    cli.send("rematch")
    cli.expect(r"Game (\S+): you play North against the bot at level 2 of 5")
    second = cli.child.match.group(1)
    assert second != first
    # The same position, sides swapped: the bot plays South, which is to move in it.
    if cli.expect([r"North > ", r"Game over: "], timeout=30) == 0:
        cli.send("resign!")
        cli.expect_text("Game over: you lose")
    cli.quit_after_the_game()
    player = Player(stack, tmp_path)
    try:
        view = player.game(second)
    finally:
        player.close()
    assert view.rematch_of == first and view.your_side == "north"
    bot = next(seat for seat in view.seats if seat.kind == matchmaker_pb2.SEAT_KIND_BOT)
    assert (bot.side, bot.bot_level) == ("south", 2)
    assert json.loads((tmp_path / "identity.json").read_text())["last_game"] == {
        stack.address: second
    }  # `wargame resume` comes back to the rematch


def test_the_bot_answers_a_draw_offer(launch: Launch) -> None:
    cli = launch(["play", "battle", "--side", "attacker"])
    cli.expect(r"Attacker > ")
    cli.send("draw")
    cli.expect_text("Your draw offer stands.")
    answer = cli.expect(
        [r"Defender \(bot\) accepts your draw offer\.", r"Defender \(bot\) declines your draw "]
    )
    if answer == 0:
        cli.expect_text("Game over: draw - drawn by agreement")
        cli.expect(r"rematch or quit > ")
    else:
        cli.expect(r"Attacker > ")
    cli.quit()
