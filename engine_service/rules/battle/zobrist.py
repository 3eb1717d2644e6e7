"""Position keys for the repetition rule (ruling 19): Zobrist hashing with a fixed seed.

The table comes from `random.Random(SEED)`, whose generator is specified by Python, so
every process on every machine computes the same 64-bit key for the same position; keys
can therefore travel in a GameState and be checked by any engine replica.
"""

from __future__ import annotations

import random
from typing import Final

from engine_service.rules.battle.board import SQUARES
from engine_service.rules.battle.pieces import CODE_COUNT, DEFENDER

SEED: Final = 0x1866_BA77
_RANDOM: Final = random.Random(SEED)
# PIECE_KEYS[code][cell]; code 0 (empty) contributes nothing.
PIECE_KEYS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(0 if piece == 0 else _RANDOM.getrandbits(64) for _ in range(SQUARES))
    for piece in range(CODE_COUNT)
)
DEFENDER_TO_MOVE: Final = _RANDOM.getrandbits(64)


def position_key(board: bytes, side: int) -> int:
    """The key of a board and side to move, computed from scratch."""
    key = DEFENDER_TO_MOVE if side == DEFENDER else 0
    for cell, piece in enumerate(board):
        if piece:
            key ^= PIECE_KEYS[piece][cell]
    return key
