"""The 139-square diamond board with its river, fords and bridge (sections 1 and 2).

Everything is read from `board.json` (a copy of `game_of_battle_board.json`): squares with
their `(col,row)`, bank and book number, the eight directions, the river cells and the
entrances of the crossings. Cell index = square number - 1; cell names are the square
numbers "1".."139" (1-90 are the book's own, ruling 1).

A one-square step exists when both ends are squares, it does not join the south bank to
the north bank (2.3), and it enters and leaves a ford or the bridge only through a marked
entrance (2.4). Every ray of the shared `CellGraph` is then cut by the river and the edges
by construction, so movement and artillery range never look at the river again.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

from engine_service.rules.board import OPPOSITE, CellGraph

_DATA: Final[dict[str, Any]] = json.loads(
    resources.files("engine_service.rules.battle").joinpath("board.json").read_text("utf-8")
)

ORTHOGONAL: Final = ("N", "S", "E", "W")  # through a corner ("angle") of the diamond
OBLIQUE: Final = ("NE", "NW", "SE", "SW")  # through a side: the lines of Artillery and Wagon
DIRECTIONS: Final = ORTHOGONAL + OBLIQUE
# 2.1: the directions as each army names them. The defender faces North with East on its
# right; the attacker faces South with West on its right.
RELATIVE: Final[tuple[dict[str, str], dict[str, str]]] = (
    {  # the attacker (side 0)
        "forward": "S",
        "rear": "N",
        "right": "W",
        "left": "E",
        "forward_right": "SW",
        "forward_left": "SE",
        "rear_right": "NW",
        "rear_left": "NE",
    },
    {  # the defender (side 1)
        "forward": "N",
        "rear": "S",
        "right": "E",
        "left": "W",
        "forward_right": "NE",
        "forward_left": "NW",
        "rear_right": "SE",
        "rear_left": "SW",
    },
)
DELTAS: Final[dict[str, tuple[int, int]]] = {
    name: (int(_DATA["directions"][name][0]), int(_DATA["directions"][name][1]))
    for name in DIRECTIONS
}

# --- squares ---------------------------------------------------------------------------
_SQUARES: Final = sorted(_DATA["squares"], key=lambda square: int(square["n"]))
SQUARES: Final = len(_SQUARES)  # 139
NAMES: Final[tuple[str, ...]] = tuple(str(square["n"]) for square in _SQUARES)
COORDS: Final[tuple[tuple[int, int], ...]] = tuple(
    (int(square["col"]), int(square["row"])) for square in _SQUARES
)
# "south", "north", "ford" or "bridge" for each cell.
BANK: Final[tuple[str, ...]] = tuple(str(square["side"]) for square in _SQUARES)
NUMBERED_IN_BOOK: Final[tuple[bool, ...]] = tuple(
    bool(square["numbered_in_book"]) for square in _SQUARES
)
ROT180: Final[tuple[int, ...]] = tuple(int(square["rot180"]) - 1 for square in _SQUARES)
AT: Final[dict[tuple[int, int], int]] = {xy: i for i, xy in enumerate(COORDS)}
RIVER_CELLS: Final[tuple[tuple[int, int], ...]] = tuple(
    (int(c), int(r)) for c, r in _DATA["coordinates"]["river_cells_not_squares"]
)

# --- crossings (2.4) -------------------------------------------------------------------
CROSSINGS: Final[dict[int, tuple[str, frozenset[str]]]] = {
    int(crossing["square"]) - 1: (str(crossing["type"]), frozenset(crossing["entrances"]))
    for crossing in _DATA["crossings"]
}
FORDS: Final = tuple(sorted(i for i, (kind, _) in CROSSINGS.items() if kind == "ford"))
BRIDGES: Final = tuple(sorted(i for i, (kind, _) in CROSSINGS.items() if kind == "bridge"))


def _opens(cell: int, direction: str) -> bool:
    """Whether a step from `cell` in `direction` may leave it (only entrances of crossings)."""
    crossing = CROSSINGS.get(cell)
    return crossing is None or direction in crossing[1]


def _linked(a: int, b: int, direction: str) -> bool:
    """2.3 and 2.4: no step between the banks; crossings only through their entrances."""
    if {BANK[a], BANK[b]} == {"south", "north"}:
        return False
    return _opens(a, direction) and _opens(b, OPPOSITE[direction])


def _step_table(direction: str) -> tuple[int, ...]:
    dc, dr = DELTAS[direction]
    table = []
    for a, (c, r) in enumerate(COORDS):
        b = AT.get((c + dc, r + dr), -1)
        table.append(b if b >= 0 and _linked(a, b, direction) else -1)
    return tuple(table)


GRAPH: Final = CellGraph(
    names=NAMES, coords=COORDS, step={direction: _step_table(direction) for direction in DIRECTIONS}
)
STEP: Final[dict[str, tuple[int, ...]]] = dict(GRAPH.step)


def geometric_neighbour(cell: int, direction: str) -> int:
    """The square one step away by coordinates alone (river ignored), or -1."""
    dc, dr = DELTAS[direction]
    c, r = COORDS[cell]
    return AT.get((c + dc, r + dr), -1)


def ray(cell: int, direction: str, limit: int) -> tuple[int, ...]:
    """Up to `limit` squares from `cell` in `direction`, nearest first, cut by river and edge."""
    return GRAPH.ray(cell, direction, limit)


def cell_of(name: str) -> int:
    """The cell index of a square number written as text, or UNKNOWN_CELL."""
    return GRAPH.cell(name.strip())


def name_of(cell: int) -> str:
    """The square number of a cell, as text."""
    return NAMES[cell]


# --- adjacency for artillery protection (6, rulings 11 and 12) --------------------------
# "First square next to" a battery: its oblique neighbours (ruling 11), cut by the river
# (ruling 12). The options widen it to the corners and/or across the river.
OBLIQUE_NEIGHBOURS: Final = tuple(
    tuple(n for d in OBLIQUE if (n := STEP[d][cell]) >= 0) for cell in range(SQUARES)
)
CORNER_NEIGHBOURS: Final = tuple(
    tuple(n for d in ORTHOGONAL if (n := STEP[d][cell]) >= 0) for cell in range(SQUARES)
)
OBLIQUE_NEIGHBOURS_ACROSS_RIVER: Final = tuple(
    tuple(n for d in OBLIQUE if (n := geometric_neighbour(cell, d)) >= 0) for cell in range(SQUARES)
)
CORNER_NEIGHBOURS_ACROSS_RIVER: Final = tuple(
    tuple(n for d in ORTHOGONAL if (n := geometric_neighbour(cell, d)) >= 0)
    for cell in range(SQUARES)
)


def blocked_bank_steps() -> list[tuple[int, int, str]]:
    """The board file's list of bank-to-bank steps (cells, direction), for checking the data."""
    return [(int(a) - 1, int(b) - 1, str(d)) for a, b, d in _DATA["river"]["blocked_bank_steps"]]


def setup_data() -> dict[str, list[tuple[int, str]]]:
    """The Plate 1 set-up from the board file: side id -> [(cell, piece kind id)]."""
    return {
        side: [(int(p["square"]) - 1, str(p["piece"])) for p in army["pieces"]]
        for side, army in _DATA["setup"].items()
    }


def plate_figures() -> dict[str, Any]:
    """The board file's translation of the plates' local labels (section 11)."""
    figures: dict[str, Any] = _DATA["plate_figures"]
    return figures


# --- drawing (DescribeGame) --------------------------------------------------------------
# The river's course (2.3) through the corners it passes, the fords, the river cells and
# the bridge, from the left edge to the right edge.
RIVER_LINE: Final[tuple[tuple[float, float], ...]] = (
    (0.0, 7.0),
    (1.0, 7.0),
    (2.0, 6.0),
    (3.0, 6.0),
    (4.0, 6.0),
    (5.0, 7.0),
    (6.0, 7.0),
    (7.0, 8.0),
    (8.0, 9.0),
    (9.0, 10.0),
    (10.0, 11.0),
    (11.0, 11.0),
    (12.0, 12.0),
    (13.0, 12.0),
    (14.0, 12.0),
    (15.0, 11.0),
    (16.0, 11.0),
)
