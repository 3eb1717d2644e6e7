"""Strategic battles (Napoleonic Chess 10.7): a battle played out by the AI on every side.

`resolve_battle` runs an ordinary game from a supplied position, every player's action
chosen by the AI at one playing strength, until the battle ends by the rules, its turn
limit is reached or its time runs out; a stopped battle is adjudicated by material
(section 8's points, summed per alliance). The campaign layer that would call it is out
of scope (10.7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from engine_service.ai import suggest
from engine_service.rules.base import Outcome
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game
from engine_service.rules.napoleonic.endings import by_material
from engine_service.rules.napoleonic.state import DEPLOY_PHASES, NapoleonicState

MAX_TURNS = 200  # player-turns a battle may last when the caller sets no limit
ACTION_SECONDS = 0.05  # the AI's budget per action (a plan is made once per phase)


@dataclass(frozen=True, slots=True)
class Battle:
    """A resolved battle: the final game, how it ended, and what was played."""

    game: Game[NapoleonicState]
    outcome: Outcome
    finished: bool  # ended by the rules (or a surrender), not stopped
    turns: int  # player-turns played
    actions: tuple[str, ...]  # every action played, in notation


def resolve_battle(
    game: Game[Any], *, level: int, seconds: float, max_turns: int, seed: int
) -> Battle:
    """Play `game` out with the AI at `level` for every player (10.7)."""
    state = game.state
    if not isinstance(state, NapoleonicState):
        raise RuleError(
            Reason.ILLEGAL_ACTION, "ResolveBattle resolves Napoleonic Chess battles", field="state"
        )
    if state.phase in DEPLOY_PHASES:
        raise RuleError(
            Reason.WRONG_PHASE,
            "ResolveBattle needs a battle in play, not one still deploying: give a position "
            "with the armies on the board",
            field="state",
        )
    limit = max_turns or MAX_TURNS
    deadline = time.monotonic() + seconds
    start = state.turn_number
    played: list[str] = []
    index = 0
    while game.outcome is None:
        turns = game.state.turn_number - start
        left = deadline - time.monotonic()
        if turns >= limit or left <= 0:
            break
        side = game.to_act()[0]
        choice = suggest(
            game,
            side=side,
            seconds=min(ACTION_SECONDS, left),
            seed=seed + index,
            strength=level,
        )
        played.append(game.format(choice.action))
        game, _events = game.apply(side, choice.action)
        index += 1
    turns = game.state.turn_number - start
    if game.outcome is not None:
        return Battle(game, game.outcome, True, turns, tuple(played))
    why = f"stopped after {turns} player-turns" + ("" if turns >= limit else " (time budget spent)")
    return Battle(game, by_material(game.state, why), False, turns, tuple(played))
