"""How each piece moves and what it may take (sections 2.2 and 5).

A move is one straight line of one to three steps in one direction; it stops before an
own piece or on the first enemy piece (a capture by replacement). Lines are the shared
`CellGraph` rays, already cut by the river, the closed sides of the crossings and the
edges, so "geometric" moves need nothing but the board. The artillery rules (section 6)
filter these moves afterwards (`legal`).

The tables below hold, for each piece code and square, the rays the piece walks with the
interned `Move` of each square on them: the generator only indexes tuples.
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.battle.actions import Move, move_of
from engine_service.rules.battle.board import DIRECTIONS, OBLIQUE, RELATIVE, SQUARES, ray
from engine_service.rules.battle.pieces import (
    ARTILLERY,
    ATTACKER,
    CAVALRY,
    CITADEL,
    CODE_COUNT,
    DEFENDER,
    INFANTRY_OF_THE_LINE,
    KINDS,
    LIGHT_INFANTRY,
    WAGON,
    code,
    kind_of,
    side_of,
)

# Light Infantry: 1-3 squares forward and forward-oblique, relative to its owner (ruling 14).
FORWARD: Final[dict[int, tuple[str, ...]]] = {
    side: tuple(RELATIVE[side][name] for name in ("forward", "forward_left", "forward_right"))
    for side in (ATTACKER, DEFENDER)
}


def reach(side: int, kind: int) -> dict[str, int]:
    """How many squares a piece of `kind` owned by `side` may go in each direction (5)."""
    if kind == LIGHT_INFANTRY:
        return {d: 3 if d in FORWARD[side] else 2 for d in DIRECTIONS}
    if kind == INFANTRY_OF_THE_LINE:
        return dict.fromkeys(DIRECTIONS, 2)
    if kind == CAVALRY:
        return dict.fromkeys(DIRECTIONS, 3)
    if kind == ARTILLERY:
        return dict.fromkeys(OBLIQUE, 3)
    if kind == WAGON:
        return dict.fromkeys(OBLIQUE, 2)
    return {}  # the Citadel never moves


def may_capture(mover: int, target: int) -> bool:
    """Who may take what (5, 7, 8): figures take anything of the enemy, Artillery only Artillery."""
    if not mover or not target or side_of(mover) == side_of(target):
        return False
    kind, prey = kind_of(mover), kind_of(target)
    if kind in (LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY):
        return prey in KINDS
    if kind == ARTILLERY:
        return prey == ARTILLERY
    return False  # the Wagon and the Citadel take nothing


def _rays_of(piece: int, cell: int) -> tuple[tuple[tuple[int, Move], ...], ...]:
    if not piece or kind_of(piece) not in KINDS:
        return ()
    lines = []
    for direction, distance in reach(side_of(piece), kind_of(piece)).items():
        line = ray(cell, direction, distance)
        if line:
            lines.append(tuple((dest, move_of(cell, dest)) for dest in line))
    return tuple(lines)


# MOVE_RAYS[piece code][cell]: the rays the piece walks, each a tuple of (square, Move).
MOVE_RAYS: Final = tuple(
    tuple(_rays_of(piece, cell) for cell in range(SQUARES)) for piece in range(CODE_COUNT)
)
# REACH[piece code][cell]: every square on the piece's rays (occupancy ignored).
REACH: Final = tuple(
    tuple(frozenset(dest for line in rays for dest, _ in line) for rays in by_cell)
    for by_cell in MOVE_RAYS
)
# CAN_CAPTURE[mover code][target code]
CAN_CAPTURE: Final = tuple(
    tuple(may_capture(mover, target) for target in range(CODE_COUNT)) for mover in range(CODE_COUNT)
)
# The codes of one side's movable pieces, as one-byte strings for `bytes.find`.
MOVABLE_CODES: Final[tuple[tuple[bytes, ...], tuple[bytes, ...]]] = (
    tuple(bytes([code(ATTACKER, kind)]) for kind in KINDS if kind != CITADEL),
    tuple(bytes([code(DEFENDER, kind)]) for kind in KINDS if kind != CITADEL),
)


def geometric_moves(board: bytes | bytearray, side: int) -> list[Move]:
    """Every move of `side`'s pieces by their move patterns alone (before section 6)."""
    moves: list[Move] = []
    append = moves.append
    find = board.find
    for piece_byte in MOVABLE_CODES[side]:
        piece = piece_byte[0]
        rays_of = MOVE_RAYS[piece]
        capture = CAN_CAPTURE[piece]
        cell = find(piece_byte)
        while cell >= 0:
            for line in rays_of[cell]:
                for dest, move in line:
                    target = board[dest]
                    if not target:
                        append(move)
                    else:
                        if capture[target]:
                            append(move)
                        break
            cell = find(piece_byte, cell + 1)
    return moves


def piece_moves(board: bytes | bytearray, cell: int) -> list[Move]:
    """The geometric moves of the piece on `cell` alone."""
    piece = board[cell]
    capture = CAN_CAPTURE[piece]
    moves: list[Move] = []
    for line in MOVE_RAYS[piece][cell]:
        for dest, move in line:
            target = board[dest]
            if not target:
                moves.append(move)
            else:
                if capture[target]:
                    moves.append(move)
                break
    return moves


def line_between(piece: int, origin: int, destination: int) -> tuple[int, ...] | None:
    """The squares from `origin` to `destination` along one ray of the piece's pattern
    (destination included), ignoring occupancy; None if it is not such a line."""
    for line in MOVE_RAYS[piece][origin]:
        squares = tuple(dest for dest, _ in line)
        if destination in squares:
            return squares[: squares.index(destination) + 1]
    return None
