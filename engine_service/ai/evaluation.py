"""Position evaluation for the search: material, plus each game's objectives.

Values are from one side's view, in the game's material units; a decided game is worth
±WIN (0 for a draw).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_service.rules.base import AnyRuleset, Outcome

WIN = 100_000.0

# Material values by piece kind, per game (objectives are added by the game's evaluator).
MATERIAL: dict[str, dict[str, float]] = {
    "war": {"king": 3, "general": 9, "mortar": 5, "cannon": 3, "horse": 3, "troop": 1, "flying_machine": 0},
    "battle": {"light_infantry": 2, "infantry_of_the_line": 3, "cavalry": 4, "artillery": 5, "citadel": 0, "wagon": 0},
    "napoleonic": {
        "infantry": 1, "cavalry": 1.5, "artillery": 2, "guards": 6, "horse_artillery": 1.5,
        "dragoons": 1.5, "foot_guards": 2, "cuirassiers": 2, "heavy_infantry": 2,
    },
}

Evaluator = Callable[[AnyRuleset, Any, str], float]
EVALUATORS: dict[str, Evaluator] = {}


def material(ruleset: AnyRuleset, state: Any, side: str) -> float:
    """Own material minus the opponents'."""
    values = MATERIAL.get(ruleset.id, {})
    total = 0.0
    for piece in ruleset.pieces(state):
        worth = values.get(piece.kind, 1.0)
        total += worth if piece.side == side else -worth
    return total


def evaluate(ruleset: AnyRuleset, state: Any, side: str, outcome: Outcome | None) -> float:
    """The value of `state` for `side`: ±WIN or 0 once decided, else the game's evaluation."""
    if outcome is not None:
        if outcome.winner is None:
            return 0.0
        return WIN if outcome.winner == side else -WIN
    evaluator = EVALUATORS.get(ruleset.id, material)
    return evaluator(ruleset, state, side)
