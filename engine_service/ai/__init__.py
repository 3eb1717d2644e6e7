"""Suggesting actions within a time budget, for any registered game.

Each game names its AI in its registry entry (`engine_service.rules.games`): a function of
the ruleset giving a `Strategy`.

- the Game of War and the Game of Battle: iterative-deepening alpha-beta
  (`engine_service.ai.search`) with the game's policy (`war`, `battle`): an evaluation of
  material and objectives, capture-first move ordering, a quiescence search;
- Napoleonic Chess: the turn planner (`engine_service.ai.napoleonic`), which plans a whole
  turn of moves and attacks, allocates supports in defence and decides advances;
- a game registered without an AI: the same search over the public `Ruleset` interface,
  counting material.

`suggest` returns the action, its evaluation from the suggesting side's view, the depth
reached and the line it expects (starting with the action).
"""

from __future__ import annotations

from typing import Any, Protocol

from engine_service.ai.evaluation import outcome_value
from engine_service.ai.search import RulesetPolicy, SearchStrategy, Suggestion
from engine_service.memo import memo
from engine_service.rules import games, load
from engine_service.rules.base import AnyRuleset, Outcome, require_ongoing
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game

__all__ = ["Strategy", "Suggestion", "evaluate", "strategy_for", "suggest"]


class Strategy(Protocol):
    """A game's AI: the action it suggests, and what it thinks of a position."""

    def suggest(
        self, state: Any, side: str, *, seconds: float, max_depth: int, seed: int
    ) -> Suggestion:
        """The action for `side` within `seconds` (`max_depth` 0: no depth cap)."""

    def evaluate(self, state: Any, side: str) -> float:
        """The static value of an unfinished state for `side`."""


@memo(16)
def strategy_for(ruleset: AnyRuleset) -> Strategy:
    """The AI its registry entry names for a ruleset's game (the generic search if none)."""
    entry = next((entry for entry in games() if entry.id == ruleset.id), None)
    if entry is None or not entry.ai:
        return SearchStrategy(RulesetPolicy(ruleset))
    strategy: Strategy = load(entry.ai)(ruleset)
    return strategy


def evaluate(ruleset: AnyRuleset, state: Any, side: str, outcome: Outcome | None) -> float:
    """The value of `state` for `side`: ±WIN or 0 once decided, else the game's evaluation."""
    if outcome is not None:
        return outcome_value(outcome, side)
    return strategy_for(ruleset).evaluate(state, side)


def suggest(
    game: Game[Any], *, side: str | None, seconds: float, max_depth: int = 0, seed: int = 0
) -> Suggestion:
    """The action the AI prefers for `side` (default: the one side to act).

    `seconds` is the time budget, `max_depth` caps the search depth (0: none), and `seed`
    breaks ties so that bots with different seeds vary; the same state, side, seed and
    depth cap give the same suggestion.
    """
    require_ongoing(game.outcome)
    to_act = game.to_act()
    if side is None:
        if len(to_act) != 1:
            raise RuleError(Reason.ILLEGAL_ACTION, "say which side to suggest for: several may act")
        side = to_act[0]
    if side not in to_act:
        raise RuleError(
            Reason.NOT_YOUR_TURN, f"{side} cannot act now: {' and '.join(to_act)} to act"
        )
    return strategy_for(game.ruleset).suggest(
        game.state, side, seconds=seconds, max_depth=max_depth, seed=seed
    )
