"""The 10 x 10 board (section 1) and the step, ray and leap tables every move walks.

Cells are numbered as `square_grid(10, 10)` numbers them: a1 = 0, j1 = 9, a10 = 90
(cell = 10 * (rank - 1) + file). Everything here is computed once from the shared
`CellGraph`, so the inner loops only index tuples.
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.board import (
    DIAGONAL,
    KNIGHT_OFFSETS,
    ORTHOGONAL,
    CellGraph,
    offset_table,
    square_grid,
)
from engine_service.rules.war.pieces import NORTH, SOUTH

WIDTH: Final = 10
HEIGHT: Final = 10
CELLS: Final = WIDTH * HEIGHT

BOARD: Final[CellGraph] = square_grid(WIDTH, HEIGHT)
NAMES: Final[tuple[str, ...]] = BOARD.names


def file_of(cell: int) -> int:
    """0 for file a .. 9 for file j."""
    return cell % WIDTH


def rank_of(cell: int) -> int:
    """0 for rank 1 .. 9 for rank 10."""
    return cell // WIDTH


def relative_rank(side: int, cell: int) -> int:
    """The rank counted from `side`'s own back rank: 1 (back rank) .. 10 (final rank)."""
    rank = rank_of(cell)
    return rank + 1 if side == SOUTH else HEIGHT - rank


def _rays(cell: int, directions: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(ray for d in directions if (ray := BOARD.ray(cell, d)))


# Section 6: sliders (Mortar orthogonal, Cannon diagonal, General both) and steppers.
ORTHOGONAL_RAYS: Final = tuple(_rays(c, ORTHOGONAL) for c in range(CELLS))
DIAGONAL_RAYS: Final = tuple(_rays(c, DIAGONAL) for c in range(CELLS))
QUEEN_RAYS: Final = tuple(ORTHOGONAL_RAYS[c] + DIAGONAL_RAYS[c] for c in range(CELLS))
KING_STEPS: Final = tuple(tuple(BOARD.neighbours(c)) for c in range(CELLS))
HORSE_LEAPS: Final = offset_table(BOARD, KNIGHT_OFFSETS)


def _passed_over(start: int, landing: int) -> tuple[int, int]:
    """The two cells a Horse's leap flies over: those touching both its ends (A6)."""
    touching = set(KING_STEPS[start]) & set(KING_STEPS[landing])
    first, second = sorted(touching)
    return first, second


# For horse_leaps_flying_machine = false: per cell, (landing, over1, over2) per leap.
HORSE_LEAPS_OVER: Final = tuple(
    tuple((t, *_passed_over(c, t)) for t in HORSE_LEAPS[c]) for c in range(CELLS)
)

# Troops (section 7), per side: forward is +1 rank for South and -1 rank for North.
FORWARD_DIRECTION: Final = ("N", "S")
FORWARD_DIAGONALS: Final = (("NW", "NE"), ("SW", "SE"))
BACKWARD_DIAGONALS: Final = (("SW", "SE"), ("NW", "NE"))


def _step(cell: int, direction: str) -> int:
    return BOARD.step[direction][cell]


def _forward(side: int) -> tuple[int, ...]:
    return tuple(_step(c, FORWARD_DIRECTION[side]) for c in range(CELLS))


def _forward2(side: int) -> tuple[int, ...]:
    one = _forward(side)
    return tuple(one[one[c]] if one[c] >= 0 else -1 for c in range(CELLS))


def _diagonals(side: int, directions: tuple[tuple[str, str], ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(
        tuple(t for d in directions[side] if (t := _step(c, d)) >= 0) for c in range(CELLS)
    )


def _jumps(
    side: int, directions: tuple[tuple[str, str], ...]
) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per cell: (jumped cell, landing cell) for each diagonal jump that stays on the board."""
    table = []
    for c in range(CELLS):
        pairs = []
        for d in directions[side]:
            over = _step(c, d)
            if over >= 0 and (land := _step(over, d)) >= 0:
                pairs.append((over, land))
        table.append(tuple(pairs))
    return tuple(table)


FORWARD: Final = (_forward(SOUTH), _forward(NORTH))
FORWARD2: Final = (_forward2(SOUTH), _forward2(NORTH))
FORWARD_DIAGONAL_STEPS: Final = (
    _diagonals(SOUTH, FORWARD_DIAGONALS),
    _diagonals(NORTH, FORWARD_DIAGONALS),
)
FORWARD_JUMPS: Final = (_jumps(SOUTH, FORWARD_DIAGONALS), _jumps(NORTH, FORWARD_DIAGONALS))
# Forward and backward jumps together (backward_jumps = true, A15).
BOTH_WAY_JUMPS: Final = tuple(
    tuple(forward + backward for forward, backward in zip(FORWARD_JUMPS[side], back, strict=True))
    for side, back in ((s, _jumps(s, BACKWARD_DIAGONALS)) for s in (SOUTH, NORTH))
)

# The cell jumped when a Troop goes from `a` to `b` two diagonal steps away, else -1;
# indexed a * 100 + b. `play` uses it to tell a jump from a step.
JUMPED: Final = tuple(
    (a + b) // 2 if abs(file_of(a) - file_of(b)) == 2 and abs(rank_of(a) - rank_of(b)) == 2 else -1
    for a in range(CELLS)
    for b in range(CELLS)
)

# The cell one rank behind, per side (the Troop taken en passant stands behind the landing).
BEHIND: Final = (_forward(NORTH), _forward(SOUTH))

# The back rank (relative rank 1) and final rank (relative rank 10) of each side, as ranks.
BACK_RANK: Final = (0, HEIGHT - 1)
FINAL_RANK: Final = (HEIGHT - 1, 0)


def cell_name(cell: int) -> str:
    """'a1' .. 'j10'."""
    return NAMES[cell]


def cell_index(name: str) -> int | None:
    """The cell of a name (case-insensitive), or None if the board has no such cell."""
    return BOARD.index.get(name.strip().lower())
