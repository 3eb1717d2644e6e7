"""Position evaluation shared by the games: material, and the value of a finished game.

Values are from one side's view, in the game's material units (a Troop, a Light Infantry,
an Infantry unit is about 1); a decided game is worth ±WIN, a draw 0. The games with an
evaluation of their own objectives register it in `EVALUATORS` (the Game of War's
Citadels, the Game of Battle's Citadel and Wagon); the generic search policy uses this
module for any other game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_service.rules.base import AnyRuleset, Outcome

WIN = 100_000.0

# Material values by piece kind, per game (objectives are added by the game's evaluator).
MATERIAL: dict[str, dict[str, float]] = {
    "war": {
        "king": 3.0,
        "general": 9.0,
        "mortar": 5.0,
        "cannon": 3.25,
        "horse": 3.0,
        "troop": 1.0,
        "flying_machine": 0.0,
    },
    "battle": {
        "light_infantry": 2.0,
        "infantry_of_the_line": 3.0,
        "cavalry": 4.5,
        "artillery": 3.5,
        "citadel": 0.0,
        "wagon": 0.0,
    },
    "napoleonic": {
        "infantry": 1.0,
        "cavalry": 1.5,
        "artillery": 2.0,
        "guards": 6.0,
        "horse_artillery": 1.5,
        "dragoons": 1.5,
        "foot_guards": 2.0,
        "cuirassiers": 2.0,
        "heavy_infantry": 2.0,
    },
}

Evaluator = Callable[[AnyRuleset, Any, str], float]
EVALUATORS: dict[str, Evaluator] = {}


def material(ruleset: AnyRuleset, state: Any, side: str) -> float:
    """Own material minus the opponents' (through the public `pieces` view)."""
    values = MATERIAL.get(ruleset.id, {})
    total = 0.0
    for piece in ruleset.pieces(state):
        worth = values.get(piece.kind, 1.0)
        total += worth if piece.side == side else -worth
    return total


def outcome_value(outcome: Outcome, side: str) -> float:
    """WIN, -WIN or 0: a finished game from `side`'s view."""
    if outcome.winner is None:
        return 0.0
    return WIN if outcome.winner == side else -WIN


def evaluate(ruleset: AnyRuleset, state: Any, side: str, outcome: Outcome | None) -> float:
    """The value of `state` for `side`: ±WIN or 0 once decided, else the game's evaluation."""
    if outcome is not None:
        return outcome_value(outcome, side)
    evaluator = EVALUATORS.get(ruleset.id, material)
    return evaluator(ruleset, state, side)
