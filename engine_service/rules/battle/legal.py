"""The legal-move procedure (section 10): artillery tests per move, then the turn's duties.

Per geometric move, in the position after it (6; rulings 6-8, 25):

- taking the Citadel is always allowed (A.1 does not apply; A.2 only when
  `citadel_capture_ignores_uncovering` is false);
- the Wagon may not be taken while its square is in range of an attacking battery
  (`wagon_capture_cover`);
- A.1: a figure or the Wagon may not end exposed (captures too, `capture_onto_commanded_square`;
  the Wagon's test is `wagon_occupancy`);
- A.2: no other figure of the mover may become exposed (`uncovering_rule`).

Then the duties of the turn (A.3, 7, 8; rulings 3, 9, 10, 24): with figures exposed at the
start of the turn (E0), or the Citadel commanded, only the moves that discharge a duty are
legal, when there are any (`duty_lapses_when_impossible`).

A move *relieves* when, counting the moved piece as the same figure on its new square,
the set of exposed figures after it is a proper subset of E0: it frees at least one and
exposes none. Under `forced_reply=lose_figure` exposed figures bind nobody (they are lost
instead, see `play`), except the Wagon, which must still be relieved.

Speed: only the squares in enemy range can hold an exposed piece. A move that neither
starts nor ends in enemy range, takes no Artillery and moves no Artillery while an own
figure stands in range changes no exposure at all, so it is legal and relieves nothing
without building the position after it (the "quiet" path). Every other move is tested on
a copy of the board.

One move (`move_is_legal`) and "is there a legal move" (`can_move`, for the outcome) are
judged without the analysis when no duty binds the turn (no figure to relieve, no Citadel
commanded; most turns): the legal moves are then exactly the geometric moves passing the
per-move tests, so the move's own tests decide, and the search stops at the first legal
move. A turn with a duty takes the analysis, which stays the reference
(tests/engine_service/rules/battle/test_check.py compares the two).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from engine_service.rules.battle.actions import Move, move_of
from engine_service.rules.battle.artillery import (
    BLOCKS,
    EXPOSABLE,
    RANGE_RAYS,
    batteries,
    commanded,
    exposed_in,
    next_to,
    protected_squares,
    wagon_literal_forbidden,
)
from engine_service.rules.battle.board import DIRECTIONS, SQUARES, ray
from engine_service.rules.battle.endings import decided
from engine_service.rules.battle.movement import (
    CAN_CAPTURE,
    MOVABLE_CODES,
    MOVE_RAYS,
    REACH,
    geometric_moves,
    piece_moves,
)
from engine_service.rules.battle.options import Rules
from engine_service.rules.battle.pieces import (
    ARTILLERY,
    ATTACKER,
    CITADEL,
    CITADEL_BYTE,
    DEFENDER,
    EXPOSABLE_KINDS,
    FIGURE_KINDS,
    WAGON,
    WAGON_BYTE,
    side_of,
)
from engine_service.rules.battle.state import BattleState

# RAYS_3[cell]: up to three squares in each of the eight directions.
RAYS_3: Final = tuple(
    tuple(line for d in DIRECTIONS if (line := ray(cell, d, 3))) for cell in range(SQUARES)
)


class Verdict(Enum):
    """The result of the per-move artillery tests."""

    LEGAL = "legal"
    WAGON_UNDER_COVER = "wagon under cover"  # 8, ruling 7
    EXPOSED = "exposed"  # A.1
    UNCOVERS = "uncovers"  # A.2


class Duty(Enum):
    """Which duty restricted the turn's moves (for messages)."""

    NONE = "none"
    WAGON = "wagon"  # ruling 9, capture_battery_first
    CITADEL = "citadel"  # 7, ruling 10
    RELIEVE = "relieve"  # A.3 (and the Citadel under discharge_any_one)


