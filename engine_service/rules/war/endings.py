"""How the game ends: the Citadel held (section 9) and the other endings (section 10).

Section 9's test "an O man stood on P's Citadel at the start of P's move and still stands
there after it" needs no memory: P's move cannot put an O man anywhere, so after P's move
(O to move) an O man on P's Citadel is exactly such a survivor. The outcome is therefore a
function of the position, checked in the order of section 11's `after_move`: Citadel,
then no legal move, then repetition and no progress. `decided` remembers it for the last few
hundred positions.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine_service.memo import memo
from engine_service.rules.base import Outcome, OutcomeReason
from engine_service.rules.draws import no_progress_draw, repetition_draw
from engine_service.rules.war.actions import Action
from engine_service.rules.war.board import NAMES
from engine_service.rules.war.legal import has_legal_action
from engine_service.rules.war.pieces import SIDE_IDS, SIDE_NAMES, describe_man, side_of
from engine_service.rules.war.state import WarState


def citadel_holder(state: WarState) -> int | None:
    """The side to move if one of its men held the enemy Citadel through the reply (9)."""
    side = state.side
    citadel = state.rules.citadels[1 - side]
    occupier = state.board[citadel]
    return side if occupier and side_of(occupier) == side else None


def outcome(state: WarState, actions: Sequence[Action] | None = None) -> Outcome | None:
    """How the game has ended in this position, or None while it goes on.

    `actions` may pass `all_actions(state)` when the caller has it already; otherwise the
    no-move test stops at the first legal action it finds.
    """
    rules, board, side = state.rules, state.board, state.side
    enemy = 1 - side
    if citadel_holder(state) is not None:
        citadel = rules.citadels[enemy]
        return Outcome(
            SIDE_IDS[side],
            OutcomeReason.CITADEL_HELD,
            f"{SIDE_IDS[side]} wins: the {describe_man(board[citadel])} on {NAMES[citadel]} "
            f"held {SIDE_NAMES[enemy]}'s Citadel through {SIDE_NAMES[enemy]}'s reply",
        )
    if not (has_legal_action(state) if actions is None else actions):
        own = rules.citadels[side]
        occupier = board[own]
        if occupier and side_of(occupier) == enemy:
            # 9.3: the occupier cannot be captured, so it holds.
            return Outcome(
                SIDE_IDS[enemy],
                OutcomeReason.CITADEL_HELD,
                f"{SIDE_IDS[enemy]} wins: {SIDE_IDS[side]} has no legal move while the "
                f"{describe_man(occupier)} holds {SIDE_NAMES[side]}'s Citadel {NAMES[own]}",
            )
        if rules.no_move_draw:
            return Outcome(
                None,
                OutcomeReason.NO_LEGAL_MOVE,
                f"{SIDE_IDS[side]} has no legal move: the game is drawn",
            )
        return Outcome(
            SIDE_IDS[enemy],
            OutcomeReason.NO_LEGAL_MOVE,
            f"{SIDE_IDS[enemy]} wins: {SIDE_IDS[side]} has no legal move",
        )
    return repetition_draw(state.history, rules.repetition) or no_progress_draw(
        state.quiet,
        rules.quiet_limit,
        f"{rules.quiet_limit // 2} moves by each side without a capture, Troop move or "
        "Flying-Machine placement",
    )


@memo(512)
def decided(state: WarState) -> Outcome | None:
    """`outcome(state)`, remembered (a request asks it more than once)."""
    return outcome(state)
