"""Boards drawn from the engine's description, never from knowledge of a game.

Two drawings cover every board the engine describes:

- **grid**: every cell a SQUARE on a regular lattice (the 10x10 Game of War, Napoleonic
  8x8 and larger). One token of three characters per cell, file and rank labels taken from
  the cell names around it. Boards with line features (border obstacles, rivers) get a blank
  line and column between cells so the lines have somewhere to go.
- **lattice**: anything else, in particular the Game of Battle's diamonds. Each cell is a
  token at its (x, y), scaled so the tokens of a row never touch; the token carries the
  cell's label (the book's square number), so the numbers stay readable with the pieces on.

Features (the river, river cells, obstacles) are rasterised into the spaces between tokens.
Pieces are their notation letter (capitals for the side at the bottom of the engine's drawing,
small letters for the other) or, with colours, the kind's chess glyph in its side's colour,
outlined for the side in capitals and filled for the other (`Symbols`). Units that already
moved this turn (`Scene.spent`) carry a prime mark.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from rich.text import Text

from cli_client.render.canvas import Canvas
from cli_client.render.theme import (
    MARKS,
    Palette,
    Theme,
    mark_of,
    on_colour,
    palette_for,
    side_colour,
)
from wargame.v1 import board_pb2, game_pb2

_CELL_NAME = re.compile(r"^([A-Za-z]+)(\d+)$")
_EPSILON = 1e-6
_LINE_FEATURES = frozenset({"river", "obstacle"})
SPENT = "'"  # beside a unit that already moved this turn


@dataclass(frozen=True)
class Scene:
    """What to draw: a board, the pieces on it, and what to pick out."""

    board: board_pb2.BoardDescription
    pieces: Sequence[game_pb2.Piece]
    last: frozenset[str] = frozenset()  # cells of the last move
    marked: frozenset[str] = frozenset()  # cells to pick out (deployment rows, moves)
    turns: int = 0  # quarter turns anticlockwise (2: the other side of a duel at the bottom)
    upper_side: str = ""  # side written in capitals (default: the first side)
    terrain: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # tags from the state
    replaced: frozenset[str] = frozenset()  # board tags the state decides instead (see terrain)
    spent: frozenset[str] = frozenset()  # cells of units that already moved this turn
    kinds: frozenset[str] = frozenset()  # the kinds of the game's armies, gone ones too


def cell_tags(cell: board_pb2.Cell, scene: Scene) -> tuple[str, ...]:
    """A cell's tags: the board's (less those the state decides) and the state's."""
    own = tuple(tag for tag in cell.tags if tag not in scene.replaced)
    return own + tuple(scene.terrain.get(cell.name, ()))


def bottom_side(board: board_pb2.BoardDescription, state: game_pb2.GameState) -> str:
    """The side whose pieces (or deployment cells) are lowest in the engine's drawing."""
    heights: dict[str, list[float]] = {}
    y_of = {cell.name: cell.y for cell in board.cells}
    for piece in state.pieces:
        if piece.cell in y_of:
            heights.setdefault(piece.side, []).append(y_of[piece.cell])
    if len(heights) < 2:
        for cell in board.cells:
            for tag in cell.tags:
                if tag.startswith("deployment:"):
                    heights.setdefault(tag.partition(":")[2], []).append(cell.y)
    if not heights:
        return board.sides[0].id if board.sides else ""
    return min(heights, key=lambda side: sum(heights[side]) / len(heights[side]))


def _positions(
    board: board_pb2.BoardDescription, state: game_pb2.GameState
) -> dict[str, list[tuple[float, float]]]:
    """Each side's men on the board (x, y), or its deployment cells when it has none."""
    at = {cell.name: (cell.x, cell.y) for cell in board.cells}
    found: dict[str, list[tuple[float, float]]] = {}
    for piece in state.pieces:
        if piece.cell in at:
            found.setdefault(piece.side, []).append(at[piece.cell])
    for cell in board.cells:
        for tag in cell.tags:
            side = tag.partition(":")[2] if tag.startswith("deployment:") else ""
            if side and side not in {piece.side for piece in state.pieces}:
                found.setdefault(side, []).append((cell.x, cell.y))
    return found


