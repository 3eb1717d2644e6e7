"""The plans remembered: a plan is kept for every state along it (bounded), so asking again
after each of its actions continues the same plan."""

from __future__ import annotations

from collections.abc import Sequence

from engine_service.ai.levels import Level
from engine_service.ai.napoleonic.weights import PLAN_CACHE
from engine_service.memo import LruCache
from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic.actions import NapoleonicAction
from engine_service.rules.napoleonic.state import NapoleonicState

PlanKey = tuple[object, ...]
# The plan's value, its actions, and the turns to a win it makes sure of (see `Suggestion`).
Plan = tuple[float, tuple[NapoleonicAction, ...], int]
_CACHE: LruCache[PlanKey, Plan] = LruCache(PLAN_CACHE, "napoleonic plans")


def plan_key(state: NapoleonicState, side: str, seed: int, level: Level, seconds: float) -> PlanKey:
    """The cache key of a state (every compared field; the options by their values), for a
    side, a seed, a level and a budget (a plan made in less time is not a longer one's)."""
    return (
        side,
        seed,
        level,
        seconds,
        tuple(state.options.items()),
        state.scenario,
        state.width,
        state.height,
        state.players,
        state.turn_order,
        state.armies,
        state.units,
        state.terrain,
        state.phase,
        state.active,
        state.turn_number,
        state.turn,
        state.turns_since_elimination,
        state.position_history,
        state.deployment,
        state.outcome,
    )


def remember(
    ruleset: AnyRuleset,
    state: NapoleonicState,
    *,
    side: str,
    seed: int,
    level: Level,
    seconds: float,
    value: float,
    actions: Sequence[NapoleonicAction],
    wins_in: int,
) -> None:
    """Remember the plan for every state along it, so that the next calls continue it."""
    for i, action in enumerate(actions):
        _CACHE.put(
            plan_key(state, side, seed, level, seconds), (value, tuple(actions[i:]), wins_in)
        )
        if i + 1 < len(actions):
            state = ruleset.play(state, action)
            if ruleset.outcome(state) is not None or side not in ruleset.to_act(state):
                break


def recall(
    state: NapoleonicState, side: str, seed: int, level: Level, seconds: float
) -> Plan | None:
    """The value, the rest of the plan and its sure win remembered for this state, if any."""
    return _CACHE.get(plan_key(state, side, seed, level, seconds))


def clear_plans() -> None:
    """Forget every remembered plan (tests; a fresh process behaves the same)."""
    _CACHE.clear()
