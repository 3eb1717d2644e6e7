"""Artillery range ("command", "check", "cover"), protection and exposure (section 6).

- The range of a battery: along each of its four oblique lines, up to three squares,
  stopping on the first occupied square (included), the river and the edge. Which pieces
  stop a line is ruling 13 (`artillery_blockers`).
- "First square next to" a battery: its oblique neighbours (ruling 11), cut by the river
  (ruling 12); the options widen it (`next_to_table`).
- A figure (LI, IL, Cav) or the Wagon of side X on square s is exposed when s is in range
  of an enemy battery and not protected; protected means next to a battery of X and not
  next to any enemy battery. Artillery itself is never exposed.

Only the squares in enemy range can hold an exposed piece, so exposure is found by
walking at most two batteries' 4 x 3 squares, never the whole board.
"""

from __future__ import annotations

from typing import Final

from engine_service.memo import memo
from engine_service.rules.battle.board import (
    CORNER_NEIGHBOURS,
    CORNER_NEIGHBOURS_ACROSS_RIVER,
    OBLIQUE,
    OBLIQUE_NEIGHBOURS,
    OBLIQUE_NEIGHBOURS_ACROSS_RIVER,
    SQUARES,
    ray,
)
from engine_service.rules.battle.options import Rules
from engine_service.rules.battle.pieces import (
    ARTILLERY,
    ATTACKER,
    CITADEL,
    CODE_COUNT,
    DEFENDER,
    EXPOSABLE_KINDS,
    WAGON,
    code,
    kind_of,
    side_of,
)

RANGE: Final = 3
# RANGE_RAYS[cell]: a battery's four oblique lines of up to three squares.
RANGE_RAYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(line for d in OBLIQUE if (line := ray(cell, d, RANGE))) for cell in range(SQUARES)
)
ARTILLERY_BYTES: Final[tuple[bytes, bytes]] = (
    bytes([code(ATTACKER, ARTILLERY)]),
    bytes([code(DEFENDER, ARTILLERY)]),
)
# BLOCKS[any_piece][code]: whether a piece stops an artillery line (ruling 13).
BLOCKS: Final[tuple[tuple[bool, ...], tuple[bool, ...]]] = (
    tuple(p != 0 and kind_of(p) not in (CITADEL, WAGON) for p in range(CODE_COUNT)),
    tuple(p != 0 for p in range(CODE_COUNT)),
)
# EXPOSABLE[side][code]: a piece of `side` that A.1 keeps out of enemy range.


def _exposable(side: int) -> tuple[bool, ...]:
    return tuple(
        p != 0 and side_of(p) == side and kind_of(p) in EXPOSABLE_KINDS for p in range(CODE_COUNT)
    )


EXPOSABLE: Final = (_exposable(ATTACKER), _exposable(DEFENDER))


def next_to(rules: Rules) -> tuple[frozenset[int], ...]:
    """For each square, the squares "next to" a battery standing there (rulings 11, 12)."""
    return next_to_table(rules.corner_adjacency, rules.river_cuts_protection)


@memo(4)
def next_to_table(
    corner_adjacency: bool, river_cuts_protection: bool
) -> tuple[frozenset[int], ...]:
    """`next_to` for one pair of adjacency options, made once."""
    oblique = OBLIQUE_NEIGHBOURS if river_cuts_protection else OBLIQUE_NEIGHBOURS_ACROSS_RIVER
    corner = CORNER_NEIGHBOURS if river_cuts_protection else CORNER_NEIGHBOURS_ACROSS_RIVER
    return tuple(
        frozenset(oblique[cell] + (corner[cell] if corner_adjacency else ()))
        for cell in range(SQUARES)
    )


def batteries(board: bytes | bytearray, side: int) -> list[int]:
    """The squares of `side`'s Artillery."""
    found = []
    piece = ARTILLERY_BYTES[side]
    cell = board.find(piece)
    while cell >= 0:
        found.append(cell)
        cell = board.find(piece, cell + 1)
    return found


def battery_range(board: bytes | bytearray, battery: int, blocks: tuple[bool, ...]) -> list[int]:
    """The squares a battery commands (its range), nearest first along each line."""
    squares = []
    for line in RANGE_RAYS[battery]:
        for square in line:
            squares.append(square)
            if blocks[board[square]]:
                break
    return squares


def commanded(board: bytes | bytearray, guns: list[int], blocks: tuple[bool, ...]) -> set[int]:
    """The union of the ranges of the batteries on `guns`."""
    squares: set[int] = set()
    add = squares.add
    for battery in guns:
        for line in RANGE_RAYS[battery]:
            for square in line:
                add(square)
                if blocks[board[square]]:
                    break
    return squares


def protected_squares(
    own_guns: list[int], enemy_guns: list[int], adjacent: tuple[frozenset[int], ...]
) -> set[int]:
    """The squares next to one of `own_guns` and next to none of `enemy_guns` (6)."""
    protected: set[int] = set()
    for gun in own_guns:
        protected |= adjacent[gun]
    if protected:
        for gun in enemy_guns:
            protected -= adjacent[gun]
    return protected


def exposed_in(
    board: bytes | bytearray, side: int, enemy_range: set[int], protected: set[int]
) -> set[int]:
    """The squares of `side`'s exposed figures and Wagon, given the enemy range."""
    exposable = EXPOSABLE[side]
    return {s for s in enemy_range if exposable[board[s]] and s not in protected}


def exposed(board: bytes | bytearray, side: int, rules: Rules) -> set[int]:
    """The squares of `side`'s exposed figures and Wagon (A.3's set), from scratch."""
    enemy_guns = batteries(board, 1 - side)
    if not enemy_guns:
        return set()
    blocks = BLOCKS[rules.citadel_and_wagon_block]
    enemy_range = commanded(board, enemy_guns, blocks)
    protected = protected_squares(batteries(board, side), enemy_guns, next_to(rules))
    return exposed_in(board, side, enemy_range, protected)


def commanders(board: bytes | bytearray, square: int, side: int, rules: Rules) -> list[int]:
    """The batteries of `side` that have `square` in range."""
    blocks = BLOCKS[rules.citadel_and_wagon_block]
    return [gun for gun in batteries(board, side) if square in battery_range(board, gun, blocks)]


def wagon_literal_forbidden(board: bytes | bytearray, square: int, side: int, rules: Rules) -> bool:
    """Ruling 8, `literal_text`: the book's two prohibitions for the Wagon on `square`.

    The 2nd or 3rd square of one of its own battery's lines, when that square is in enemy
    range; or a square next to one of its own batteries and next to an enemy battery.
    """
    adjacent = next_to(rules)
    own = batteries(board, side)
    enemy = batteries(board, 1 - side)
    if any(square in adjacent[gun] for gun in own) and any(
        square in adjacent[gun] for gun in enemy
    ):
        return True
    on_own_line = any(square in line[1:] for gun in own for line in RANGE_RAYS[gun])
    if not on_own_line:
        return False
    blocks = BLOCKS[rules.citadel_and_wagon_block]
    return square in commanded(board, enemy, blocks)