def turns_for(
    board: board_pb2.BoardDescription,
    state: game_pb2.GameState,
    side: str,
    alliances: Mapping[str, str] | None = None,
) -> int:
    """The quarter turns (anticlockwise) that put `side`'s army, and its allies', at the
    bottom of the drawing: allies share one orientation; a player whose army comes from
    the west edge gets the board turned a quarter (0 for a spectator)."""
    alliances = alliances or {}
    ours = alliances.get(side, side)
    mine: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    for owner, points in _positions(board, state).items():
        (mine if alliances.get(owner, owner) == ours else theirs).extend(points)
    if not side or not mine or not theirs:
        return 0
    dx = sum(x for x, _ in mine) / len(mine) - sum(x for x, _ in theirs) / len(theirs)
    dy = sum(y for _, y in mine) / len(mine) - sum(y for _, y in theirs) / len(theirs)
    if abs(dx) > abs(dy):
        return 1 if dx < 0 else 3  # from the west: a quarter turn; from the east: three
    return 0 if dy <= 0 else 2


def turned(board: board_pb2.BoardDescription, turns: int) -> board_pb2.BoardDescription:
    """The board with its coordinates (cells and features) turned `turns` quarter turns
    anticlockwise; the cells keep their names."""
    turns %= 4
    if not turns:
        return board

    def turn(x: float, y: float) -> tuple[float, float]:
        for _ in range(turns):
            x, y = -y, x
        return x, y

    copy = board_pb2.BoardDescription()
    copy.CopyFrom(board)
    for cell in copy.cells:
        cell.x, cell.y = turn(cell.x, cell.y)
    for feature in copy.features:
        for point in feature.points:
            point.x, point.y = turn(point.x, point.y)
    return copy


def _steps(values: Sequence[float]) -> float | None:
    """The common spacing of sorted distinct values, or None if they are irregular."""
    distinct = sorted(set(values))
    if len(distinct) < 2:
        return 1.0
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(distinct)}
    return gaps.pop() if len(gaps) == 1 else None


# Chess glyphs come in pairs, as on a chess diagram: the side written in capitals gets the
# outlined ones, the other side the filled ones, so the sides differ without colour.
OUTLINED = "♔♕♖♗♘♙"
FILLED = "♚♛♜♝♞♟"


def paired_glyph(glyph: str, outlined: bool) -> str:
    """A chess glyph in its outlined or filled form; "" for a glyph with no such pair."""
    for row in (OUTLINED, FILLED):
        if len(glyph) == 1 and glyph in row:
            return (OUTLINED if outlined else FILLED)[row.index(glyph)]
    return ""


