"""The Game of Battle for the search: material, the Citadel and the Wagon, move ordering.

Section 9: the attacker wins by taking the Citadel, the defender by taking the Wagon, and a
side left with Artillery only loses. The evaluation weighs, besides material:

- the march on the enemy objective: each figure's distance (in single steps on the
  board, the river crossed only at the fords and the bridge) to the enemy Citadel or
  Wagon, Cavalry counting most (it goes three squares in any direction);
- threats on the objectives: a figure of the side to move that can take the enemy
  objective next move is all but a win; one of the other side must be parried;
- the Wagon's cover: it cannot be taken while it stands in range of an attacking battery
  (section 8, ruling 7), so the attacker wants it there;
- exposure to artillery (section 6): an exposed figure or Wagon ties its side to
  relieving it (and is lost outright with `forced_reply = lose_figure`);
- the last figures: losing them all loses the game (9.2), so the last few are worth more;
- the draw rules: as the moves without a capture approach `no_capture_limit`, the
  positional part of the value fades towards the draw's 0, so a side that is ahead takes
  material rather than drift into the draw.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from typing import Final

from engine_service.ai.search import SearchStrategy
from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset, Outcome
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.artillery import commanders, exposed
from engine_service.rules.battle.board import DIRECTIONS, SQUARES, STEP
from engine_service.rules.battle.endings import decided
from engine_service.rules.battle.legal import capturers, legal_actions
from engine_service.rules.battle.pieces import (
    ATTACKER,
    CAVALRY,
    CITADEL,
    CITADEL_BYTE,
    CODE_COUNT,
    DEFENDER,
    INFANTRY_OF_THE_LINE,
    KIND_IDS,
    KIND_OF_CODE,
    KINDS,
    LIGHT_INFANTRY,
    SIDE_IDS,
    SIDE_OF_CODE,
    WAGON,
    WAGON_BYTE,
    code,
    kind_of,
    side_of,
)
from engine_service.rules.battle.state import BattleState

# Material by piece kind; VALUES by kind number (pieces.py), 0 for an empty square.
MATERIAL: Final = {
    "light_infantry": 2.0,
    "infantry_of_the_line": 3.0,
    "cavalry": 4.5,
    "artillery": 3.5,
    "citadel": 0.0,
    "wagon": 0.0,
}
VALUES: Final = (0.0, *(MATERIAL[KIND_IDS[kind]] for kind in KINDS))
# Value per step closer to the enemy objective, by kind.
MARCH: Final = (0.0, 0.12, 0.10, 0.2, 0.03, 0.0, 0.0)
MARCH_RANGE: Final = 16  # steps beyond which distance no longer matters
OBJECTIVE_WON: Final = 15.0  # the mover can take the enemy objective now
OBJECTIVE_THREAT: Final = 4.0  # the other side can: the mover must parry it
WAGON_COVERED: Final = 1.5
EXPOSED: Final = 0.25  # a figure (or the Wagon) in enemy range, unprotected (6)
FIGURE_KINDS: Final = (LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY)


def _distances() -> tuple[tuple[int, ...], ...]:
    """Single steps (any of the eight directions) between every pair of squares."""
    neighbours = [[n for d in DIRECTIONS if (n := STEP[d][cell]) >= 0] for cell in range(SQUARES)]
    table = []
    for start in range(SQUARES):
        far = [SQUARES] * SQUARES
        far[start] = 0
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            for n in neighbours[cell]:
                if far[n] > far[cell] + 1:
                    far[n] = far[cell] + 1
                    queue.append(n)
        table.append(tuple(far))
    return tuple(table)


DISTANCE: Final = _distances()


@memo(SQUARES)
def march_table(target: int) -> tuple[tuple[float, ...], ...]:
    """Per piece code, per square: the march bonus of that piece towards `target`."""
    far = DISTANCE[target]
    rows = {
        kind: tuple(MARCH[kind] * max(0, MARCH_RANGE - far[cell]) for cell in range(SQUARES))
        for kind in range(len(MARCH))
    }
    zero = rows[0]
    return tuple(rows.get(KIND_OF_CODE[piece], zero) for piece in range(CODE_COUNT))


def figures(board: bytes, side: int) -> int:
    """How many Light Infantry, Infantry of the Line and Cavalry `side` has."""
    return sum(board.count(bytes([code(side, kind)])) for kind in FIGURE_KINDS)


def last_figures(count: int) -> float:
    """Extra worth of a side's last figures (9.2: without figures a side loses)."""
    return 10.0 * (1.0 - 0.5**count)


def takers(board: bytes, target: int, side: int) -> int:
    """How many pieces of `side` could take the piece on `target` by their move patterns."""
    return sum(1 for cell in capturers(board, target) if side_of(board[cell]) == side)


