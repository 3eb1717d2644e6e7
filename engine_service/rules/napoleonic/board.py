"""Board geometry for Napoleonic Chess: the shared square grid plus the tables the rules walk.

Built once per board size (`geometry(width, height)`): which direction leads from a square
to each neighbour, the two-step routes of section 4.6 in both movement modes, and each
side's deployment rows (10.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine_service.memo import memo
from engine_service.rules.board import (
    ALL_DIRECTIONS,
    DIAGONAL,
    ORTHOGONAL,
    SQUARE_DIRECTIONS,
    CellGraph,
    square_grid,
)
from engine_service.rules.napoleonic.pieces import DIRECTION_SETS

MAX_SIDE = 26  # files are letters a..z

# For a diagonal direction, the two orthogonal directions that meet at that corner.
CORNER_EDGES: dict[str, tuple[str, str]] = {
    "NE": ("N", "E"),
    "NW": ("N", "W"),
    "SE": ("S", "E"),
    "SW": ("S", "W"),
}
OPPOSITE: dict[str, str] = {
    "N": "S",
    "S": "N",
    "E": "W",
    "W": "E",
    "NE": "SW",
    "SW": "NE",
    "NW": "SE",
    "SE": "NW",
}


@dataclass(frozen=True, eq=False)
class Geometry:
    """A `width` x `height` board with the lookup tables of movement and combat."""

    width: int
    height: int
    graph: CellGraph
    names: tuple[str, ...]
    index: Mapping[str, int]
    step: Mapping[str, tuple[int, ...]]
    # direction_to[a][b] = direction of the one-step link a -> b (b adjacent to a)
    direction_to: tuple[Mapping[int, str], ...]
    # two_step[dirs_key][a][b] = intermediate squares of king-step routes a -> m -> b
    two_step: Mapping[str, tuple[Mapping[int, tuple[int, ...]], ...]]
    # straight[dirs_key][a][b] = the midpoint of a straight two-square line a -> b
    straight: Mapping[str, tuple[Mapping[int, int], ...]]

    def __len__(self) -> int:
        return len(self.names)

    def name(self, cell: int) -> str:
        """The algebraic name of a cell index."""
        return self.names[cell]

    def xy(self, cell: int) -> tuple[int, int]:
        """(file, rank) of a cell, both from 0."""
        return cell % self.width, cell // self.width

    def distance(self, a: int, b: int) -> int:
        """Chebyshev (king-step) distance between two cells."""
        ax, ay = a % self.width, a // self.width
        bx, by = b % self.width, b // self.width
        return max(abs(ax - bx), abs(ay - by))

    def rank_from_edge(self, cell: int, side_index: int) -> int:
        """The row of a cell counted from a side's own edge, from 1 (the edge index of
        `scenarios.EDGES`: 0 south, 1 north, 2 west, 3 east)."""
        x, y = cell % self.width, cell // self.width
        if side_index == 0:
            return y + 1
        if side_index == 1:
            return self.height - y
        return x + 1 if side_index == 2 else self.width - x

    def along_edge(self, cell: int, side_index: int) -> int:
        """A cell's place along a side's edge from 0: its file for south and north, its
        rank for west and east (a scenario's `span`)."""
        return cell % self.width if side_index < 2 else cell // self.width

    def deployment_cells(
        self, side_index: int, rows: tuple[int, int], span: tuple[int, int] | None = None
    ) -> tuple[int, ...]:
        """The cells of a side's deployment rows (10.5), in board order, within its stretch
        of the edge when it has one (10.6)."""
        low, high = rows
        return tuple(
            cell
            for cell in range(len(self.names))
            if low <= self.rank_from_edge(cell, side_index) <= high
            and (span is None or span[0] <= self.along_edge(cell, side_index) <= span[1])
        )

    def edge_key(self, a: int, b: int) -> tuple[int, int]:
        """The key of the edge between two orthogonal neighbours (smaller cell first)."""
        return (a, b) if a < b else (b, a)


def _two_step_tables(
    graph: CellGraph, dirs: tuple[str, ...]
) -> tuple[tuple[Mapping[int, tuple[int, ...]], ...], tuple[Mapping[int, int], ...]]:
    size = len(graph.names)
    king: list[dict[int, tuple[int, ...]]] = []
    line: list[dict[int, int]] = []
    for a in range(size):
        routes: dict[int, list[int]] = {}
        straight: dict[int, int] = {}
        for d1 in dirs:
            m = graph.step[d1][a]
            if m < 0:
                continue
            for d2 in dirs:
                b = graph.step[d2][m]
                if b < 0 or b == a:
                    continue
                routes.setdefault(b, []).append(m)
                if d1 == d2:
                    straight[b] = m
        king.append({b: tuple(sorted(set(ms))) for b, ms in routes.items()})
        line.append(straight)
    return tuple(king), tuple(line)


@memo(32)  # board sizes come from set-up texts clients send
def geometry(width: int, height: int) -> Geometry:
    """The geometry of a `width` x `height` board (remembered: boards are immutable)."""
    if not (2 <= width <= MAX_SIDE and 2 <= height <= 99):
        raise ValueError(f"board {width}x{height} is outside 2..{MAX_SIDE} x 2..99")
    graph = square_grid(width, height)
    size = len(graph.names)
    direction_to = tuple(
        {graph.step[d][a]: d for d in ALL_DIRECTIONS if graph.step[d][a] >= 0} for a in range(size)
    )
    two_step: dict[str, tuple[Mapping[int, tuple[int, ...]], ...]] = {}
    straight: dict[str, tuple[Mapping[int, int], ...]] = {}
    for key, dirs in DIRECTION_SETS.items():
        two_step[key], straight[key] = _two_step_tables(graph, dirs)
    return Geometry(
        width=width,
        height=height,
        graph=graph,
        names=graph.names,
        index=dict(graph.index),
        step=graph.step,
        direction_to=direction_to,
        two_step=two_step,
        straight=straight,
    )


def is_orthogonal(direction: str) -> bool:
    """Whether a direction name is one of N, E, S, W."""
    return direction in ORTHOGONAL


def is_diagonal(direction: str) -> bool:
    """Whether a direction name is one of NE, SE, SW, NW."""
    return direction in DIAGONAL


def delta(direction: str) -> tuple[int, int]:
    """(dx, dy) of a direction."""
    return SQUARE_DIRECTIONS[direction]