class Context:
    """What every move of one side in one position is tested against (computed once)."""

    __slots__ = (
        "adjacent",
        "blocks",
        "board",
        "enemy_guns",
        "enemy_range",
        "exposed",
        "own_guns",
        "own_in_range",
        "protected",
        "rules",
        "side",
    )

    def __init__(self, board: bytes | bytearray, side: int, rules: Rules) -> None:
        self.board = board
        self.side = side
        self.rules = rules
        self.blocks = BLOCKS[rules.citadel_and_wagon_block]
        self.adjacent = next_to(rules)
        self.enemy_guns = batteries(board, 1 - side)
        self.own_guns = batteries(board, side)
        self.enemy_range = (
            commanded(board, self.enemy_guns, self.blocks) if self.enemy_guns else set()
        )
        exposable = EXPOSABLE[side]
        self.own_in_range = any(exposable[board[s]] for s in self.enemy_range)
        self.protected = protected_squares(self.own_guns, self.enemy_guns, self.adjacent)
        self.exposed = (
            exposed_in(board, side, self.enemy_range, self.protected)
            if self.own_in_range
            else set()
        )

    def is_quiet(self, move: Move) -> bool:
        """Whether `move` provably changes no exposure of the mover (see the module doc)."""
        origin, destination = move
        board = self.board
        kind = board[origin] & 7
        return (
            origin not in self.enemy_range
            and destination not in self.enemy_range
            and board[destination] & 7 != ARTILLERY
            and (kind != ARTILLERY or not self.own_in_range)
            and not (kind == WAGON and self.rules.wagon_literal)
        )

    def after(self, move: Move) -> bytearray:
        """A copy of the board with `move` made."""
        board = bytearray(self.board)
        board[move.destination] = board[move.origin]
        board[move.origin] = 0
        return board

    def evaluate(self, move: Move) -> tuple[Verdict, set[int]]:
        """The per-move artillery tests, and the mover's exposed squares after the move."""
        origin, destination = move
        board = self.board
        rules = self.rules
        piece = board[origin]
        kind = piece & 7
        target_kind = board[destination] & 7
        after = self.after(move)
        enemy_guns, enemy_range = self.enemy_guns, self.enemy_range
        if origin in enemy_range or destination in enemy_range or target_kind == ARTILLERY:
            # The move opens, blocks or silences an enemy line: walk the lines again.
            enemy_guns = [gun for gun in enemy_guns if gun != destination]
            enemy_range = commanded(after, enemy_guns, self.blocks) if enemy_guns else set()
        protected = self.protected
        if ARTILLERY in (kind, target_kind):
            own_guns = [destination if gun == origin else gun for gun in self.own_guns]
            protected = protected_squares(own_guns, enemy_guns, self.adjacent)
        now = exposed_in(after, self.side, enemy_range, protected)
        if target_kind == CITADEL and board[destination]:
            # 7 and ruling 25: the Citadel falls even if covered.
            if rules.citadel_capture_ignores_uncovering or self._no_one_uncovered(move, now):
                return Verdict.LEGAL, now
            return Verdict.UNCOVERS, now
        if (
            target_kind == WAGON
            and board[destination]
            and rules.wagon_cover_any_battery
            and destination in enemy_range  # ruling 7: under cover at any distance
        ):
            return Verdict.WAGON_UNDER_COVER, now
        if kind in EXPOSABLE_KINDS:
            if kind == WAGON and rules.wagon_literal:
                ends_exposed = wagon_literal_forbidden(after, destination, self.side, rules)
            else:
                ends_exposed = destination in now
            if ends_exposed and not (board[destination] and rules.capture_onto_commanded):
                return Verdict.EXPOSED, now
        if (rules.uncover_all_moves or kind == ARTILLERY) and not self._no_one_uncovered(move, now):
            return Verdict.UNCOVERS, now
        return Verdict.LEGAL, now

    def _no_one_uncovered(self, move: Move, now: set[int]) -> bool:
        """A.2: no figure but the moved one is exposed now that was not before."""
        before = self.exposed
        return all(s in before for s in now if s not in move)

    def mapped_exposed(self, move: Move) -> set[int]:
        """E0 with the moved piece followed to its destination."""
        origin, destination = move
        if origin in self.exposed:
            return (self.exposed - {origin}) | {destination}
        return self.exposed


def is_citadel_capture(board: bytes | bytearray, move: Move) -> bool:
    """Whether `move` takes the Citadel."""
    target = board[move.destination]
    return bool(target) and target & 7 == CITADEL


@dataclass(slots=True)
class Analysis:
    """The legal moves of the side to move and why the others are not (for `apply`)."""

    legal: list[Move]
    verdicts: dict[Move, Verdict]  # the geometric moves refused by the per-move tests
    exposed: set[int]  # E0: the mover's exposed figures and Wagon at the start of the turn
    citadel_commanders: list[int]  # attacking batteries commanding the Citadel (defender only)
    duty: Duty = Duty.NONE
    lapsed: bool = False  # a duty bound the turn but no move could discharge it
    _legal_set: frozenset[Move] | None = field(default=None, repr=False, compare=False)

    @property
    def legal_set(self) -> frozenset[Move]:
        """The legal moves as a set (made on first use: `play` never needs it)."""
        if self._legal_set is None:
            self._legal_set = frozenset(self.legal)
        return self._legal_set


