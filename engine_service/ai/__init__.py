"""Suggesting actions within a time budget, for any game's `Ruleset`.

`suggest(game, ...)` picks the game's strategy:

- the Game of War and the Game of Battle: iterative-deepening alpha-beta
  (`engine_service.ai.search`) with the game's policy (`war`, `battle`): an evaluation of
  material and objectives, capture-first move ordering, a quiescence search;
- Napoleonic Chess: the turn planner (`engine_service.ai.napoleonic`), which plans a whole
  turn of moves and attacks, allocates supports in defence and decides advances;
- any other game: the same search over the public `Ruleset` interface with a material
  evaluation.

It returns the action, its evaluation from the suggesting side's view, the depth reached
and the line it expects (starting with the action).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_service.ai.battle import BattlePolicy
from engine_service.ai.napoleonic import plan_suggestion
from engine_service.ai.search import Policy, RulesetPolicy, Suggestion
from engine_service.ai.search import search as search_best
from engine_service.ai.war import WarPolicy
from engine_service.rules.base import AnyRuleset, require_ongoing
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game

__all__ = ["POLICIES", "Suggestion", "policy_for", "suggest"]

POLICIES: dict[str, Callable[[AnyRuleset], Policy]] = {
    "war": WarPolicy,
    "battle": BattlePolicy,
}


def policy_for(ruleset: AnyRuleset) -> Policy:
    """The search policy of a game (the generic one for games without their own)."""
    make = POLICIES.get(ruleset.id)
    return make(ruleset) if make is not None else RulesetPolicy(ruleset)


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
    ruleset = game.ruleset
    if ruleset.id == "napoleonic":
        return plan_suggestion(ruleset, game.state, side, seconds=seconds, seed=seed)
    return search_best(
        policy_for(ruleset), game.state, side, seconds=seconds, max_depth=max_depth, seed=seed
    )
