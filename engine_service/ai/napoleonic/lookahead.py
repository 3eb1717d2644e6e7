"""A candidate plan judged by the enemy's answer to it.

A plan's own score counts its kills against the best defence and the squares its units
end on; what the enemy does next is only guessed there (the threat map). With time to
spare, the strongest levels look one turn further: the candidate is played, every phase
that follows (the defence's supports, the advances) is planned by the planner of the
player who acts in it, and so is the next enemy turn, its combats and advances; the
candidate's value is then the evaluation of where that leaves the side (a won or lost
game counts as such). The planners of the answer are this level's own, so a plan that
walks into a kill the enemy can see is known for it.
"""

from __future__ import annotations

from typing import Protocol

from engine_service.ai.evaluation import outcome_value
from engine_service.ai.napoleonic.position import evaluate_napoleonic
from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import NapoleonicAction
from engine_service.rules.napoleonic.state import NapoleonicState, Phase

# Actions played after the candidate before the answer is judged (a safety net: an enemy
# turn and the phases around it take far fewer).
ANSWER_ACTIONS = 400


class PhasePlanner(Protocol):
    """Plans the current phase for a player: its actions (`planner.Planner` does)."""

    def __call__(self, state: NapoleonicState, side: str) -> list[NapoleonicAction]:
        """The actions `side` plays in `state`'s phase."""


def answered_value(
    ruleset: AnyRuleset,
    state: NapoleonicState,
    side: str,
    plan: list[NapoleonicAction],
    planner: PhasePlanner,
) -> float:
    """`side`'s evaluation once `plan` is played and the enemy has answered it with a turn
    of its own (each phase planned by `planner`)."""
    alliance = state.alliance_of(side)
    for action in plan:
        state = ruleset.play(state, action)
        if (outcome := ruleset.outcome(state)) is not None:
            return outcome_value(outcome, side)
    enemy_moved = False
    played = 0
    while played < ANSWER_ACTIONS:
        acting = ruleset.to_act(state)
        if not acting:
            break
        actor = acting[0]
        ours = state.alliance_of(actor) == alliance
        if state.phase is Phase.MOVEMENT:
            if ours and enemy_moved:
                break  # the enemy has answered: back to the side's alliance
            enemy_moved = enemy_moved or not ours
        try:
            actions = planner(state, actor)
            for action in actions:
                state = ruleset.play(state, action)
                played += 1
                if (outcome := ruleset.outcome(state)) is not None:
                    return outcome_value(outcome, side)
        except RuleError:
            break  # a plan the rules refuse (it should not happen): judge what there is
        if not actions:
            break
    return evaluate_napoleonic(ruleset, state, side)