def legal_actions(state: BattleState) -> list[Move]:
    """The legal moves (section 10); none once the game is over."""
    if decided(state) is not None:
        return []
    return list(analysis_of(state).legal)


def analysis_of(state: BattleState) -> Analysis:
    """The legal moves of a state and why the others are not, computed once and kept on it."""
    found = state._analysis
    if found is None:
        quick = state._quick  # its Context, when one move or the outcome was judged first
        ctx = quick.ctx if quick is not None else None
        found = state._analysis = analyse(state.board, state.side, state.rules, ctx)
    return found


class Quick:
    """What judging one move of a state needs, kept on the state (`quick_of`): the turn's
    `Context`, whether no duty binds the turn, and (once asked) whether any move is legal."""

    __slots__ = ("ctx", "free", "movable")

    def __init__(self, state: BattleState) -> None:
        board, side, rules = state.board, state.side, state.rules
        self.ctx = ctx = Context(board, side, rules)
        self.free = _duty_free(board, ctx, rules)
        self.movable: bool | None = None


def quick_of(state: BattleState) -> Quick:
    """The state's `Quick`, made on first use."""
    found = state._quick
    if found is None:
        found = state._quick = Quick(state)
    return found


def move_is_legal(state: BattleState, move: Move) -> bool:
    """`move in analysis_of(state).legal_set`, by the move's own tests when no duty binds
    the turn (then the legal moves are exactly the moves passing the per-move tests)."""
    found = state._analysis
    if found is None:
        quick = quick_of(state)
        if quick.free:
            return _one_move(quick.ctx, move)
        found = analysis_of(state)
    return move in found.legal_set


def can_move(state: BattleState) -> bool:
    """`bool(analysis_of(state).legal)`, stopping at the first legal move when no duty binds
    the turn."""
    found = state._analysis
    if found is None:
        quick = quick_of(state)
        if quick.free:
            if quick.movable is None:
                quick.movable = _any_move(quick.ctx)
            return quick.movable
        found = analysis_of(state)
    return bool(found.legal)


def _duty_free(board: bytes, ctx: Context, rules: Rules) -> bool:
    """Whether no duty binds the turn: no figure (or Wagon) to relieve, no Citadel commanded."""
    if _figure_duty(board, ctx, rules):
        return False
    citadel = board.find(CITADEL_BYTE) if ctx.side == DEFENDER else -1
    return not (
        citadel >= 0
        and citadel in ctx.enemy_range
        and any(commands(board, gun, citadel, ctx.blocks) for gun in ctx.enemy_guns)
    )


def _passes(ctx: Context, move: Move) -> bool:
    """Whether a geometric move passes the per-move artillery tests (as `analyse` runs them)."""
    return not ctx.enemy_guns or ctx.is_quiet(move) or ctx.evaluate(move)[0] is Verdict.LEGAL


def _one_move(ctx: Context, move: Move) -> bool:
    """Whether `move` is a geometric move of the side to move that passes the tests."""
    board = ctx.board
    origin = move.origin
    if type(origin) is not int or not 0 <= origin < SQUARES:
        return False
    piece = board[origin]
    if not piece or side_of(piece) != ctx.side:
        return False
    return move in piece_moves(board, origin) and _passes(ctx, move)


def _any_move(ctx: Context) -> bool:
    """Whether a geometric move of the side to move passes the tests (the first one found)."""
    board = ctx.board
    find = board.find
    for piece_byte in MOVABLE_CODES[ctx.side]:
        cell = find(piece_byte)
        while cell >= 0:
            if any(_passes(ctx, move) for move in piece_moves(board, cell)):
                return True
            cell = find(piece_byte, cell + 1)
    return False


