"""`suggest` for every game: legal, on time, with its line, deterministic, and refusals."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from engine_service.ai import search, suggest
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
def test_a_50_ms_budget_is_kept(game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The search keeps its budget by its clock (the wall's). Here its clock is the
    # process's CPU time, and so is the measure: a busy machine that preempts the search
    # changes neither, and a search that overran its budget would spend more than three
    # times the budget of CPU. Each position's best of three runs (a collection of garbage
    # is not the search's).
    monkeypatch.setattr(search, "time", SimpleNamespace(perf_counter=time.process_time))
    ruleset = RULES[game]
    slowest = 0.0
    for seed in range(6):
        state = random_position(game, 6 * seed, seed)
        game_ = Game(ruleset, state)
        side = ruleset.to_act(state)[0]
        times = []
        for _ in range(3):
            clear_plans()
            started = time.process_time()
            suggest(game_, side=side, seconds=0.05, seed=seed)
            times.append(time.process_time() - started)
        slowest = max(slowest, min(times))
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
