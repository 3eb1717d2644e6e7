"""`wargame games` and `wargame rules GAME` in a terminal: every game described and drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system.cli_support import Cli, Stack, clients, run, stack

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-info")]
__all__ = ["clients", "stack"]


def test_games_lists_the_rulesets_and_their_options(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    games = run(clients, ["games"], tmp_path, stack, ascii_only=False)
    assert games.wait() == 0
    screen = games.screen()
    for title in ("The Game of War (Hudson Maxim, 1910)", "War-Chess", "Napoleonic Chess"):
        assert title in screen
    for option in (
        "compulsion = legality",
        "scenario = standard",
        "options (--option name=value):",
    ):
        assert option in screen
    assert "wargame play battle --vs bot" in screen


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["rules", "war"], ["⌂ Citadel", "♚ King", "Flying Machine", "Notation", "e3-e4"]),
        (["rules", "battle"], ["≡47", "╪70", "⌂19", "≈ river", "134", "Light Infantry", "36-51"]),
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
