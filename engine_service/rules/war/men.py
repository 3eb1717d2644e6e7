"""Moves of the King, General, Mortar, Cannon and Horse (section 6).

King: one step any way; General: queen; Mortar: rook; Cannon: bishop; Horse: knight leap.
Sliders stop at the first occupied square and may capture there if the man is capturable
(section 5). A placed Flying Machine blocks a line like a man unless
flying_machine_blocks_sliders is false (A7); the Horse leaps over one unless
horse_leaps_flying_machine is false (A6).
"""

from __future__ import annotations

from engine_service.rules.war.actions import Action
from engine_service.rules.war.board import (
    DIAGONAL_RAYS,
    HORSE_LEAPS,
    HORSE_LEAPS_OVER,
    KING_STEPS,
    ORTHOGONAL_RAYS,
    QUEEN_RAYS,
)
from engine_service.rules.war.pieces import (
    CANNON,
    FLYING_MACHINE,
    GENERAL,
    HORSE,
    KING,
    MORTAR,
    kind_of,
)
from engine_service.rules.war.state import Turn

SLIDER_RAYS = {GENERAL: QUEEN_RAYS, MORTAR: ORTHOGONAL_RAYS, CANNON: DIAGONAL_RAYS}


def _is_flying_machine(piece: int) -> bool:
    return piece != 0 and kind_of(piece) == FLYING_MACHINE


def man_moves(turn: Turn, cell: int, kind: int, out: list[Action]) -> None:
    """Append the moves of the King, General, Mortar, Cannon or Horse on `cell`."""
    rules, board, side, _ = turn
    capture = rules.capture[side]
    if kind == KING:
        for to in KING_STEPS[cell]:
            target = board[to]
            if not target or capture[(to << 5) | target]:
                out.append((cell, to))
    elif kind == HORSE:
        if rules.horse_leaps_fm:
            for to in HORSE_LEAPS[cell]:
                target = board[to]
                if not target or capture[(to << 5) | target]:
                    out.append((cell, to))
        else:
            # A6 = false: the leap flies over the two squares touching both its ends; a
            # Flying Machine on either stops it.
            for to, over1, over2 in HORSE_LEAPS_OVER[cell]:
                if _is_flying_machine(board[over1]) or _is_flying_machine(board[over2]):
                    continue
                target = board[to]
                if not target or capture[(to << 5) | target]:
                    out.append((cell, to))
    else:
        passable = rules.passable
        for ray in SLIDER_RAYS[kind][cell]:
            for to in ray:
                target = board[to]
                if not target:
                    out.append((cell, to))
                    continue
                if capture[(to << 5) | target]:
                    out.append((cell, to))
                if not passable[target]:
                    break
