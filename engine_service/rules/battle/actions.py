"""Game of Battle actions: a `Move` of one piece from a square to another (section 5).

Every possible (origin, destination) pair is interned as one `Move`, so the move tables of
`movement` and the legal-move lists share the same small values.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from engine_service.rules.battle.board import SQUARES


class Move(NamedTuple):
    """A move of the piece on `origin` to `destination` (cell indices; a capture if occupied)."""

    origin: int
    destination: int


MOVES: Final[tuple[dict[int, Move], ...]] = tuple({} for _ in range(SQUARES))


def move_of(origin: int, destination: int) -> Move:
    """The interned `Move` from `origin` to `destination`."""
    known = MOVES[origin].get(destination)
    if known is None:
        known = MOVES[origin][destination] = Move(origin, destination)
    return known