class Symbols:
    """How pieces are written: glyphs by side (outlined or filled), or letters by case."""

    def __init__(self, scene: Scene, theme: Theme) -> None:
        self.theme = theme
        board = scene.board
        self.kinds = {kind.id: kind for kind in board.piece_kinds}
        self.upper = scene.upper_side or (board.sides[0].id if board.sides else "")
        # In a game of alliances (Napoleonic Chess 10.6) the upper side's allies are written
        # like it, so friend and foe differ without colour too.
        alliances = {side.id: side.alliance or side.id for side in board.sides}
        ours = alliances.get(self.upper, self.upper)
        self.upper_sides = {self.upper} | {s for s, a in alliances.items() if a == ours}
        self.colours = {side.id: side_colour(side.colour) for side in board.sides}
        # Glyphs are chosen from every kind the armies had, so none changes mid-game.
        present = set(scene.kinds) | {piece.kind for piece in scene.pieces} or set(self.kinds)
        families: dict[str, int] = {}
        for kind_id in present:
            kind = self.kinds.get(kind_id)
            family = paired_glyph(kind.glyph, False) if kind is not None else ""
            if family:
                families[family] = families.get(family, 0) + 1
        # A glyph shared by two kinds in play would hide which is which: letters then.
        self.glyph_ok = {family for family, count in families.items() if count == 1}

    def glyph(self, kind_id: str, side: str) -> str:
        """The kind's glyph for a side, or "" when it is written as a letter."""
        kind = self.kinds.get(kind_id)
        if kind is None or not self.theme.glyphs:
            return ""
        if paired_glyph(kind.glyph, False) not in self.glyph_ok:
            return ""
        return paired_glyph(kind.glyph, side in self.upper_sides)

    def letter(self, kind_id: str, side: str) -> str:
        """The kind's notation letter, in capitals for the upper side (and its allies)."""
        kind = self.kinds.get(kind_id)
        if kind is None:
            return "?"
        letter = (kind.letter or kind.name[:1] or "?")[:1]
        return letter.upper() if side in self.upper_sides else letter.lower()

    def of(self, kind_id: str, side: str) -> str:
        """The one-character token of a piece."""
        return self.glyph(kind_id, side) or self.letter(kind_id, side)

    def char(self, piece: game_pb2.Piece) -> str:
        """The one-character token of a piece on the board."""
        return self.of(piece.kind, piece.side)

    def style(self, piece: game_pb2.Piece, background: str) -> str:
        """The style of a piece on a background."""
        colour = self.colours.get(piece.side, "#808080")
        return f"bold {colour} on {background}"


def _mark_char(tag: str, theme: Theme) -> str:
    mark = MARKS[tag]
    return mark.unicode if theme.unicode else mark.ascii


def draw_board(scene: Scene, theme: Theme, *, compact: bool = False) -> list[Text]:
    """The board as lines of text.

    `compact` draws a lattice with one line per row of cells and no blank line around it
    (about half the height, for a terminal too low for the normal drawing); the river then
    shows only in the columns between tokens. A grid is drawn the same either way: its
    blank lines carry the borders' obstacles and rivers.
    """
    if scene.turns % 4:
        scene = replace(scene, board=turned(scene.board, scene.turns), turns=0)
    cells = list(scene.board.cells)
    if not cells:
        return [Text("(the engine described no cells)")]
    square = all(
        cell.shape in (board_pb2.CELL_SHAPE_SQUARE, board_pb2.CELL_SHAPE_UNSPECIFIED)
        for cell in cells
    )
    step_x = _steps([cell.x for cell in cells])
    step_y = _steps([cell.y for cell in cells])
    if square and step_x and step_y:
        return _Grid(scene, theme, step_x, step_y).draw()
    return _Lattice(scene, theme, compact=compact).draw()


