"""A search's budget is CPU time, the wall clock only its cap (`engine_service/ai/budget.py`):
a busy machine that gives the search little of its time makes it slower, not shallower,
until the cap cuts it short, which the answer says.

Waiting stands in for a busy machine: it passes time on the clock and none on the CPU.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine_service.ai import suggest
from engine_service.ai.budget import Budget
from engine_service.ai.levels import LEVELS, STRONGEST
from engine_service.ai.napoleonic import clear_plans, plan_suggestion
from engine_service.ai.napoleonic.plan_cache import recall
from engine_service.ai.search import Suggestion, Terms, search
from engine_service.ai.war import WarPolicy
from engine_service.rules.game import Game
from tests.engine_service.ai.helpers import GAMES, RULES, new_state, random_position


def burn(budget: Budget) -> int:
    """Spin until the budget is spent; the rounds it took."""
    rounds = 0
    while not budget.spent():
        rounds += 1
    return rounds


def test_a_budget_is_spent_by_work_not_by_waiting() -> None:
    budget = Budget(0.02, wall=3600.0)
    time.sleep(0.05)  # more than the budget passes on the clock: nothing is spent
    assert not budget.spent()
    assert burn(budget) > 0
    assert budget.spent() and not budget.cut_short


def test_the_wall_clock_cap_cuts_a_budget_short_and_says_so() -> None:
    budget = Budget(3600.0, wall=0.01)
    assert not budget.cut_short
    while not budget.spent():
        time.sleep(0.005)
    assert budget.cut_short


class WaitingPolicy(WarPolicy):
    """The War policy on a machine that gives the search a little of every millisecond."""

    def evaluate(self, state: Any, side: str) -> float:
        time.sleep(0.001)
        return super().evaluate(state, side)


def test_a_search_on_a_starved_machine_is_cut_short_by_the_cap_and_says_so() -> None:
    ruleset = RULES["war"]
    state = random_position("war", 10, 3)
    side = ruleset.to_act(state)[0]
    starved = search(WaitingPolicy(ruleset), state, side, seconds=5.0, wall=0.05)
    assert starved.cut_short
    ruleset.validate(state, starved.action)  # still a considered, legal action


def suggested(game: str, *, seconds: float, wall: float) -> tuple[Any, Suggestion]:
    """A position of `game` (plans forgotten) and the suggestion for the side to act in it
    within `seconds` of CPU time and `wall` seconds on the clock."""
    ruleset = RULES[game]
    state = random_position(game, 8, 5)
    side = ruleset.to_act(state)[0]
    clear_plans()
    return state, suggest(Game(ruleset, state), side=side, seconds=seconds, seed=1, wall=wall)


@pytest.mark.parametrize("game", GAMES)
def test_a_search_that_spends_its_budget_is_not_cut_short(game: str) -> None:
    _state, found = suggested(game, seconds=0.05, wall=3600.0)
    assert not found.cut_short


@pytest.mark.parametrize("game", GAMES)
def test_the_same_search_on_a_starved_machine_is_cut_short(game: str) -> None:
    # A cap shorter than any search: the answer comes, and says it was cut short.
    state, found = suggested(game, seconds=3600.0, wall=1e-9)
    RULES[game].validate(state, found.action)
    assert found.cut_short


def test_a_napoleonic_plan_is_remembered_for_its_own_budget_only() -> None:
    # A plan made under a small budget does not answer a request with a larger one.
    ruleset = RULES["napoleonic"]
    state = new_state("napoleonic")
    level = LEVELS[STRONGEST]
    clear_plans()
    plan_suggestion(ruleset, state, "red", Terms(seconds=0.5, seed=2, level=level))
    assert recall(state, "red", 2, level, 0.5) is not None
    assert recall(state, "red", 2, level, 2.0) is None
