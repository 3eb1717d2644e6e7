"""The Game of Battle's repetition history in its position text (docs/positions.md).

The grammar is `setup.py`'s; the history is written as the moves that lead back to each
position since the last capture (`engine_service.rules.position`, "steps back"): every
move that captures nothing is a reversible one.
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.battle.board import SQUARES
from engine_service.rules.battle.pieces import (
    ARMY,
    CITADEL,
    CODE_COUNT,
    KIND_OF_CODE,
    SIDE_OF_CODE,
)
from engine_service.rules.battle.state import (
    DEFENDER_TO_MOVE,
    PIECE_KEYS,
    BattleState,
    position_key,
)
from engine_service.rules.position import Reversal, history_from_steps, steps_back

# The side that may take back a move of each piece code (-1: the Citadel, unknown codes).
_MOVER: Final = tuple(
    side
    if code and KIND_OF_CODE[code] in ARMY.get(side, {}) and KIND_OF_CODE[code] != CITADEL
    else -1
    for code, side in enumerate(SIDE_OF_CODE)
)

REVERSAL: Final = Reversal(
    piece_keys=PIECE_KEYS,
    cells_by_key=tuple(
        {PIECE_KEYS[code][cell]: cell for cell in range(SQUARES)} for code in range(CODE_COUNT)
    ),
    turn_key=DEFENDER_TO_MOVE,
    mover=_MOVER.__getitem__,
)


def history_parts(state: BattleState) -> tuple[list[tuple[int, int]], list[int]]:
    """The history of a position as steps back and older keys, both newest first (the
    moves the state keeps, or else the ones that explain its keys)."""
    steps = state.steps
    if steps is None:
        return steps_back(REVERSAL, state.board, state.side, state.history)
    history = state.history
    back = [(step >> 12, step & 0xFFF) for step in reversed(steps)]
    return back, list(reversed(history[: len(history) - 1 - len(steps)]))


def history_of(
    board: bytes, side: int, back: list[tuple[int, int]], older: tuple[int, ...]
) -> tuple[int, ...]:
    """The history `hist=` and `histkeys=` give (oldest first, the current key last);
    PositionError if a step takes back no move."""
    return history_from_steps(
        REVERSAL, board, side, position_key(board, side), steps=back, older=older
    )