def analyse(  # noqa: C901 (section 10 checked in the book's order, one branch per clause)
    board: bytes, side: int, rules: Rules, ctx: Context | None = None
) -> Analysis:
    """Section 10: the legal moves of `side` in the position `board` (`ctx`: its Context,
    when already made)."""
    if ctx is None:
        ctx = Context(board, side, rules)
    if not ctx.enemy_guns:
        # No enemy Artillery: nothing can be exposed, every geometric move is legal.
        return Analysis(geometric_moves(board, side), {}, set(), [])

    # The quiet moves need no copy of the board; the others are tested on one.
    verdicts: dict[Move, Verdict] = {}
    static: list[Move] = []
    after_exposed: dict[Move, set[int]] = {}
    append = static.append
    evaluate = ctx.evaluate
    enemy_range = ctx.enemy_range
    guns_free = not ctx.own_in_range
    wagon_literal = rules.wagon_literal
    find = board.find
    for piece_byte in MOVABLE_CODES[side]:
        piece = piece_byte[0]
        kind = piece & 7
        rays_of = MOVE_RAYS[piece]
        capture = CAN_CAPTURE[piece]
        # Ctx.is_quiet, unrolled: the piece may move quietly at all...
        may_be_quiet = (kind != ARTILLERY or guns_free) and not (kind == WAGON and wagon_literal)
        cell = find(piece_byte)
        while cell >= 0:
            quiet_origin = may_be_quiet and cell not in enemy_range  # ...from this square...
            for line in rays_of[cell]:
                for dest, move in line:
                    target = board[dest]
                    if target and not capture[target]:
                        break
                    # ...to this square.
                    if quiet_origin and dest not in enemy_range and target & 7 != ARTILLERY:
                        append(move)
                    else:
                        verdict, now = evaluate(move)
                        if verdict is Verdict.LEGAL:
                            append(move)
                            after_exposed[move] = now
                        else:
                            verdicts[move] = verdict
                    if target:
                        break
            cell = find(piece_byte, cell + 1)

    citadel = board.find(CITADEL_BYTE) if side == DEFENDER else -1
    citadel_commanders: list[int] = []
    if citadel >= 0 and citadel in ctx.enemy_range:
        citadel_commanders = [
            gun for gun in ctx.enemy_guns if commands(board, gun, citadel, ctx.blocks)
        ]
    figure_duty = _figure_duty(board, ctx, rules)
    if not figure_duty and not citadel_commanders:
        return Analysis(static, verdicts, ctx.exposed, [])

    def exposed_after(move: Move) -> set[int]:
        return after_exposed.get(move, ctx.exposed)

    def adds_nothing(move: Move) -> bool:
        return exposed_after(move) <= ctx.mapped_exposed(move)

    def relieves(move: Move) -> bool:
        if not figure_duty or not adds_nothing(move):
            return False
        now = exposed_after(move)
        origin, destination = move
        return any((destination if s == origin else s) not in now for s in figure_duty)

    wins = [move for move in static if is_citadel_capture(board, move)]
    tiers: list[tuple[Duty, list[Move]]] = []
    wagon = board.find(WAGON_BYTE) if side == ATTACKER else -1
    if rules.wagon_capture_first and wagon in figure_duty:
        # Ruling 9, capture_battery_first: take a checking battery, else move the Wagon.
        checking = [gun for gun in ctx.enemy_guns if commands(board, gun, wagon, ctx.blocks)]
        tiers.append(
            (
                Duty.WAGON,
                [
                    m
                    for m in static
                    if m.destination in checking
                    and adds_nothing(m)
                    and wagon not in exposed_after(m)
                ],
            )
        )
        tiers.append(
            (
                Duty.WAGON,
                [
                    m
                    for m in static
                    if m.origin == wagon
                    and adds_nothing(m)
                    and m.destination not in exposed_after(m)
                ],
            )
        )
    if citadel_commanders:
        answers = citadel_answers(
            board, static, citadel, citadel_commanders, ctx=ctx, adds_nothing=adds_nothing
        )
        if rules.citadel_first:
            tiers.append((Duty.CITADEL, answers))
            tiers.append((Duty.RELIEVE, [m for m in static if relieves(m)]))
        else:
            chosen = set(answers)
            either = [m for m in static if m in chosen or relieves(m)]
            tiers.append((Duty.RELIEVE if figure_duty else Duty.CITADEL, either))
    else:
        tiers.append((Duty.RELIEVE, [m for m in static if relieves(m)]))
    for duty, tier in tiers:
        if tier or wins:
            legal = _with(tier, wins)
            return Analysis(legal, verdicts, ctx.exposed, citadel_commanders, duty, False)
    legal = static if rules.duty_lapses else []
    return Analysis(legal, verdicts, ctx.exposed, citadel_commanders, tiers[0][0], True)


