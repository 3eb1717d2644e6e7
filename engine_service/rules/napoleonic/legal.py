"""Legal actions: every listable action of the player(s) to act, phase by phase (spec 6).

Each rule module says what it allows (`movement.destinations`, `combat.legal_attacks`,
`combat.legal_supports`, `combat.legal_advances`, `terrain.legal_redoubts`,
`deployment.legal_placements`); this module gathers them for the phase the state is in.
A secret deployment's array is not listed (`deployment.random_deployment` draws one).
"""

from __future__ import annotations

from engine_service.rules.napoleonic import combat, deployment, movement
from engine_service.rules.napoleonic.actions import EndPhase, Move, NapoleonicAction, Place
from engine_service.rules.napoleonic.state import ACTIVE_PHASES, NapoleonicState, Phase
from engine_service.rules.napoleonic.terrain import legal_redoubts


def legal_actions(state: NapoleonicState) -> list[NapoleonicAction]:
    """Every listable legal action (secret deployments are not listed: see
    `random_action`)."""
    if state.outcome is not None:
        return []
    phase = state.phase
    actions: list[NapoleonicAction] = []
    names = state.geo.names
    if phase in ACTIVE_PHASES:
        pending = state.turn.pending_players
        for side in pending or (state.active,):
            acting = not pending or side in state.acting()
            if phase is Phase.MOVEMENT:
                for unit in state.units:
                    if unit.side == side:
                        actions += [
                            Move(side, unit.id, names[c])
                            for c in movement.destinations(state, unit)
                        ]
            # 10.6: with merged_side_turn, attacks wait until every commander has moved.
            if phase is Phase.ATTACK_DECLARATION or (phase is Phase.MOVEMENT and len(pending) <= 1):
                actions += combat.legal_attacks(state, side)
            if phase is Phase.ADVANCE:
                actions += combat.legal_advances(state, side)
            if acting:
                actions += legal_redoubts(state, side)
            actions.append(EndPhase(side))
    elif phase is Phase.DEFENCE:
        for defender in state.turn.pending_defenders:
            actions += combat.legal_supports(state, defender)
            actions.append(EndPhase(defender))
    elif phase is Phase.PLACEMENT and state.deployment is not None:
        placer = state.deployment.next_placer
        actions += [
            Place(placer, kind, names[cell])
            for kind, cell in deployment.legal_placements(state, placer)
        ]
    return actions
