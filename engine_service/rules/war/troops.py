"""Troops (section 7): step, double step, diagonal capture, en passant and jump chains.

Forward is +1 rank for South and -1 rank for North. A Troop on its final rank has no move
at all (7.8), whatever the options: it "stays there for good".
"""

from __future__ import annotations

from collections.abc import Iterator

from engine_service.rules.war.actions import Action
from engine_service.rules.war.board import (
    FINAL_RANK,
    FORWARD,
    FORWARD2,
    FORWARD_DIAGONAL_STEPS,
    WIDTH,
    relative_rank,
)
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import SIDE_SPAN, TROOP, TROOP_MOVED
from engine_service.rules.war.state import Turn

REAR_RANK = 2  # relative rank of the Rear Troops at the start (3.2)


def troop_moves(turn: Turn, cell: int, out: list[Action]) -> None:
    """Append the Troop's steps, double step and diagonal displacement captures (7.1-7.3, 7.7).

    Jumps are `jump_chains`' business.
    """
    rules, board, side, ep = turn
    piece = board[cell]
    ahead = FORWARD[side][cell]
    if ahead < 0:
        return  # 7.8: on its final rank, immobile
    target = board[ahead]
    passable = rules.passable
    if not target or passable[target]:
        if not target:
            out.append((cell, ahead))  # 7.1
        # 7.2 / A17: the double step of a Troop that has never moved; both squares must be
        # free (a Flying Machine blocks it unless flying_machine_blocks_sliders is false).
        if piece - SIDE_SPAN * side - 1 == TROOP and (
            not rules.rear_only_double_step or relative_rank(side, cell) == REAR_RANK
        ):
            two = FORWARD2[side][cell]
            if two >= 0 and not board[two]:
                out.append((cell, two))
    capture = rules.capture[side]
    for diagonal in FORWARD_DIAGONAL_STEPS[side][cell]:
        target = board[diagonal]
        if target:
            if capture[(diagonal << 5) | target]:
                out.append((cell, diagonal))  # 7.3: any capturable enemy man
        elif diagonal == ep:
            out.append((cell, diagonal))  # A18: en passant, displacement only


def troop_cells(board: bytes, side: int) -> Iterator[int]:
    """The cells of the side's Troops (not moved, then moved), found by byte search."""
    unmoved = 1 + SIDE_SPAN * side + TROOP
    for piece in (unmoved, unmoved + TROOP_MOVED - TROOP):
        cell = board.find(piece)
        while cell >= 0:
            yield cell
            cell = board.find(piece, cell + 1)


def has_jump(rules: WarRules, board: bytes, side: int, cell: int) -> bool:
    """Whether the Troop on `cell` can make a first jump (7.4)."""
    if FORWARD[side][cell] < 0:
        return False
    jumpable = rules.jumpable[side]
    no_landing = rules.no_landing[side]
    for over, land in rules.jumps[side][cell]:
        if jumpable[(over << 5) | board[over]] and not board[land] and land != no_landing:
            return True
    return False


def jump_chains(rules: WarRules, board: bytes, side: int, cell: int) -> list[Action]:
    """Every complete jump chain of the Troop on `cell`, one action per distinct path (7.4-7.9).

    A chain must go on while a jump remains from the square reached (7.5); each jumped man
    is removed at once, so none is jumped twice; reaching the final rank ends the chain
    (7.8, 7.9), also with backward_jumps. There is no longest-chain rule here: that option
    is applied by the caller over all the side's chains.
    """
    if FORWARD[side][cell] < 0:
        return []
    jumpable = rules.jumpable[side]
    jumps = rules.jumps[side]
    no_landing = rules.no_landing[side]
    final_rank = FINAL_RANK[side]
    work = bytearray(board)
    work[cell] = 0
    chains: list[Action] = []

    def extend(path: tuple[int, ...], at: int) -> None:
        """Add every complete chain that continues `path` from `at`."""
        went = False
        for over, land in jumps[at]:
            victim = work[over]
            if jumpable[(over << 5) | victim] and not work[land] and land != no_landing:
                went = True
                longer = path + (land,)  # noqa: RUF005 (compiled, `(*a, b)` is a list extended, then copied)
                if land // WIDTH == final_rank:
                    chains.append(longer)  # 7.9: nothing goes on from the final rank
                    continue
                work[over] = 0
                extend(longer, land)
                work[over] = victim
        if not went and len(path) > 1:
            chains.append(path)

    extend((cell,), cell)
    return chains
