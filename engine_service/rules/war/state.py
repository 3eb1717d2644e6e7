"""The position of a game: an immutable tuple, cheap to copy, with a Zobrist key.

`WarState` is a named tuple so that making a new one is a single C call and equality and
hashing come for free. Its `board` is 100 bytes (codes of `pieces`), a1 first.

Position keys (for the repetition draw, A25) are Zobrist keys from a table drawn with a
fixed seed, so the same position has the same key in every process; `play` updates them
incrementally. `Turn` is the part of a position the move generator works with.
"""

from __future__ import annotations

import random
from typing import Final, NamedTuple

from engine_service.rules.war.board import CELLS
from engine_service.rules.war.options import CODES, WarRules
from engine_service.rules.war.pieces import FLYING_MACHINES_PER_SIDE, SIDE_SPAN


class WarState(NamedTuple):
    """A Game of War position with everything needed to continue the game.

    - `board`: 100 cell codes (`pieces`), a1 = index 0, j10 = index 99;
    - `side`: the side to move (0 South, 1 North);
    - `reserves`: Flying Machines (South, North) not yet placed;
    - `ep`: the square a Troop has just passed by a double step (en_passant option), or -1;
    - `huffable`: Troops of the side that just moved that the side to move may huff;
    - `quiet`: plies since the last capture, Troop move or Flying-Machine placement;
    - `move`: turn number, 1 on each side's first turn;
    - `history`: position keys since the last irreversible action, the current one last;
    - `rules`: the options and Citadels of the game.
    """

    board: bytes
    side: int
    reserves: tuple[int, int]
    ep: int
    huffable: tuple[int, ...]
    quiet: int
    move: int
    history: tuple[int, ...]
    rules: WarRules

    @property
    def key(self) -> int:
        """The Zobrist key of this position."""
        return self.history[-1]


_ZOBRIST_SEED: Final = 19_101_030_521  # 1910 and the patent number: any fixed value works
_rng = random.Random(_ZOBRIST_SEED)
# PIECE_KEYS[(cell << 5) | code]; empty cells (code 0) and unused codes XOR nothing.
PIECE_KEYS: Final = tuple(
    _rng.getrandbits(64) if 0 < code <= 2 * SIDE_SPAN else 0
    for _cell in range(CELLS)
    for code in range(CODES)
)
SIDE_KEY: Final = _rng.getrandbits(64)  # XORed in when North is to move
RESERVE_KEYS: Final = tuple(
    tuple(_rng.getrandbits(64) for _n in range(FLYING_MACHINES_PER_SIDE + 1)) for _side in (0, 1)
)
HUFF_KEYS: Final = tuple(_rng.getrandbits(64) for _cell in range(CELLS))
del _rng


def position_key(
    board: bytes, side: int, reserves: tuple[int, int], huffable: tuple[int, ...] = ()
) -> int:
    """The Zobrist key of a position: men, placed machines, reserves, side, huff rights."""
    keys = PIECE_KEYS
    key = 0
    for cell, piece in enumerate(board):
        if piece:
            key ^= keys[(cell << 5) | piece]
    if side:
        key ^= SIDE_KEY
    key ^= RESERVE_KEYS[0][reserves[0]] ^ RESERVE_KEYS[1][reserves[1]]
    for cell in huffable:
        key ^= HUFF_KEYS[cell]
    return key


class Turn(NamedTuple):
    """What the move generator works with: the rules, a board, the side to move and ep."""

    rules: WarRules
    board: bytes
    side: int
    ep: int
