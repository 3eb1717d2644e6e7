"""The Game of War's position text (docs/positions.md#the-game-of-war): the setup string of
section 3.2 with the tokens of `setup.py`, which together write every field of `WarState`.

Only the repetition history needs more than reading: it is written as the moves that lead
back to each earlier position (`engine_service.rules.position`, "steps back"). A man other
than a Troop that moved without capturing, or a pass, is all a reversible ply can be (a
capture, a Troop move, a placement and a huff start the history afresh, `play.py`).
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.position import Reversal, history_from_steps, steps_back
from engine_service.rules.war.board import CELLS
from engine_service.rules.war.pieces import (
    CODE_COUNT,
    FLYING_MACHINE,
    KIND_OF_CODE,
    SIDE_OF_CODE,
    TROOP_MOVED,
)
from engine_service.rules.war.state import HUFF_KEYS, PIECE_KEYS, SIDE_KEY, WarState


def _mover(code: int) -> int:
    kind = KIND_OF_CODE[code]
    return SIDE_OF_CODE[code] if TROOP_MOVED < kind < FLYING_MACHINE else -1


_KEYS: Final = tuple(
    tuple(PIECE_KEYS[(cell << 5) | code] for cell in range(CELLS)) for code in range(CODE_COUNT)
)
REVERSAL: Final = Reversal(
    piece_keys=_KEYS,
    cells_by_key=tuple({key: cell for cell, key in enumerate(keys)} for keys in _KEYS),
    turn_key=SIDE_KEY,
    mover=_mover,
    passes=True,
)


def huff_key(huffable: tuple[int, ...]) -> int:
    """The key part of a position's huff rights."""
    key = 0
    for cell in huffable:
        key ^= HUFF_KEYS[cell]
    return key


def history_parts(state: WarState) -> tuple[list[tuple[int, int]], list[int]]:
    """The history of a position as steps back and older keys, both newest first."""
    if len(state.history) == 1:
        return [], []
    return steps_back(REVERSAL, state.board, state.side, state.history, huff_key(state.huffable))


def history_of(
    board: bytes,
    side: int,
    key: int,
    huffable: tuple[int, ...],
    *,
    back: list[tuple[int, int]],
    older: tuple[int, ...],
) -> tuple[int, ...]:
    """The history a setup string's `hist=` and `histkeys=` give (oldest first, `key` last);
    PositionError if a step takes back no move."""
    if not back and not older:
        return (key,)
    return history_from_steps(
        REVERSAL, board, side, key, steps=back, older=older, first=huff_key(huffable)
    )
