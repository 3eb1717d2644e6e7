"""The Game of War for the search: evaluation of material and the Citadels, move ordering.

Section 9 decides the game: a man that enters the enemy Citadel and is still there after
the opponent's reply wins. The evaluation therefore weighs, besides material:

- the Citadels: how many men of each side could move onto the enemy Citadel next move
  ("attackers") and how many enemy men could then take it there ("defenders"); a side to
  move with an attacker and no defender against it is about to win;
- Troop advancement (section 7: Troops are the only men that change with advancing, and a
  Troop on its final rank is immobile, so worth little unless it stands on the Citadel);
- the pieces' approach to the enemy Citadel, the King's place on his own;
- Flying Machines still in reserve (section 8: a placement can block a line to a Citadel).

The search is extended by one ply when the side to move has an enemy man on its own
Citadel (it must take it at once or lose), and a capture-only quiescence search settles
exchanges at the leaves. Everything works on the position's bytes (`WarState.board`), not
on the slower public `pieces` view.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

from engine_service.ai.search import SearchStrategy
from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset, Outcome
from engine_service.rules.board import ALL_DIRECTIONS, ORTHOGONAL
from engine_service.rules.war.actions import PLACE, Action
from engine_service.rules.war.board import (
    BOARD,
    CELLS,
    DIAGONAL_RAYS,
    FINAL_RANK,
    HORSE_LEAPS,
    JUMPED,
    ORTHOGONAL_RAYS,
    QUEEN_RAYS,
    WIDTH,
    rank_of,
    relative_rank,
)
from engine_service.rules.war.legal import is_finished, legal_actions
from engine_service.rules.war.pieces import (
    CANNON,
    CODE_COUNT,
    FLYING_MACHINE,
    GENERAL,
    HORSE,
    KIND_IDS,
    KIND_OF_CODE,
    KING,
    MORTAR,
    SIDE_IDS,
    SIDE_OF_CODE,
    SIDE_SPAN,
    SOUTH,
    TROOP,
    TROOP_MOVED,
    code,
)
from engine_service.rules.war.state import WarState

# Material by piece kind; VALUES by kind offset (pieces.py).
MATERIAL: Final = {
    "king": 3.0,
    "general": 9.0,
    "mortar": 5.0,
    "cannon": 3.25,
    "horse": 3.0,
    "troop": 1.0,
    "flying_machine": 0.0,
}
VALUES: Final = tuple(MATERIAL[KIND_IDS[kind]] for kind in range(SIDE_SPAN))
RESERVE_VALUE: Final = 0.6  # a Flying Machine not yet placed
FINAL_RANK_TROOP: Final = 0.3  # an immobile, immune Troop (7.8) off the Citadel
# How much each kind gains per step closer to the enemy Citadel (Chebyshev distance).
APPROACH: Final = (0.0, 0.0, 0.0, 0.08, 0.04, 0.04, 0.06, 0.0)

CITADEL_WON: Final = 15.0  # the mover attacks the enemy Citadel and nothing defends it
CITADEL_THREAT: Final = 4.0  # the same, with the opponent to move (he must parry)
CITADEL_INTRUDER: Final = 1.0  # a man on the enemy Citadel that the owner can still take
ATTACKER_WEIGHT: Final = 0.5
DEFENDER_WEIGHT: Final = 0.35

# Rays per cell and direction, nearest square first (the board's own geometry).
RAYS: Final = {d: tuple(BOARD.ray(c, d) for c in range(CELLS)) for d in ALL_DIRECTIONS}
BEHIND_DIAGONALS: Final = (("SW", "SE"), ("NW", "NE"))  # where a Troop attacking a cell stands
BEHIND_STRAIGHT: Final = ("S", "N")


def _chebyshev(a: int, b: int) -> int:
    return max(abs(a % WIDTH - b % WIDTH), abs(a // WIDTH - b // WIDTH))


@memo(16)
def piece_square(citadels: tuple[int, int]) -> tuple[tuple[float, ...], ...]:
    """Per cell code, per cell: material plus position, positive for South, negative North."""
    table: list[tuple[float, ...]] = [(0.0,) * CELLS]
    for side in (0, 1):
        sign = 1.0 if side == 0 else -1.0
        own, enemy = citadels[side], citadels[1 - side]
        for kind in range(SIDE_SPAN):
            row = []
            for cell in range(CELLS):
                value = VALUES[kind]
                distance = _chebyshev(cell, enemy)
                if kind in (TROOP, TROOP_MOVED):
                    rank = relative_rank(side, cell)
                    if rank_of(cell) == FINAL_RANK[side] and cell != enemy:
                        value = FINAL_RANK_TROOP
                    else:
                        value += 0.06 * (rank - 3) + 0.1 * max(0, 4 - distance)
                elif kind == KING:
                    value += 0.3 if cell == own else -0.05 * _chebyshev(cell, own)
                elif kind != FLYING_MACHINE:
                    value += APPROACH[kind] * (9 - distance)
                    file, rank_index = cell % WIDTH, cell // WIDTH
                    centre = max(abs(2 * file - 9), abs(2 * rank_index - 9))  # 1 .. 9
                    value += 0.02 * (9 - centre)
                row.append(sign * value)
            table.append(tuple(row))
    return tuple(table)


def _lines(target: int, side: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The rays from `target` with what a first man of `side` there may do (see `reach`)."""
    lines = []
    for d in ALL_DIRECTIONS:
        ray = RAYS[d][target]
        if not ray:
            continue
        if d in BEHIND_DIAGONALS[side]:
            troop = 2  # a Troop there takes diagonally forward onto the target (7.3)
        elif d == BEHIND_STRAIGHT[side]:
            troop = 1  # a Troop there steps forward onto the target if it is empty (7.1)
        else:
            troop = 0
        lines.append((ray, (1 if d in ORTHOGONAL else 2) | troop << 2))
    return tuple(lines)