class _Drawing:
    """What both drawings share: pieces by cell, the palette, features."""

    def __init__(self, scene: Scene, theme: Theme) -> None:
        self.scene = scene
        self.theme = theme
        self.pieces = Symbols(scene, theme)
        self.at = {piece.cell: piece for piece in scene.pieces}
        self.palette: Palette = palette_for([side.colour for side in scene.board.sides])
        self.empty = "·" if theme.unicode else "."
        # Positions next to cell tokens: lines are not drawn there, so tokens stay readable.
        self.reserved: set[tuple[int, int]] = set()
        self.compact = False

    def reserve(self, line: int, start: int, length: int) -> None:
        """Keep the columns around a token free of lines (a compact drawing has no others)."""
        if self.compact:
            return
        for col in range(start - 1, start + length + 1):
            self.reserved.add((line, col))

    def background(self, cell: board_pb2.Cell, tags: tuple[str, ...]) -> str:
        """A cell's background colour: the last move, picked out, or its terrain."""
        if cell.name in self.scene.last:
            return self.palette.last
        if cell.name in self.scene.marked:
            return self.palette.marked
        return self.palette.background(tags)

    def features(self, canvas: Canvas, to_canvas: _Mapper) -> None:
        """Rasterise the river, river cells and obstacles into free positions."""
        theme, palette = self.theme, self.palette
        for feature in self.scene.board.features:
            points = [(point.x, point.y) for point in feature.points]
            if feature.kind in _LINE_FEATURES and len(points) >= 2:
                if feature.kind == "river":
                    char, style = ("≈" if theme.unicode else "~"), f"bold {palette.river}"
                    thick = True
                else:
                    char, style = ("━" if theme.unicode else "="), f"bold {palette.obstacle}"
                    thick = False
                for start, end in itertools.pairwise(points):
                    self._segment(
                        canvas, to_canvas(*start), to_canvas(*end), char, style, thick=thick
                    )
            elif feature.kind == "river_cell" and points:
                centre_x = sum(x for x, _ in points) / len(points)
                centre_y = sum(y for _, y in points) / len(points)
                line, col = to_canvas(centre_x, centre_y)
                width = to_canvas.token_width
                text = ("≈" if theme.unicode else "~") * width
                first = round(col) - (width - 1) // 2
                if all(canvas.free(round(line), first + i) for i in range(width)):
                    canvas.put(
                        round(line), first, text, theme.style(f"{palette.river} on {palette.water}")
                    )

    def _segment(
        self,
        canvas: Canvas,
        start: tuple[float, float],
        end: tuple[float, float],
        char: str,
        style: str,
        *,
        thick: bool,
    ) -> None:
        (l0, c0), (l1, c1) = start, end
        steps = max(1, math.ceil(max(abs(l1 - l0), abs(c1 - c0)) * 2))
        style = style if self.theme.colour else ""
        for step in range(steps + 1):
            t = step / steps
            line = round(l0 + (l1 - l0) * t)
            col = round(c0 + (c1 - c0) * t)
            for offset in (-1, 0, 1) if thick else (0,):
                spot = (line, col + offset)
                if canvas.free(*spot) and spot not in self.reserved:
                    canvas.put(line, col + offset, char, style)


class _Mapper:
    """Board coordinates to canvas (line, column), as floats."""

    def __init__(
        self,
        origin: tuple[float, float],
        scale: tuple[float, float],
        offset: tuple[float, float],
        token_width: int,
    ) -> None:
        self.origin = origin
        self.scale = scale
        self.offset = offset
        self.token_width = token_width

    def __call__(self, x: float, y: float) -> tuple[float, float]:
        col = self.offset[1] + (x - self.origin[0]) * self.scale[0]
        line = self.offset[0] + (y - self.origin[1]) * self.scale[1]
        return line, col


