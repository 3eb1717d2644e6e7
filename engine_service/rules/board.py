"""Boards as data: cells with names, drawing positions and one-step links by direction.

A `CellGraph` is the shared shape of all three boards. Cells are numbered 0..n-1; `step`
gives, per direction, the neighbouring cell or -1 (edge, river, closed side of a ford).
Rays (straight lines of steps) are precomputed once, because every slider and every
artillery range walks them in the inner loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engine_service.rules.errors import Reason, RuleError

# Compass directions on a square grid as (dx, dy); y grows towards North (rank 10 / row 18).
SQUARE_DIRECTIONS: dict[str, tuple[int, int]] = {
    "N": (0, 1),
    "S": (0, -1),
    "E": (1, 0),
    "W": (-1, 0),
    "NE": (1, 1),
    "NW": (-1, 1),
    "SE": (1, -1),
    "SW": (-1, -1),
}
ORTHOGONAL = ("N", "E", "S", "W")
DIAGONAL = ("NE", "SE", "SW", "NW")
ALL_DIRECTIONS = ORTHOGONAL + DIAGONAL
KNIGHT_OFFSETS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E", "NE": "SW", "SW": "NE", "NW": "SE", "SE": "NW"}


@dataclass(frozen=True)
class CellGraph:
    """Named cells and, for each direction, the cell one step away (or -1)."""

    names: tuple[str, ...]
    coords: tuple[tuple[int, int], ...]  # (x, y) lattice position of each cell
    step: Mapping[str, tuple[int, ...]]  # direction -> neighbour index per cell, -1 if none
    index: Mapping[str, int] = field(init=False)
    rays: Mapping[str, tuple[tuple[int, ...], ...]] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {name: i for i, name in enumerate(self.names)})
        rays: dict[str, tuple[tuple[int, ...], ...]] = {}
        for direction, nxt in self.step.items():
            per_cell = []
            for start in range(len(self.names)):
                line: list[int] = []
                cell = nxt[start]
                while cell >= 0 and len(line) < len(self.names):
                    line.append(cell)
                    cell = nxt[cell]
                per_cell.append(tuple(line))
            rays[direction] = tuple(per_cell)
        object.__setattr__(self, "rays", rays)

    def __len__(self) -> int:
        return len(self.names)

    def cell(self, name: str) -> int:
        """The index of a cell name, or UNKNOWN_CELL naming the board's cells."""
        try:
            return self.index[name]
        except KeyError:
            raise RuleError(
                Reason.UNKNOWN_CELL,
                f"{name!r} is not a cell of this board ({self.names[0]}..{self.names[-1]})",
            ) from None

    def ray(self, cell: int, direction: str, limit: int | None = None) -> tuple[int, ...]:
        """The cells from `cell` in `direction`, nearest first, at most `limit` of them."""
        line = self.rays[direction][cell]
        return line if limit is None else line[:limit]

    def neighbours(self, cell: int, directions: Iterable[str] = ALL_DIRECTIONS) -> list[int]:
        """The cells one step away in the given directions."""
        return [n for d in directions if (n := self.step[d][cell]) >= 0]

    def direction_between(self, a: int, b: int) -> str | None:
        """The direction of the one-step link from `a` to `b`, if they are linked."""
        for direction, nxt in self.step.items():
            if nxt[a] == b:
                return direction
        return None


def file_letters(width: int) -> str:
    """File letters a, b, c... for a board `width` files wide (at most 26)."""
    if not 1 <= width <= 26:
        raise ValueError(f"width {width} is outside 1..26")
    return "abcdefghijklmnopqrstuvwxyz"[:width]


def square_grid(width: int, height: int) -> CellGraph:
    """An algebraic `width` x `height` grid: a1 = (0, 0) bottom left, cell = y*width + x."""
    letters = file_letters(width)
    names = tuple(f"{letters[x]}{y + 1}" for y in range(height) for x in range(width))
    coords = tuple((x, y) for y in range(height) for x in range(width))
    step: dict[str, tuple[int, ...]] = {}
    for direction, (dx, dy) in SQUARE_DIRECTIONS.items():
        step[direction] = tuple(
            (y + dy) * width + (x + dx) if 0 <= x + dx < width and 0 <= y + dy < height else -1
            for (x, y) in coords
        )
    return CellGraph(names=names, coords=coords, step=step)


def offset_table(
    graph: CellGraph, offsets: Sequence[tuple[int, int]]
) -> tuple[tuple[int, ...], ...]:
    """For each cell, the cells at the given (dx, dy) offsets that exist (e.g. knight leaps)."""
    at = {xy: i for i, xy in enumerate(graph.coords)}
    return tuple(
        tuple(j for dx, dy in offsets if (j := at.get((x + dx, y + dy), -1)) >= 0)
        for (x, y) in graph.coords
    )
