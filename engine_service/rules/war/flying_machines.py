"""Flying Machines (section 8): one placement each, on any empty square but the Citadels.

A side's two machines are interchangeable, so a placement is one action per square
(section 11). Once placed a machine never moves; whether it blocks sliders, stops a
Horse's leap or can be captured are the options of A5-A7, read by the move generator.

With `placement_uses_turn = false` (A8; the specification leaves the details open) the
natural reading is taken: placing a machine does not end the turn, the player then moves
as usual, in the same action (`F@e5 d2-d4`). A placement after which the player has no
move, or (with passing_allowed) chooses to move nothing, is the whole turn on its own.
"""

from __future__ import annotations

from engine_service.rules.war.actions import PLACEMENTS, Action
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import FLYING_MACHINE, code


def may_place(rules: WarRules, reserves: tuple[int, int], side: int, move: int) -> bool:
    """Whether `side` has a machine in reserve and may place it this turn (8.1, 8.6, A9).

    placement_first_turn = false forbids it on the side's own first turn, that is while the
    turn number is 1 (each side's first turn has number 1, whoever moves first).
    """
    return reserves[side] > 0 and (rules.placement_first_turn or move > 1)


def placements(rules: WarRules, board: bytes) -> list[Action]:
    """One placement per empty square that is not a Citadel (8.2, A10)."""
    return [PLACEMENTS[cell] for cell in rules.placement_cells if not board[cell]]


def with_machine(board: bytes, side: int, cell: int) -> bytes:
    """The board after `side` places a Flying Machine on `cell`."""
    return board[:cell] + bytes((code(side, FLYING_MACHINE),)) + board[cell + 1 :]