LINES: Final = tuple(tuple(_lines(cell, side) for cell in range(CELLS)) for side in (0, 1))


def reach(board: bytes, target: int, side: int) -> int:
    """How many men of `side` could move onto `target` next move (sections 6, 7; no jumps).

    Flying Machines and men block lines; the compulsory capture is ignored.
    """
    count = 0
    king, general = code(side, KING), code(side, GENERAL)
    sliders = (0, code(side, MORTAR), code(side, CANNON))
    troop, moved = code(side, TROOP), code(side, TROOP_MOVED)
    empty = not board[target]
    for ray, how in LINES[side][target]:
        slider = sliders[how & 3]
        first = True
        for cell in ray:
            piece = board[cell]
            if piece:
                if piece in (general, slider):
                    count += 1
                elif first:
                    if piece == king:
                        count += 1
                    elif piece in (troop, moved):
                        kind = how >> 2
                        count += kind == 2 or (kind == 1 and empty)
                break
            first = False
    horse = code(side, HORSE)
    for cell in HORSE_LEAPS[target]:
        if board[cell] == horse:
            count += 1
    return count


# Mobility (section 6): per cell code, the rays a man slides along (or leaps to, for the
# Horse: one-square "rays") and the value of each square it reaches; None for the others.
SLIDES: Final = {GENERAL: (QUEEN_RAYS, 0.015), MORTAR: (ORTHOGONAL_RAYS, 0.03)}
SLIDES[CANNON] = (DIAGONAL_RAYS, 0.03)
LEAP_RAYS: Final = tuple(tuple((n,) for n in HORSE_LEAPS[c]) for c in range(CELLS))
SLIDES[HORSE] = (LEAP_RAYS, 0.04)
MOBILE: Final = tuple(
    None
    if KIND_OF_CODE[piece] not in SLIDES
    else (
        SLIDES[KIND_OF_CODE[piece]][0],
        SLIDES[KIND_OF_CODE[piece]][1] * (1 if SIDE_OF_CODE[piece] == SOUTH else -1),
    )
    for piece in range(CODE_COUNT)
)


def mobility(
    board: bytes, cell: int, piece: int, rays: tuple[tuple[tuple[tuple[int, ...], ...], ...], float]
) -> float:
    """Squares a General, Mortar, Cannon or Horse could go to (empty or enemy), weighted;
    positive for South's men, negative for North's."""
    lines, weight = rays
    own = SIDE_OF_CODE[piece]
    count = 0
    for line in lines[cell]:
        for square in line:
            other = board[square]
            if not other:
                count += 1
                continue
            if SIDE_OF_CODE[other] != own and KIND_OF_CODE[other] != FLYING_MACHINE:
                count += 1  # a capture (a placed Flying Machine is never one, 8.3)
            break
    return count * weight


def citadel_terms(state: WarState) -> float:
    """Attack and defence of both Citadels, positive when good for South."""
    board = state.board
    citadels = state.rules.citadels
    mover = state.side
    total = 0.0
    for side in (0, 1):
        enemy_citadel = citadels[1 - side]
        occupant = board[enemy_citadel]
        if SIDE_OF_CODE[occupant] == side:
            # Section 9: the owner, to move, must take the intruder at once or lose.
            retakers = reach(board, enemy_citadel, 1 - side)
            term = 2 * CITADEL_WON if not retakers else CITADEL_INTRUDER
            total += term if side == 0 else -term
            continue
        attackers = reach(board, enemy_citadel, side)
        if not attackers:
            continue
        defenders = reach(board, enemy_citadel, 1 - side)
        if side == mover:
            if not defenders:
                term = CITADEL_WON
            else:
                term = ATTACKER_WEIGHT * attackers - DEFENDER_WEIGHT * defenders
                term += 1.0 if attackers > defenders else 0.0
        else:
            term = CITADEL_THREAT if not defenders else 0.3 * attackers - 0.2 * defenders
        total += term if side == 0 else -term
    return total


