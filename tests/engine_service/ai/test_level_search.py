"""How the levels search (`engine_service/ai/levels.py`).

A noisy level searches as deeply as the strongest: its noise on the root's actions is
taken into the root's window (`search.search`), so level 4's depth cap of 3, not a full
window, sets how far it sees, and level 4 looks deeper than level 3 (cap 2). The strongest
level varies its choice among near-equal actions by the seed. A game plays a level as its
own table says (`levels.GAME_LEVELS`).
"""

from __future__ import annotations

import pytest

from engine_service.ai import levels, suggest
from engine_service.ai.levels import LEVELS
from engine_service.ai.napoleonic import clear_plans
from engine_service.rules.game import Game
from tests.engine_service.ai.helpers import GAMES, RULES, new_state, random_position

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


@pytest.mark.parametrize("game", GAMES)
def test_the_strongest_level_varies_its_play_with_the_seed(game: str) -> None:
    # Two games against level 5 from one start are not one game; a hint (another seed)
    # is not always the bot's own move. At one seed, the same answer every time.
    ruleset = RULES[game]
    state = new_state(game)
    side = ruleset.to_act(state)[0]
    depth = 0 if game == "napoleonic" else 2  # the planner plans whole phases
    lines = {}
    for seed in range(8):
        clear_plans()
        found = suggest(Game(ruleset, state), side=side, seconds=600, max_depth=depth, seed=seed)
        lines[seed] = found.line
    assert len({" ".join(line) for line in lines.values()}) >= 2, lines
    clear_plans()
    again = suggest(Game(ruleset, state), side=side, seconds=600, max_depth=depth, seed=3)
    assert again.line == lines[3]


@pytest.mark.parametrize(
    ("game", "number", "share"),
    [
        ("war", 1, 0.4),
        ("battle", 1, 0.4),
        ("napoleonic", 1, 0.5),
        ("war", 2, 0.2),
        ("battle", 2, 0.1),
    ],
)
def test_a_level_takes_its_games_share_of_actions_at_random(
    game: str, number: int, share: float
) -> None:
    # Napoleonic Chess's level 1 takes half its actions at random, the other games' 40 %;
    # Battle's level 2 a tenth, War's a fifth: a random action is one looked at to no
    # depth. The seeds fix the draws (400 of them: a share's standard deviation is at most
    # 0.025).
    ruleset = RULES[game]
    state = random_position(game, 20, 1)
    side = ruleset.to_act(state)[0]
    picks = [
        suggest(
            Game(ruleset, state), side=side, seconds=600, max_depth=1, seed=seed, strength=number
        )
        for seed in range(400)
    ]
    at_random = sum(pick.depth == 0 for pick in picks) / len(picks)
    assert abs(at_random - share) < 0.05, at_random
    assert levels.level(number, game).blunders == share
