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
reached, the line it expects (starting with the action) and a win or loss it has proved;
`summary` says that in a few words for players. Levels 1-4 play weaker (`levels.py`).

Where things are:

- `search.py`      iterative-deepening alpha-beta over any `Ruleset`, within a time budget
- `war.py`, `battle.py`  each game's policy for the search: evaluation, move ordering
- `evaluation.py`  what every game's evaluation shares: material, a finished game's value
- `levels.py`      the playing strengths 1 to 5: what each level leaves out
- `budget.py`      a search's budget: CPU time, with the wall clock as its cap
- `napoleonic/`    the Napoleonic Chess turn planner (its own map)
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from engine_service.ai.evaluation import outcome_value
from engine_service.ai.levels import STRONGEST, level
from engine_service.ai.search import RulesetPolicy, SearchStrategy, Suggestion, Terms
from engine_service.memo import memo
from engine_service.rules import games, load
from engine_service.rules.base import AnyRuleset, Outcome, require_ongoing
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game

__all__ = ["Strategy", "Suggestion", "evaluate", "strategy_for", "suggest", "summary"]

EVEN: float = 0.5  # material units within which a position reads as "about even"


class Strategy(Protocol):
    """A game's AI: the action it suggests, and what it thinks of a position."""

    def suggest(self, state: Any, side: str, terms: Terms) -> Suggestion:
        """The action for `side` within the terms (time, depth cap, seed and level)."""

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
    game: Game[Any],
    *,
    side: str | None,
    seconds: float,
    max_depth: int = 0,
    seed: int = 0,
    strength: int = STRONGEST,
    wall: float = 0.0,
) -> Suggestion:
    """The action the AI prefers for `side` (default: the one side to act).

    `seconds` is the time budget in CPU time of the searching thread, `wall` its cap in
    seconds of the clock (0: `budget.py`'s default), `max_depth` caps the search depth (0:
    none), and `seed` breaks ties so that bots with different seeds vary; `strength` is the
    level, 1 to 5 (`levels.py`). The same state, side, seed, depth cap and level give the
    same suggestion when the search is not cut short by the wall clock (`cut_short`).
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
    plays = level(strength, ruleset.id)
    rng = random.Random(f"{seed} {strength} {ruleset.setup_text(game.state)}")
    if plays.blunders and rng.random() < plays.blunders:
        state = game.state
        mine = [a for a in ruleset.legal_actions(state) if ruleset.actor(state, a) == side]
        if mine:  # secret deployments list no actions: those are never blundered
            action = rng.choice(mine)
            after = ruleset.play(game.state, action)
            value = evaluate(ruleset, after, side, ruleset.outcome(after))
            return Suggestion(action, value, 0, [ruleset.format_action(game.state, action)], 1)
    cap = plays.max_depth if not max_depth else min(max_depth, plays.max_depth or max_depth)
    terms = Terms(seconds * plays.time_share, cap, seed, plays, wall)
    return strategy_for(ruleset).suggest(game.state, side, terms)


def summary(suggestion: Suggestion) -> str:
    """The suggestion's verdict in a few words for players.

    "wins in 2" or "loses in 3" for a proved end (turns of the winner), else the
    evaluation: "about even" within half a unit of material, else "+1.5 material".
    """
    if suggestion.wins_in > 0:
        return f"wins in {suggestion.wins_in}"
    if suggestion.wins_in < 0:
        return f"loses in {-suggestion.wins_in}"
    value = suggestion.evaluation
    if abs(value) < EVEN:
        return "about even"
    return f"{value:+.1f} material"
