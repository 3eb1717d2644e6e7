"""End of the game (section 9; rulings 18-20).

In order: the Citadel taken (the attacker wins), the Wagon taken (the defender wins), a
side left with no Light Infantry, Infantry of the Line or Cavalry (it loses: Artillery can
never take the Citadel or the Wagon), the N-th repetition, N moves each without a
capture, and finally no legal move for the side to move (a draw, or its loss).

A position without the Citadel (or the Wagon) is one where it has been taken. If both
sides are without figures (possible only when `forced_reply=lose_figure` costs the mover
its last figure in the move that takes the opponent's last), the capture came first: the
side to move, whose last figure was taken, loses.
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.base import Outcome, OutcomeReason
from engine_service.rules.battle.pieces import (
    ATTACKER,
    CAVALRY,
    CITADEL_BYTE,
    DEFENDER,
    INFANTRY_OF_THE_LINE,
    LIGHT_INFANTRY,
    SIDE_IDS,
    WAGON_BYTE,
    code,
)
from engine_service.rules.battle.state import BattleState
from engine_service.rules.draws import no_progress_draw, repetition_draw

FIGURE_BYTES: Final = tuple(
    tuple(bytes([code(side, kind)]) for kind in (LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY))
    for side in (ATTACKER, DEFENDER)
)


def has_figures(board: bytes, side: int) -> bool:
    """Whether `side` still has a Light Infantry, Infantry of the Line or Cavalry."""
    find = board.find
    return any(find(figure) >= 0 for figure in FIGURE_BYTES[side])


def decided(state: BattleState) -> Outcome | None:
    """The ending that needs no move generation: captures, 9.2, repetition, no capture."""
    board = state.board
    if board.find(CITADEL_BYTE) < 0:
        return Outcome(
            "attacker",
            OutcomeReason.CITADEL_CAPTURED,
            "The attacker has taken the Citadel and wins.",
        )
    if board.find(WAGON_BYTE) < 0:
        return Outcome(
            "defender", OutcomeReason.WAGON_CAPTURED, "The defender has taken the Wagon and wins."
        )
    mover = state.side
    for loser in (mover, 1 - mover):
        if not has_figures(board, loser):
            winner = SIDE_IDS[1 - loser]
            return Outcome(
                winner,
                OutcomeReason.ONLY_ARTILLERY_LEFT,
                f"The {SIDE_IDS[loser]} has no Light Infantry, Infantry of the Line or Cavalry "
                f"left, and Artillery cannot take the "
                f"{'Wagon' if loser == DEFENDER else 'Citadel'}: the {winner} wins.",
            )
    rules = state.rules
    return repetition_draw(state.history, rules.repetition_draw) or no_progress_draw(
        state.quiet,
        2 * rules.no_capture_limit,
        f"{rules.no_capture_limit} moves by each side without a capture",
    )


def no_move_outcome(state: BattleState) -> Outcome:
    """Ruling 18: the side to move has no legal move."""
    stuck = SIDE_IDS[state.side]
    if state.rules.no_legal_move_loses:
        winner = SIDE_IDS[1 - state.side]
        return Outcome(
            winner,
            OutcomeReason.NO_LEGAL_MOVE,
            f"The {stuck} has no legal move and loses: the {winner} wins.",
        )
    return Outcome(
        None, OutcomeReason.NO_LEGAL_MOVE, f"The {stuck} has no legal move: the game is drawn."
    )
