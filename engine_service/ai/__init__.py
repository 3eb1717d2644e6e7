"""Suggesting actions: search within a time budget, over any game's `Ruleset`.

`suggest(game, ...)` picks the game's strategy from the registry in `engine_service.ai.search`
(iterative-deepening alpha-beta with a per-game evaluation) and returns the action, its
evaluation from the suggesting side's view, the depth reached and the line it expects.
"""

from __future__ import annotations

from typing import Any

from engine_service.ai.search import Suggestion, search
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game

__all__ = ["Suggestion", "suggest"]


def suggest(
    game: Game[Any], *, side: str | None, seconds: float, max_depth: int = 0, seed: int = 0
) -> Suggestion:
    """The action the search prefers for `side` (default: the one side to act)."""
    outcome = game.outcome
    if outcome is not None:
        raise RuleError(Reason.GAME_OVER, f"the game is over: {outcome.message}")
    to_act = game.to_act()
    if side is None:
        if len(to_act) != 1:
            raise RuleError(Reason.ILLEGAL_ACTION, "say which side to suggest for: several may act")
        side = to_act[0]
    if side not in to_act:
        raise RuleError(Reason.NOT_YOUR_TURN, f"{side} cannot act now: {' and '.join(to_act)} to act")
    return search(game.ruleset, game.state, side, seconds=seconds, max_depth=max_depth, seed=seed)
