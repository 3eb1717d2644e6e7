"""`wargame position`, `wargame rules GAME --position` and `wargame play GAME --position` in a
terminal: a position text printed, drawn, and played from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.rules.position import read_position, write_position
from tests.system.cli_support import WAR_CITADEL, Cli, Stack, game_id_of, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-positions")]

WAR = rulesets()["war"]


def _war_position(setup: str, **options: str) -> str:
    game: Game[object] = Game(WAR, WAR.new_game(WAR.resolve_options(options), setup))
    return write_position(game)


def test_rules_draws_a_position_text(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    text = _war_position(WAR_CITADEL, no_progress_limit="40")
    assert "no_progress_limit=40" in text
    rules = run(clients, ["rules", "war", "--position", text], tmp_path, stack)
    assert rules.wait() == 0
    screen = rules.screen()
    # North's King on its Citadel j10, South's on a1 and its Mortar on j1, a Troop on a7.
    assert re.search(r"^10 .*k#10", screen, re.M) and re.search(r"^ 1\s+K#.*M", screen, re.M)
    assert re.search(r"^ 7\s+t", screen, re.M)
    assert "Notation" in screen


def test_rules_refuses_a_position_that_could_not_arise(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    text = "9k/10/10/t9/10/10/10/10/10/KK7M S -:- citadels=a1,j10"  # two South Kings
    rules = run(clients, ["rules", "war", "--position", text], tmp_path, stack)
    assert rules.wait() == 1
    assert "south has 2 kings" in rules.screen().lower()


def test_play_from_a_position_and_print_the_game_s_position(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    text = _war_position(WAR_CITADEL, no_progress_limit="40")
    args = ["play", "war", "--vs", "bot", "--side", "south", "--plain", "--position", text]
    player = run(clients, args, tmp_path, stack)
    player.expect_text("you play South")
    player.expect(r"South > ")
    game_id = game_id_of(player)
    printed = run(clients, ["position", game_id], tmp_path, stack)
    assert printed.wait() == 0
    line = next(row.strip() for row in printed.screen().splitlines() if "S -:-" in row)
    assert line == text  # the game started from the position, options and all
    game = read_position(WAR, line)
    assert game.ruleset.options_of(game.state)["no_progress_limit"] == 40
    player.send("Mj1xj10")
    player.expect_text("Game over: you win")
    player.quit_after_the_game()
    after = run(clients, ["position", game_id], tmp_path, stack)
    assert after.wait() == 0
    finished = next(row.strip() for row in after.screen().splitlines() if "-:-" in row)
    assert read_position(WAR, finished).outcome is not None


def test_rules_draws_in_capitals_the_side_in_capitals_in_the_position_text(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    # South's King (K, on a10) at the top and North's (k, on j1) at the bottom: the board
    # keeps the text's letters, whichever side stands lower on it.
    text = _war_position("K9/10/10/10/10/10/10/10/10/9k S -:- citadels=j1,a10")
    assert text.startswith("K9/") and "/9k " in text
    rules = run(clients, ["rules", "war", "--position", text], tmp_path, stack)
    assert rules.wait() == 0
    screen = rules.screen()
    assert re.search(r"^10\s+K#", screen, re.M) and re.search(r"^ 1 .*k# ?1\s*$", screen, re.M)
    assert "UPPER south, lower north" in screen
