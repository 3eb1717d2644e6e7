"""What a client needs to draw the board (DescribeGame): cells, river, crossings, pieces."""

from __future__ import annotations

from typing import Final

from engine_service.memo import memo
from engine_service.rules.base import (
    BoardDescription,
    CellInfo,
    CellShape,
    Feature,
    PieceKind,
    SideInfo,
)
from engine_service.rules.battle.board import (
    BANK,
    COORDS,
    CROSSINGS,
    DELTAS,
    NAMES,
    NUMBERED_IN_BOOK,
    RIVER_CELLS,
    RIVER_LINE,
    SQUARES,
)
from engine_service.rules.battle.notation import HELP
from engine_service.rules.battle.start import INITIAL_BOARD

TITLE: Final = "War-Chess, or the Game of Battle (Col. Charles Richardson, 1866)"

SIDES: Final = (
    SideInfo("attacker", "Attacker (the invading army, north; white)", "white"),
    SideInfo("defender", "Defender (holds the Citadel, south; black)", "black"),
)

PIECE_KINDS: Final = (
    PieceKind(
        "light_infantry",
        "Light Infantry",
        "L",
        "♙",
        "Moves 1-3 squares forward or forward-oblique (towards the enemy), 1-2 squares in the "
        "other five directions; takes any enemy piece but cannot end in enemy range unprotected.",
    ),
    PieceKind(
        "infantry_of_the_line",
        "Infantry of the Line",
        "I",
        "♖",
        "Moves 1-2 squares in any of the eight directions; takes any enemy piece.",
    ),
    PieceKind(
        "cavalry",
        "Cavalry",
        "C",
        "♘",
        "Moves 1-3 squares in any of the eight directions; takes any enemy piece.",
    ),
    PieceKind(
        "artillery",
        "Artillery",
        "A",
        "♗",
        "Moves 1-3 squares obliquely; takes only enemy Artillery. Commands its oblique lines to "
        "three squares: enemy figures may not stand there unless next to their own battery.",
    ),
    PieceKind(
        "wagon",
        "Wagon (supply train)",
        "W",
        "⚐",
        "The attacker's: moves 1-2 squares obliquely, takes nothing. Lost if taken; cannot be "
        "taken while an attacking battery covers its square.",
    ),
    PieceKind(
        "citadel",
        "Citadel",
        "T",
        "♜",
        "The defender's: never moves, takes nothing. Taken by attacking Light Infantry, "
        "Infantry of the Line or Cavalry, even when covered by Artillery.",
    ),
)

SUMMARY: Final = (
    "Two armies on a 139-square diamond board crossed by a river, passable only at the "
    "fords 47 and 83 and the bridge 70 through their marked entrances. The attacker wins by "
    "taking the Citadel (square 19), the defender by taking the Wagon; a side left with only "
    "Artillery loses.\n\n"
    "Artillery commands its oblique lines up to three squares (stopped by any piece and by "
    "the river). A Light Infantry, Infantry of the Line, Cavalry or the Wagon may not end a "
    "move in enemy range unless it stands next to (obliquely) its own battery and not next to "
    "an enemy one; no move may uncover one's own figure; figures found in range at the start "
    "of a turn must be relieved, and a commanded Citadel must be answered, before anything "
    "else. Artillery takes only Artillery.\n\n"
    "Draws: agreement, repetition, no capture for a number of moves, or no legal move "
    "(see the options)."
)

NOTATION: Final = (
    f"Squares are the numbers of the book (1-90) and their continuation (91-139). To play, {HELP}."
)


def _corners(cell: tuple[int, int]) -> tuple[tuple[float, float], ...]:
    c, r = cell
    return ((c, r + 1.0), (c + 1.0, r), (c, r - 1.0), (c - 1.0, r))


def _closed_sides() -> tuple[Feature, ...]:
    features = []
    for cell, (kind, entrances) in sorted(CROSSINGS.items()):
        c, r = COORDS[cell]
        for direction, (dc, dr) in DELTAS.items():
            if direction in entrances:
                continue
            if abs(dc) == 2 or abs(dr) == 2:  # through a corner
                points: tuple[tuple[float, float], ...] = ((c + dc / 2, r + dr / 2),)
            else:  # through a side
                points = ((c + dc, r), (c, r + dr))
            features.append(
                Feature(
                    "closed_side",
                    points,
                    (NAMES[cell],),
                    f"{kind} {NAMES[cell]}: {direction} closed",
                )
            )
    return tuple(features)


@memo(1)
def describe_board() -> BoardDescription:
    """The board for drawing: diamonds at (col,row) labelled with their square numbers."""
    cells = []
    initial_citadel = next(i for i, p in enumerate(INITIAL_BOARD) if p and p & 7 == 6)
    for cell in range(SQUARES):
        bank = BANK[cell]
        tags = [bank if bank in ("ford", "bridge") else f"bank:{bank}"]
        if cell == initial_citadel:
            tags.append("citadel")
        if not NUMBERED_IN_BOOK[cell]:
            tags.append("unnumbered_in_book")
        c, r = COORDS[cell]
        cells.append(
            CellInfo(NAMES[cell], float(c), float(r), CellShape.DIAMOND, tuple(tags), NAMES[cell])
        )
    features = [Feature("river", RIVER_LINE, (), "river")]
    features += [Feature("river_cell", _corners(cell), (), "river") for cell in RIVER_CELLS]
    features += _closed_sides()
    return BoardDescription(
        game="battle",
        title="War-Chess, or the Game of Battle (Richardson, 1866)",
        width=16.0,
        height=18.0,
        cells=tuple(cells),
        features=tuple(features),
        piece_kinds=PIECE_KINDS,
        sides=SIDES,
        summary=SUMMARY,
        notation=NOTATION,
    )
