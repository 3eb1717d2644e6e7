"""The planner's deployments (5, 10.1, 10.2): a standard-looking array, placed, sealed or
committed (front rank infantry and artillery, Guards in the middle of the rear rank,
cavalry on the wings)."""

from __future__ import annotations

import hashlib

from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic import deployment
from engine_service.rules.napoleonic.actions import (
    Commit,
    NapoleonicAction,
    Place,
    Placements,
    Reveal,
    Seal,
)
from engine_service.rules.napoleonic.deployment import RANDOM_SEEDS, random_player_array
from engine_service.rules.napoleonic.setup import canonical_placements
from engine_service.rules.napoleonic.state import NapoleonicState, Phase


def _placement_preference(state: NapoleonicState, side: str, kind: str, cell: int) -> float:
    """How well a unit of `kind` fits `cell` of `side`'s deployment rows."""
    stats = state.rules.types[kind]
    low, high = state.rules.rows
    row = state.geo.rank_from_edge(cell, state.side_index(side))
    front = (row - low) / max(1, high - low)  # 0 rear row .. 1 front row
    x = cell % state.width
    centre = 1.0 - abs(2 * x - (state.width - 1)) / max(1, state.width - 1)  # 1 centre .. 0 edge
    if stats.is_commander:
        return 3.0 * (1.0 - front) + 2.0 * centre
    if stats.move_steps >= 2:
        return 1.0 * (1.0 - front) + 1.5 * (1.0 - centre)
    if stats.is_artillery or stats.attack >= 2:
        return 2.0 * front + 1.0 * centre
    return 2.5 * front + 0.2 * centre


def standard_array(state: NapoleonicState, side: str) -> Placements:
    """A sensible array of `side`'s army on its deployment rows (deterministic)."""
    cells = list(deployment.deployment_cells(state, side))
    army = sorted(
        state.army(side),
        key=lambda k: (not state.rules.types[k].is_commander, -state.rules.types[k].attack, k),
    )
    names = state.geo.names
    placements: list[tuple[str, str]] = []
    for kind in army:
        best = max(cells, key=lambda c: (_placement_preference(state, side, kind, c), -c))
        cells.remove(best)
        placements.append((names[best], kind))
    return canonical_placements(placements)


def _salt(state: NapoleonicState, side: str, seed: int) -> bytes:
    """The salt of the AI's commitment: derived from the seed, so it can reveal later."""
    text = f"wargame napoleonic ai salt {state.scenario} {side} {seed}"
    return hashlib.sha256(text.encode()).digest()


def deployment_action(
    ruleset: AnyRuleset, state: NapoleonicState, side: str, seed: int
) -> NapoleonicAction:
    """The AI's action in a deployment phase (10.1, 10.2)."""
    if state.phase is Phase.PLACEMENT:
        legal = [a for a in ruleset.legal_actions(state) if isinstance(a, Place)]
        return max(
            legal,
            key=lambda a: (
                _placement_preference(state, side, a.kind, state.geo.index[a.cell]),
                a.kind,
                -state.geo.index[a.cell],
            ),
        )
    placements = standard_array(state, side)
    if state.phase is Phase.DEPLOY_SEALED:
        return Seal(side, placements)
    salt = _salt(state, side, seed)
    if state.phase is Phase.DEPLOY_COMMIT:
        return Commit(side, deployment.commitment(placements, salt))
    committed = dict(state.deployment.commitments).get(side) if state.deployment else None
    if committed == deployment.commitment(placements, salt):
        return Reveal(side, placements, salt)
    # Committed by another scheme: the random players' (see the ruleset's random_action).
    for random_seed in range(RANDOM_SEEDS):
        guess, guess_salt = random_player_array(state, side, random_seed)
        if deployment.commitment(guess, guess_salt) == committed:
            return Reveal(side, guess, guess_salt)
    return Reveal(side, placements, salt)