class _Grid(_Drawing):
    """Square cells on a regular lattice, with file and rank labels."""

    def __init__(self, scene: Scene, theme: Theme, step_x: float, step_y: float) -> None:
        super().__init__(scene, theme)
        cells = list(scene.board.cells)
        xs = sorted({round(cell.x, 6) for cell in cells})
        ys = sorted({round(cell.y, 6) for cell in cells}, reverse=True)  # top row first
        self.xs, self.ys = xs, ys
        self.step_x, self.step_y = step_x, step_y
        self.by_position = {(round(cell.x, 6), round(cell.y, 6)): cell for cell in cells}
        spaced = any(
            feature.kind in _LINE_FEATURES and len(feature.points) >= 2
            for feature in scene.board.features
        )
        self.pitch_x, self.pitch_y = (4, 2) if spaced else (3, 1)
        self.margin = 1 if spaced else 0

    def _axis_labels(self) -> tuple[list[str], list[str]]:
        """The label of each column and row: the letter or number its cells share (a board
        turned a quarter has its ranks along the top and its files down the side)."""
        columns = [[(x, y) for y in self.ys] for x in self.xs]
        rows = [[(x, y) for x in self.xs] for y in self.ys]
        files = [self._shared(line, prefer=1) for line in columns]
        ranks = [self._shared(line, prefer=2) for line in rows]
        return (files if any(files) else []), (ranks if any(ranks) else [])

    def _shared(self, positions: Sequence[tuple[float, float]], prefer: int) -> str:
        """The part of their names (1: letters, 2: number) the cells at `positions` share,
        the preferred part first; "" if they share neither."""
        names = [self.by_position[p].name for p in positions if p in self.by_position]
        matches = [match for name in names if (match := _CELL_NAME.match(name))]
        for group in (prefer, 3 - prefer):
            parts = {match.group(group) for match in matches}
            if names and len(parts) == 1:
                return parts.pop()
        return ""

    def draw(self) -> list[Text]:
        """The grid with file and rank labels around it."""
        files, ranks = self._axis_labels()
        rank_width = max((len(rank) for rank in ranks), default=0)
        left = rank_width + 1 if ranks else 0
        top = (1 if files else 0) + self.margin
        board_width = len(self.xs) * self.pitch_x + (1 if self.pitch_x == 4 else 0)
        width = left + board_width + (rank_width + 1 if ranks else 0)
        board_height = (len(self.ys) - 1) * self.pitch_y + 1 + 2 * self.margin
        height = (1 if files else 0) * 2 + board_height
        canvas = Canvas(width, height)
        first_col = left + (1 if self.pitch_x == 4 else 0)
        axis_style = "dim" if self.theme.colour else ""

        def centre_col(index: int) -> int:
            """The canvas column of the centre of the index-th column of cells."""
            return first_col + index * self.pitch_x + 1

        def line_of(index: int) -> int:
            """The canvas line of the index-th row of cells."""
            return top + index * self.pitch_y

        for index, label in enumerate(files):
            start = centre_col(index) - (len(label) - 1) // 2
            canvas.put(0, start, label, axis_style)
            canvas.put(height - 1, start, label, axis_style)
        for index, label in enumerate(ranks):
            canvas.put(line_of(index), left - 1 - len(label), label, axis_style)
            canvas.put(
                line_of(index),
                first_col + len(self.xs) * self.pitch_x + (1 if self.pitch_x == 4 else 0),
                label,
                axis_style,
            )
        for column, x in enumerate(self.xs):
            for row, y in enumerate(self.ys):
                cell = self.by_position.get((x, y))
                if cell is not None:
                    self._token(canvas, line_of(row), centre_col(column) - 1, cell)
        dx = (self.xs[1] - self.xs[0]) if len(self.xs) > 1 else self.step_x
        dy = (self.ys[1] - self.ys[0]) if len(self.ys) > 1 else -self.step_y
        mapper = _Mapper(
            origin=(self.xs[0], self.ys[0]),
            scale=(self.pitch_x / dx, self.pitch_y / dy),
            offset=(float(top), float(centre_col(0))),
            token_width=3,
        )
        self.features(canvas, mapper)
        return canvas.lines()

    def _token(self, canvas: Canvas, line: int, col: int, cell: board_pb2.Cell) -> None:
        tags = cell_tags(cell, self.scene)
        mark = mark_of(tags)
        piece = self.at.get(cell.name)
        last = cell.name in self.scene.last
        marked = cell.name in self.scene.marked
        spent = piece is not None and cell.name in self.scene.spent
        if self.theme.colour:
            background = self.background(cell, tags)
            plain = f"on {background}"
            if piece is not None:
                centre, centre_style = self.pieces.char(piece), self.pieces.style(piece, background)
            elif mark:
                centre, centre_style = (
                    _mark_char(mark, self.theme),
                    f"{on_colour(background)} on {background}",
                )
            else:
                centre, centre_style = " ", plain
            if spent:
                canvas.put(line, col, SPENT, f"bold {on_colour(background)} on {background}")
            else:
                canvas.put(line, col, " ", plain)
            canvas.put(line, col + 1, centre, centre_style)
            canvas.put(line, col + 2, " ", plain)
            return
        if piece is not None:
            centre = self.pieces.char(piece)
            right = _mark_char(mark, self.theme) if mark else " "
        elif marked:
            centre, right = "+", " "
        else:
            centre = _mark_char(mark, self.theme) if mark else self.empty
            right = " "
        left = SPENT if spent else " "
        if last:
            left, right = "[", "]"
        canvas.put(line, col, left + centre + right)


