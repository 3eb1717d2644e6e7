"""A noisy level searches as deeply as the strongest: its noise on the root's actions is
taken into the root's window (`search.search`), so level 4's depth cap of 3, not a full
window, sets how far it sees, and level 4 looks deeper than level 3 (cap 2)."""

from __future__ import annotations

import pytest

from engine_service.ai import suggest
from engine_service.ai.levels import LEVELS
from engine_service.rules.game import Game
from tests.engine_service.ai.helpers import RULES, random_position

POSITIONS = ((10, 1), (30, 2), (50, 3))


@pytest.mark.parametrize("game", ["war", "battle"])
@pytest.mark.parametrize(("plies", "seed"), POSITIONS)
def test_level_4_searches_depth_3_for_about_the_strongest_levels_work(
    game: str, plies: int, seed: int
) -> None:
    # A full window at the root cost level 4 three to seven times the strongest's nodes
    # at the same depth, so that within its time it reached depth 2 only, like level 3.
    ruleset = RULES[game]
    state = random_position(game, plies, seed)
    side = ruleset.to_act(state)[0]
    nodes = {}
    for level in (4, 5):
        found = suggest(
            Game(ruleset, state), side=side, seconds=600, max_depth=3, seed=1, strength=level
        )
        assert found.depth == 3
        nodes[level] = found.nodes
    assert nodes[4] <= 2 * nodes[5], nodes
    assert LEVELS[4].max_depth > LEVELS[3].max_depth
