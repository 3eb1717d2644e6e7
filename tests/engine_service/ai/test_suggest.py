"""`suggest` for every game: legal, on time, with its line, deterministic, and refusals."""

from __future__ import annotations

import gc
import time

import pytest

from engine_service.ai import suggest
from engine_service.ai.napoleonic import clear_plans
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game, Resign
from tests.engine_service.ai.helpers import GAMES, RULES, new_state, random_position

POSITIONS = [(plies, seed) for plies, seed in ((0, 1), (7, 2), (20, 3), (45, 4), (90, 5))]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize(("plies", "seed"), POSITIONS)
def test_the_suggestion_is_legal_and_its_line_starts_with_it(
    game: str, plies: int, seed: int
) -> None:
    ruleset = RULES[game]
    state = random_position(game, plies, seed)
    side = ruleset.to_act(state)[0]
    found = suggest(Game(ruleset, state), side=side, seconds=0.03, seed=seed)
    ruleset.validate(state, found.action)  # raises RuleError if illegal
    assert ruleset.actor(state, found.action) == side
    assert found.line and found.line[0] == ruleset.format_action(state, found.action)
    assert found.depth >= 1 and found.nodes >= 1


@pytest.mark.parametrize("game", GAMES)
def test_a_50_ms_budget_is_kept_in_cpu_time(game: str) -> None:
    # The budget is the searching thread's CPU time (`ai/budget.py`): what a busy machine
    # adds on the clock is not the search's, and what the search spends is bounded. Nor is
    # a collection of this test worker's heap (0.1-0.5 s of CPU after hundreds of tests; a
    # search runs in a pool process of its own): the heap is kept out of the collector
    # meanwhile, while the search's own garbage is collected as it comes.
    ruleset = RULES[game]
    slowest = 0.0
    for seed in range(6):
        state = random_position(game, 6 * seed, seed)
        game_ = Game(ruleset, state)
        side = ruleset.to_act(state)[0]
        clear_plans()
        gc.freeze()
        try:
            started = time.thread_time()
            suggest(game_, side=side, seconds=0.05, seed=seed, wall=3600.0)
            slowest = max(slowest, time.thread_time() - started)
        finally:
            gc.unfreeze()
    assert slowest < 0.15


@pytest.mark.parametrize("game", GAMES)
def test_the_same_state_and_seed_give_the_same_suggestion(game: str) -> None:
    ruleset = RULES[game]
    state = random_position(game, 12, 9)
    side = ruleset.to_act(state)[0]
    first = suggest(Game(ruleset, state), side=side, seconds=5, max_depth=2, seed=4)
    clear_plans()
    again = suggest(Game(ruleset, state), side=side, seconds=5, max_depth=2, seed=4)
    assert again.action == first.action and again.line == first.line


def test_suggest_refuses_a_finished_game_and_the_wrong_side() -> None:
    ruleset = RULES["war"]
    game = Game(ruleset, new_state("war"))
    with pytest.raises(RuleError) as wrong:
        suggest(game, side="north", seconds=0.01)
    assert wrong.value.reason is Reason.NOT_YOUR_TURN
    over, _events = game.apply("south", Resign("south"))
    with pytest.raises(RuleError) as ended:
        suggest(over, side=None, seconds=0.01)
    assert ended.value.reason is Reason.GAME_OVER
