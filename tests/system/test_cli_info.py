"""`wargame games` and `wargame rules GAME` in a terminal: every game described and drawn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.system.cli_support import Cli, Stack, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-info")]


def test_games_is_a_short_overview(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    games = run(clients, ["games"], tmp_path, stack, ascii_only=False)
    assert games.wait() == 0
    screen = games.screen()
    for title in ("The Game of War (Hudson Maxim, 1910)", "War-Chess", "Napoleonic Chess"):
        assert title in screen
    for game in ("war", "battle", "napoleonic"):
        assert re.search(rf"\d+ options: `wargame games {game}`", screen)
    assert "compulsion" not in screen and "=" not in screen  # no option list here
    assert len(screen.strip().splitlines()) <= 8


def test_games_of_one_game_lists_its_options_whatever_the_case(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    games = run(clients, ["games", "War"], tmp_path, stack, ascii_only=False)
    assert games.wait() == 0
    screen = games.screen()
    assert "The Game of War (Hudson Maxim, 1910)" in screen and "War-Chess" not in screen
    for option in ("compulsion = legality", "options (--option name=value):"):
        assert option in screen
    assert "wargame play war --vs bot" in screen


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["rules", "war"], ["⌂ Citadel", "♔♚ K King", "F Flying Machine", "Notation", "e3-e4"]),
        (["rules", "Battle"], ["≡47", "╪70", "⌂19", "≈ river", "134", "Light Infantry", "36-51"]),
        (
            ["rules", "napoleonic", "-o", "scenario=hill_and_stream"],
            ["▲ hill", "━ obstacle", "Hill and Stream", "attack d4>e5"],
        ),
    ],
)
def test_rules_draw_the_board_and_summarise(
    stack: Stack, clients: list[Cli], tmp_path: Path, args: list[str], expected: list[str]
) -> None:
    rules = run(clients, args, tmp_path, stack, ascii_only=False)
    assert rules.wait() == 0
    screen = rules.screen()
    for text in expected:
        assert text in screen, text