class _Lattice(_Drawing):
    """Cells as labelled tokens at their coordinates (diamond boards and anything irregular)."""

    def __init__(self, scene: Scene, theme: Theme, *, compact: bool = False) -> None:
        super().__init__(scene, theme)
        self.compact = compact
        cells = list(scene.board.cells)
        self.cells = cells
        label_width = max(
            len(cell.label or cell.name) + (1 if mark_of(cell_tags(cell, scene)) else 0)
            for cell in cells
        )
        # piece + label, plus a '*' for the last move when there is no colour to show it
        self.token_width = label_width + 1 + (0 if theme.colour else 1)
        xs = sorted({cell.x for cell in cells})
        ys = sorted({cell.y for cell in cells})
        unit_x = min((b - a for a, b in itertools.pairwise(xs) if b - a > _EPSILON), default=1.0)
        unit_y = min((b - a for a, b in itertools.pairwise(ys) if b - a > _EPSILON), default=1.0)
        same_row_gap = min(
            (
                abs(a.x - b.x)
                for a in cells
                for b in cells
                if a is not b and abs(a.y - b.y) < _EPSILON and abs(a.x - b.x) > _EPSILON
            ),
            default=2 * unit_x,
        )
        self.per_x = math.ceil((self.token_width + 1) / (same_row_gap / unit_x)) / unit_x
        self.per_y = (1 if compact else 2) / unit_y
        self.x_range = (xs[0], xs[-1])
        self.y_range = (ys[0], ys[-1])

    def draw(self) -> list[Text]:
        """The labelled tokens at their coordinates, with the features between them."""
        half = self.token_width // 2 + 1
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        width = round((x1 - x0) * self.per_x) + 2 * half + 1
        margin = 0 if self.compact else 1  # a blank line above and below
        height = round((y1 - y0) * self.per_y) + 1 + 2 * margin
        canvas = Canvas(width, height)
        mapper = _Mapper(
            (x0, y1), (self.per_x, -self.per_y), (float(margin), float(half)), self.token_width
        )
        for cell in self.cells:
            line, col = mapper(cell.x, cell.y)
            self._token(canvas, round(line), round(col), cell)
        self.features(canvas, mapper)
        return canvas.lines()

    def _token(self, canvas: Canvas, line: int, centre: int, cell: board_pb2.Cell) -> None:
        tags = cell_tags(cell, self.scene)
        mark = mark_of(tags)
        label = (_mark_char(mark, self.theme) if mark else "") + (cell.label or cell.name)
        piece = self.at.get(cell.name)
        if self.theme.colour:
            background = self.background(cell, tags)
            parts: list[tuple[str, str]] = []
            if piece is not None:
                parts.append((self.pieces.char(piece), self.pieces.style(piece, background)))
            label_colour = (
                self.palette.label if background in (self.palette.plain,) else on_colour(background)
            )
            parts.append((label, f"{label_colour} on {background}"))
            length = sum(len(text) for text, _ in parts)
            pad_left = (self.token_width - length) // 2
            pad_right = self.token_width - length - pad_left
            parts = [
                (" " * pad_left, f"on {background}"),
                *parts,
                (" " * pad_right, f"on {background}"),
            ]
            col = centre - (self.token_width - 1) // 2
            self.reserve(line, col, self.token_width)
            for text, style in parts:
                canvas.put(line, col, text, style)
                col += len(text)
            return
        text = (self.pieces.char(piece) if piece is not None else "") + label
        if cell.name in self.scene.last:
            text += "*"
        elif piece is not None and cell.name in self.scene.spent:
            text += SPENT
        elif cell.name in self.scene.marked:
            text += "!"
        self.reserve(line, centre - (len(text) - 1) // 2, len(text))
        canvas.put(line, centre - (len(text) - 1) // 2, text)
