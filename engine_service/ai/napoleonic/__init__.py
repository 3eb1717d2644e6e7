"""Napoleonic Chess: a turn planner.

A Napoleonic Chess turn is many small actions (spec 6): move any units, declare attacks,
the defender allocates supports, combats resolve at once, the attacker may advance. A
ply-by-ply search cannot see a combat's result until the whole turn is played, so the AI
plans whole phases instead:

- **Movement and attack declaration** (`plan_turn`). For each enemy unit, Guards first,
  the planner looks for attackers that can stand next to it this turn (in their attack
  directions) and for units that can attack its possible supporters, since a unit under
  attack cannot support (7.2). A kill is planned only when the attack exceeds the
  defence plus every support the defender could still give (7.3: ties survive), so it
  succeeds against the best allocation. The remaining units then move for position:
  towards the enemy Guards, in contact with the enemy, near their own Guards, away from
  squares the enemy could overwhelm next turn. Finally every unit that can attack
  something does (attacks cost nothing: no counter-attack), the targets chosen to
  maximise what the defender's best allocation must lose. Several orders of targets give
  several plans; the best one by kills and final position is kept. With time to spare
  (`weights.LOOKAHEAD_SECONDS`) the strongest level plays each candidate on, the enemy's
  answering turn planned the same way, and keeps the one that leaves it best (`lookahead.py`).
- **Defence** (`plan_defence`): the allocation of supports that saves the most valuable
  attacked units (the Guards above all), found exactly.
- **Advance** (`plan_advance`): an attacker moves into a vacated square only when the
  square is better for it and no more dangerous.
- **Deployment**: a standard-looking array (front rank infantry and artillery, Guards in
  the middle of the rear rank, cavalry on the wings), placed, sealed or committed.

The planner is deterministic: the same state, side, seed and level give the same plan; a
plan that surely eliminates an enemy commander this turn reports the win (`wins_in` 1), a
defence that cannot save its own reports the loss. A plan is
remembered (bounded cache) for every state along it, so asking again after each of its
actions continues the same plan; `line` shows the rest of the planned phase.

Every rule question (may this unit attack or support there, what does this attack count,
what is this unit's defence) is asked of the rules (`rules/napoleonic/combat.py`), so a
ruling changes the plans with it. Where things are:

- `weights.py`     what units are worth and what the position evaluation counts
- `position.py`    threats, supports, the worth of a unit on a square; the evaluation
- `allocation.py`  combat against the defender's best allocation of supports
- `planner.py`     the turn plan: kills, moves for position, the declaration; defence, advance
- `deployment.py`  the planner's arrays: placed, sealed or committed
- `lookahead.py`   a candidate turn judged by the enemy's answer to it (the strongest level)
- `plan_cache.py`  the plans remembered along their states
- `strategic.py`   strategic battles (10.7): a battle played out by the AI on every side
"""

from __future__ import annotations

from collections.abc import Sequence

from engine_service.ai.budget import Budget
from engine_service.ai.napoleonic.allocation import Fight, Verdict, best_allocation, judge
from engine_service.ai.napoleonic.deployment import deployment_action
from engine_service.ai.napoleonic.plan_cache import clear_plans, recall, remember
from engine_service.ai.napoleonic.planner import Planner
from engine_service.ai.napoleonic.position import evaluate_napoleonic
from engine_service.ai.napoleonic.weights import LOOKAHEAD_SECONDS
from engine_service.ai.search import Suggestion, Terms
from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic.actions import NapoleonicAction
from engine_service.rules.napoleonic.state import NapoleonicState, Phase

__all__ = [
    "Fight",
    "TurnPlanner",
    "Verdict",
    "best_allocation",
    "clear_plans",
    "judge",
    "plan_suggestion",
    "strategy",
]


def _line(
    ruleset: AnyRuleset, state: NapoleonicState, actions: Sequence[NapoleonicAction]
) -> list[str]:
    """The notations of a plan's actions, each in the state it is played in."""
    line = []
    for action in actions:
        line.append(ruleset.format_action(state, action))
        state = ruleset.play(state, action)
        if ruleset.outcome(state) is not None:
            break
    return line


def plan_suggestion(
    ruleset: AnyRuleset, state: NapoleonicState, side: str, terms: Terms
) -> Suggestion:
    """The next action of the plan for `side` in `state` (planning it if needed, within the
    terms' `seconds` of CPU time capped at `wall` seconds of the clock: `ai/budget.py`); a
    weaker level (`ai/levels.py`) plans with noise and less work. Plans are whole phases:
    the terms' depth cap does not apply."""
    seconds, seed, level = terms.seconds, terms.seed, terms.level
    cached = recall(state, side, seed, level, seconds)
    if cached is not None:
        value, actions, wins_in = cached
        line = _line(ruleset, state, actions)
        return Suggestion(actions[0], value, len(actions), line, 1, wins_in)
    planner = Planner(
        ruleset,
        state,
        side,
        Budget(seconds * 0.8, terms.wall),
        noise=level.noise,
        effort=level.time_share,
        seed=seed,
        # Time to spare buys the strongest level a look at the enemy's answer.
        lookahead=level.time_share >= 1.0 and seconds >= LOOKAHEAD_SECONDS,
    )
    phase = state.phase
    if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION):
        value, plan = planner.plan_turn()
    elif phase is Phase.DEFENCE:
        value, plan = planner.plan_defence()
    elif phase is Phase.ADVANCE:
        value, plan = planner.plan_advance()
    else:
        value, plan = 0.0, [deployment_action(ruleset, state, side, seed)]
    remember(
        ruleset,
        state,
        side=side,
        seed=seed,
        level=level,
        seconds=seconds,
        value=value,
        actions=plan,
        wins_in=planner.wins_in,
    )
    line = _line(ruleset, state, plan)
    nodes = max(planner.nodes, 1)
    cut_short = planner.budget.cut_short
    return Suggestion(plan[0], value, len(plan), line, nodes, planner.wins_in, cut_short)


class TurnPlanner:
    """Napoleonic Chess's AI (its registry entry names it): the turn planner."""

    def __init__(self, ruleset: AnyRuleset) -> None:
        self.ruleset = ruleset

    def suggest(self, state: NapoleonicState, side: str, terms: Terms) -> Suggestion:
        """The next action of the plan for `side` (plans are whole phases: no depth cap)."""
        return plan_suggestion(self.ruleset, state, side, terms)

    def evaluate(self, state: NapoleonicState, side: str) -> float:
        """Material and the planner's positional worth, own minus the enemy's."""
        return evaluate_napoleonic(self.ruleset, state, side)


strategy = TurnPlanner
