"""The two armies (section 1): sides, piece kinds, their letters and the one-byte codes.

A cell of the board holds one small integer (a byte of `WarState.board`):

- 0: empty;
- South: 1 Troop that has not moved, 2 Troop that has moved, 3 King, 4 General, 5 Mortar,
  6 Cannon, 7 Horse, 8 placed Flying Machine;
- North: the same kinds plus 8 (9..16).

The Troop's "has moved" flag (section 11) lives in its code, so it travels with the man and
costs nothing to copy. Van and Rear Troops move identically (section 1) and share a code.
"""

from __future__ import annotations

from typing import Final

SOUTH: Final = 0
NORTH: Final = 1
SIDE_IDS: Final = ("south", "north")
SIDE_NAMES: Final = ("South", "North")
SIDE_LETTERS: Final = ("S", "N")

EMPTY: Final = 0
SIDE_SPAN: Final = 8  # codes per side

# Kind offsets inside a side's span (code = 1 + 8 * side + offset).
TROOP: Final = 0  # a Troop that has not moved (may double-step, 7.2)
TROOP_MOVED: Final = 1
KING: Final = 2
GENERAL: Final = 3
MORTAR: Final = 4
CANNON: Final = 5
HORSE: Final = 6
FLYING_MACHINE: Final = 7

KIND_IDS: Final = (
    "troop",
    "troop",
    "king",
    "general",
    "mortar",
    "cannon",
    "horse",
    "flying_machine",
)
KIND_NAMES: Final = (
    "Troop",
    "Troop",
    "King",
    "General",
    "Mortar",
    "Cannon",
    "Horse",
    "Flying Machine",
)
KIND_LETTERS: Final = ("T", "T", "K", "G", "M", "C", "H", "F")

# Section 1: men per side (Troops counted together; Flying Machines on board + in reserve).
ARMY: Final = {"troop": 10, "king": 1, "general": 1, "mortar": 2, "cannon": 2, "horse": 2}
FLYING_MACHINES_PER_SIDE: Final = 2


def code(side: int, kind: int) -> int:
    """The cell code of a man of `kind` (an offset above) belonging to `side`."""
    return 1 + SIDE_SPAN * side + kind


def side_of(cell_code: int) -> int:
    """The side owning a non-empty cell code."""
    return (cell_code - 1) >> 3


def kind_of(cell_code: int) -> int:
    """The kind offset of a non-empty cell code (TROOP and TROOP_MOVED stay distinct)."""
    return (cell_code - 1) & 7


CODE_COUNT: Final = 2 * SIDE_SPAN + 1  # the codes 0 (empty) .. 16
# The side and the kind offset of every cell code, by lookup, for loops over many cells
# (-1 for an empty cell).
SIDE_OF_CODE: Final = (-1, *(side_of(c) for c in range(1, CODE_COUNT)))
KIND_OF_CODE: Final = (-1, *(kind_of(c) for c in range(1, CODE_COUNT)))


def cells_holding(board: bytes | bytearray | list[int], piece: int) -> list[int]:
    """The cells of a board holding `piece` (a code), in board order."""
    if isinstance(board, list):
        return [cell for cell, here in enumerate(board) if here == piece]
    found = []
    at = board.find(piece)
    while at >= 0:
        found.append(at)
        at = board.find(piece, at + 1)
    return found


def describe_man(cell_code: int) -> str:
    """'South Troop', 'North Flying Machine': the owner and kind of a cell code."""
    return f"{SIDE_NAMES[side_of(cell_code)]} {KIND_NAMES[kind_of(cell_code)]}"


def letter_of(cell_code: int) -> str:
    """The diagram letter of a cell code: upper case South, lower case North."""
    letter = KIND_LETTERS[kind_of(cell_code)]
    return letter if side_of(cell_code) == SOUTH else letter.lower()


# Letter -> kind offset (Troops read as not moved; the setup decides the flag).
LETTER_KINDS: Final = {
    "T": TROOP,
    "K": KING,
    "G": GENERAL,
    "M": MORTAR,
    "C": CANNON,
    "H": HORSE,
    "F": FLYING_MACHINE,
}