def static_value(state: BattleState, side: int) -> float:
    """The evaluation of an unfinished position for `side` (0 attacker, 1 defender)."""
    board = state.board
    citadel = board.find(CITADEL_BYTE)
    wagon = board.find(WAGON_BYTE)
    material = 0.0
    march = 0.0
    towards_citadel = march_table(citadel)
    towards_wagon = march_table(wagon)
    for cell, piece in enumerate(board):
        if not piece:
            continue
        worth = VALUES[KIND_OF_CODE[piece]]
        if SIDE_OF_CODE[piece] == ATTACKER:
            material += worth
            march += towards_citadel[piece][cell]
        else:
            material -= worth
            march -= towards_wagon[piece][cell]
    material += last_figures(figures(board, ATTACKER)) - last_figures(figures(board, DEFENDER))
    positional = march
    covered = wagon_covered(state, wagon)
    if covered:
        positional += WAGON_COVERED
    rules = state.rules
    for owner, sign in ((ATTACKER, -1.0), (DEFENDER, 1.0)):
        for cell in exposed(board, owner, rules):
            # Section 6, A.3: an exposed figure must be relieved (or is lost, ruling 3).
            worth = VALUES[kind_of(board[cell])] if rules.lose_figure else 0.0
            positional += sign * (EXPOSED + 0.8 * worth)
    mover = state.side
    for attacker, target in ((ATTACKER, citadel), (DEFENDER, wagon)):
        count = takers(board, target, attacker)
        if not count:
            continue
        if attacker == DEFENDER and covered:
            continue  # the covered Wagon cannot be taken (ruling 7)
        term = OBJECTIVE_WON if attacker == mover else OBJECTIVE_THREAT
        positional += term if attacker == ATTACKER else -term
    limit = 2 * state.rules.no_capture_limit
    if limit and state.quiet > limit // 2:
        positional *= max(0.0, (limit - state.quiet) / (limit - limit // 2))
    total = material + positional
    return total if side == ATTACKER else -total


def wagon_covered(state: BattleState, wagon: int) -> bool:
    """Whether the Wagon stands in range of an attacking battery (it cannot be taken)."""
    return bool(commanders(state.board, wagon, ATTACKER, state.rules))


class BattlePolicy:
    """The Game of Battle for `engine_service.ai.search`."""

    # A level's noise is in Infantry of the Line, as War's is in Troops: counted in War's
    # units, Battle's noise was a third as strong and levels 3 to 5 differed too little.
    unit = MATERIAL["infantry_of_the_line"]

    def __init__(self, ruleset: AnyRuleset) -> None:
        self.ruleset = ruleset

    def key(self, state: BattleState) -> Hashable:
        """The Zobrist key of the board and side to move."""
        return state.history[-1]

    def mover(self, state: BattleState) -> str:
        """The side to move."""
        return SIDE_IDS[state.side]

    def ended(self, state: BattleState) -> Outcome | None:
        """Citadel or Wagon taken, Artillery only, repetition, no capture (9, 19)."""
        return decided(state)

    def actions(self, state: BattleState) -> list[Move]:
        """The legal moves (kept on the state by the rules, so computed once)."""
        return legal_actions(state)

    def outcome(self, state: BattleState) -> Outcome | None:
        """The exact ending (no legal move included)."""
        return self.ruleset.outcome(state)

    def evaluate(self, state: BattleState, side: str) -> float:
        """Material, the march on the objectives, threats, the Wagon's cover."""
        return static_value(state, SIDE_IDS.index(side))

    def order(self, state: BattleState, actions: list[Move]) -> list[tuple[float, Move]]:
        """Taking the Citadel or the Wagon first, then captures, most valuable first."""
        board = state.board
        scored = []
        for move in actions:
            target = board[move.destination]
            if not target:
                scored.append((0.0, move))
                continue
            kind = KIND_OF_CODE[target]
            if kind in (CITADEL, WAGON):
                scored.append((10_000.0, move))
            else:
                mover_kind = KIND_OF_CODE[board[move.origin]]
                scored.append((10.0 * VALUES[kind] - 0.1 * VALUES[mover_kind], move))
        return scored

    def captures(self, state: BattleState, actions: list[Move]) -> list[Move] | None:
        """The captures, for the quiescence search."""
        board = state.board
        return [move for move in actions if board[move.destination]]

    def extend(self, state: BattleState) -> bool:
        """No extension: the threat terms of the evaluation see the objectives."""
        return False


def strategy(ruleset: AnyRuleset) -> SearchStrategy:
    """The Game of Battle's AI (its registry entry names it): the search with `BattlePolicy`."""
    return SearchStrategy(BattlePolicy(ruleset))