def _with(tier: list[Move], wins: list[Move]) -> list[Move]:
    """A duty tier plus the Citadel captures (taking the Citadel discharges every duty)."""
    if not wins:
        return tier
    present = set(tier)
    return tier + [move for move in wins if move not in present]


def _figure_duty(board: bytes, ctx: Context, rules: Rules) -> set[int]:
    """The exposed pieces that bind the turn: all of E0, or only the Wagon (lose_figure)."""
    if not ctx.exposed:
        return set()
    if rules.lose_figure:
        return {s for s in ctx.exposed if board[s] & 7 == WAGON}
    return ctx.exposed


def commands(board: bytes | bytearray, gun: int, square: int, blocks: tuple[bool, ...]) -> bool:
    """Whether the battery on `gun` has `square` in range."""
    for line in RANGE_RAYS[gun]:
        for s in line:
            if s == square:
                return True
            if blocks[board[s]]:
                break
    return False


def citadel_answers(
    board: bytes,
    moves: list[Move],
    citadel: int,
    commanders_before: list[int],
    *,
    ctx: Context,
    adds_nothing: Callable[[Move], bool],
) -> list[Move]:
    """Ruling 10: the moves after which the commanded Citadel is answered.

    A commanding battery is taken; or the Citadel is no longer commanded (a piece is
    interposed, a line blocked); or (take_block_or_threaten) a defending piece now has a
    legal capture of a battery still commanding it. The move must add no exposure.
    """
    answers = []
    # Squares where a move could touch an artillery line or a capture of a commanding
    # battery: the attacking batteries, their oblique lines, and the eight lines around
    # each commanding battery. A defender move that starts and ends outside them (and is
    # no Artillery move) changes neither the command nor the threat.
    attacking = batteries(board, ATTACKER)
    zone = set(attacking)
    for gun in attacking:
        zone.update(s for line in RANGE_RAYS[gun] for s in line)
    for gun in commanders_before:
        zone.update(s for line in RAYS_3[gun] for s in line)
    threat_now: bool | None = None
    for move in moves:
        if not adds_nothing(move):
            continue
        if move.destination in commanders_before:
            answers.append(move)
            continue
        if (
            move.origin not in zone
            and move.destination not in zone
            and board[move.origin] & 7 != ARTILLERY
        ):
            if ctx.rules.citadel_threat_answers:
                if threat_now is None:
                    threat_now = threatens(board, commanders_before, ctx.rules)
                if threat_now:
                    answers.append(move)
            continue
        after = ctx.after(move)
        still = [
            gun for gun in batteries(after, ATTACKER) if commands(after, gun, citadel, ctx.blocks)
        ]
        if not still or (ctx.rules.citadel_threat_answers and threatens(after, still, ctx.rules)):
            answers.append(move)
    return answers


def threatens(board: bytes | bytearray, guns: list[int], rules: Rules) -> bool:
    """Whether a defending piece has a capture of one of `guns` passing the tests of 6."""
    candidates = [(cell, gun) for gun in guns for cell in capturers(board, gun)]
    if not candidates:
        return False
    ctx = Context(bytes(board), DEFENDER, rules)
    for cell, gun in candidates:
        move = move_of(cell, gun)
        if ctx.is_quiet(move) or ctx.evaluate(move)[0] is Verdict.LEGAL:
            return True
    return False


def capturers(board: bytes | bytearray, square: int) -> list[int]:
    """The squares of the pieces that could take the piece on `square` by their patterns.

    Walking outwards from `square`, the first piece on each line is the only one that
    could come along it, and the squares walked over are its (empty) path.
    """
    target = board[square]
    found = []
    for line in RAYS_3[square]:
        for cell in line:
            piece = board[cell]
            if piece:
                if CAN_CAPTURE[piece][target] and square in REACH[piece][cell]:
                    found.append(cell)
                break
    return found


def lost_figures(board: bytes, side: int, move: Move, rules: Rules) -> list[int]:
    """Ruling 3, lose_figure: the mover's figures exposed before and still after `move`."""
    ctx = Context(board, side, rules)
    duty = {s for s in ctx.exposed if board[s] & 7 in FIGURE_KINDS}
    if not duty:
        return []
    now = ctx.exposed if ctx.is_quiet(move) else ctx.evaluate(move)[1]
    followed = {move.destination if s == move.origin else s for s in duty}
    return sorted(followed & now)