def static_value(state: WarState, side: int) -> float:
    """The evaluation of an unfinished position for `side` (0 South, 1 North)."""
    table = piece_square(state.rules.citadels)
    board = state.board
    total = 0.0
    for cell, piece in enumerate(board):
        if piece:
            total += table[piece][cell]
            rays = MOBILE[piece]
            if rays is not None:
                total += mobility(board, cell, piece, rays)
    south, north = state.reserves
    total += RESERVE_VALUE * (south - north)
    total += citadel_terms(state)
    return total if side == 0 else -total


@memo(16)
def placement_cells(citadels: tuple[int, int]) -> frozenset[int]:
    """Cells where a Flying Machine may matter to a short search: next to a Citadel."""
    return frozenset(
        cell
        for cell in range(CELLS)
        if cell not in citadels and min(_chebyshev(cell, c) for c in citadels) <= 2
    )


def _victims(board: bytes, action: Action) -> float:
    """The material an action removes (0 for a quiet move or a placement)."""
    if action[0] >= PLACE:
        return 0.0
    origin = action[0]
    if len(action) > 2 or (
        KIND_OF_CODE[board[origin]] <= TROOP_MOVED and JUMPED[origin * 100 + action[1]] >= 0
    ):
        return float(len(action) - 1)  # a jump chain: one Troop per landing
    target = board[action[1]]
    return VALUES[KIND_OF_CODE[target]] if target else 0.0


class WarPolicy:
    """The Game of War for `engine_service.ai.search`."""

    unit = MATERIAL["troop"]  # a level's noise is in Troops

    def __init__(self, ruleset: AnyRuleset) -> None:
        self.ruleset = ruleset

    def key(self, state: WarState) -> Hashable:
        """The Zobrist key, with the en-passant square it does not cover."""
        return (state.history[-1], state.ep)

    def mover(self, state: WarState) -> str:
        """The side to move."""
        return SIDE_IDS[state.side]

    def ended(self, state: WarState) -> Outcome | None:
        """Citadel held, repetition, no progress (no legal move is found by `outcome`)."""
        if is_finished(state):
            return self.ruleset.outcome(state)
        return None

    def actions(self, state: WarState) -> list[Action]:
        """The legal actions, with Flying-Machine placements only near the Citadels.

        Placements are most of the actions while machines are in reserve (64 of 102 at the
        start), but only those that can block a way into a Citadel or out of it matter to
        a short search; the others are left out unless nothing else is legal.
        """
        actions = legal_actions(state)
        if state.reserves[state.side] == 0:
            return actions
        useful = placement_cells(state.rules.citadels)
        kept = [a for a in actions if a[0] != PLACE or a[-1] in useful]
        return kept or actions

    def outcome(self, state: WarState) -> Outcome | None:
        """The exact ending (no legal move included)."""
        return self.ruleset.outcome(state)

    def evaluate(self, state: WarState, side: str) -> float:
        """Material, Citadels, advancement, reserves."""
        return static_value(state, SIDE_IDS.index(side))

    def order(self, state: WarState, actions: list[Action]) -> list[tuple[float, Action]]:
        """Entering or clearing a Citadel first, then captures (most valuable first),
        quiet moves, and placements last."""
        board = state.board
        mover = state.side
        own, enemy = state.rules.citadels[mover], state.rules.citadels[1 - mover]
        intruder = board[own] and SIDE_OF_CODE[board[own]] != mover
        scored = []
        for action in actions:
            if action[0] >= PLACE:
                scored.append((-1.0, action))
                continue
            gain = _victims(board, action)
            score = 10.0 * gain - VALUES[KIND_OF_CODE[board[action[0]]]] * 0.1 if gain else 0.0
            landing = action[-1]
            if landing == enemy:
                score += 1000.0
            if intruder and landing == own:
                score += 2000.0
            scored.append((score, action))
        return scored

    def captures(self, state: WarState, actions: list[Action]) -> list[Action] | None:
        """The actions that take a man, for the quiescence search."""
        board = state.board
        return [
            a
            for a in actions
            if a[0] < PLACE
            and (
                board[a[1]]
                or len(a) > 2
                or (JUMPED[a[0] * 100 + a[1]] >= 0 and KIND_OF_CODE[board[a[0]]] <= TROOP_MOVED)
            )
        ]

    def extend(self, state: WarState) -> bool:
        """An enemy man on the mover's own Citadel must be taken at once (section 9)."""
        own = state.rules.citadels[state.side]
        piece = state.board[own]
        return bool(piece) and SIDE_OF_CODE[piece] != state.side


def strategy(ruleset: AnyRuleset) -> SearchStrategy:
    """The Game of War's AI (its registry entry names it): the search with `WarPolicy`."""
    return SearchStrategy(WarPolicy(ruleset))
