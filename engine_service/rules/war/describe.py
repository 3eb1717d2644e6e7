"""The board, pieces and rules summary a client needs to draw the game (DescribeGame)."""

from __future__ import annotations

from typing import Final

from engine_service.rules.base import BoardDescription, CellInfo, CellShape, PieceKind, SideInfo
from engine_service.rules.options import Options
from engine_service.rules.war.board import BACK_RANK, CELLS, HEIGHT, NAMES, WIDTH, rank_of
from engine_service.rules.war.pieces import EMPTY
from engine_service.rules.war.setup import derived_setup_text, parse_setup
from engine_service.rules.war.start import options_citadels

TITLE: Final = "The Game of War (Hudson Maxim, 1910)"

SIDES: Final = (
    SideInfo("south", "South", "blue"),
    SideInfo("north", "North", "red"),
)

PIECE_KINDS: Final = (
    PieceKind("king", "King", "K", "\u265a", "one step in any direction; not royal"),
    PieceKind("general", "General", "G", "\u265b", "any distance along ranks, files, diagonals"),
    PieceKind("mortar", "Mortar", "M", "\u265c", "any distance along ranks and files"),
    PieceKind("cannon", "Cannon", "C", "\u265d", "any distance along diagonals"),
    PieceKind("horse", "Horse", "H", "\u265e", "leaps like a chess knight"),
    PieceKind(
        "troop",
        "Troop",
        "T",
        "\u265f",
        "steps forward (two on its first move), captures diagonally forward, jumps enemy "
        "Troops diagonally forward in chains; immobile on its final rank",
    ),
    PieceKind(
        "flying_machine",
        "Flying Machine",
        "F",
        "\u2708",
        "placed once from the reserve on any empty square but a Citadel; blocks it for good",
    ),
)

SUMMARY: Final = """\
Two armies of twenty men on a 10 x 10 board: King, General (queen), two Mortars (rooks), two \
Cannons (bishops), two Horses (knights), ten Troops and two Flying Machines held in reserve.

Troops move like pawns but never promote; they also jump enemy Troops diagonally forward, \
checkers fashion, and must go on jumping while they can. An enemy Troop that one of your \
Troops could jump must be captured, by any piece. A Troop that reaches its last rank stays \
there for good and cannot be captured, except on the enemy Citadel.

Instead of moving, a player may place a Flying Machine on any empty square but the two \
Citadels; it blocks that square for the rest of the game.

The King is not royal. Each side's Citadel is the square its King started on. You win by \
putting a man on the enemy Citadel and keeping it there through your opponent's next move. \
A player with no legal move loses."""

NOTATION: Final = """\
Squares a1..j10 (South plays up from rank 1). Troop moves have no letter, other men take \
K G M C H: e3-e4, e3-e5, Md1-d5, Hb1-c3. Captures use x: c5xd6, Md1xd6. Jump chains list \
every landing square: a3:c5:e7. Placing a Flying Machine: F@e5. Case does not matter and \
a piece letter may be added (Te3-e4). Depending on the options: pass; huff c5 <action>; \
F@e5 d2-d4 (placement then move)."""


def describe_board(options: Options) -> BoardDescription:
    """Cells with colours, Citadels and the Flying-Machine stations of the initial position."""
    citadels = set(options_citadels(options))
    initial = parse_setup(derived_setup_text(options))
    cells = []
    for cell in range(CELLS):
        x, y = cell % WIDTH, rank_of(cell)
        tags = ["dark" if (x + y) % 2 == 0 else "light"]
        if cell in citadels:
            tags.append("citadel")
        if y in BACK_RANK and initial.board[cell] == EMPTY:
            tags.append("station")  # A27: the circles behind the empty back-rank squares
        cells.append(CellInfo(NAMES[cell], x + 0.5, y + 0.5, CellShape.SQUARE, tuple(tags)))
    return BoardDescription(
        game="war",
        title=TITLE,
        width=float(WIDTH),
        height=float(HEIGHT),
        cells=tuple(cells),
        features=(),
        piece_kinds=PIECE_KINDS,
        sides=SIDES,
        summary=SUMMARY,
        notation=NOTATION,
    )
