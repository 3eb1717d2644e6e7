"""Position evaluation shared by the games: material, and the value of a finished game.

Values are from one side's view, in the game's material units (a Troop, a Light Infantry,
an Infantry unit is about 1); a decided game is worth ±WIN, a draw 0. Each game's AI
declares its own material table (`MATERIAL` of `ai/war.py`, ...) and evaluates its own
objectives; `material` counts any game's pieces through the public `pieces` view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.rules.base import AnyRuleset, Outcome

WIN = 100_000.0


def material(ruleset: AnyRuleset, state: Any, side: str, values: Mapping[str, float]) -> float:
    """Own material minus the opponents', by `values` per piece kind (1 if not listed)."""
    total = 0.0
    for piece in ruleset.pieces(state):
        worth = values.get(piece.kind, 1.0)
        total += worth if piece.side == side else -worth
    return total


def outcome_value(outcome: Outcome, side: str) -> float:
    """WIN, -WIN or 0: a finished game from `side`'s view."""
    if outcome.winner is None:
        return 0.0
    return WIN if side in outcome.winning_sides else -WIN
