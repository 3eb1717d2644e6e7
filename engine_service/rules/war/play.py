"""Making an action known to be legal: the hot path of perft and search; and perft, which
makes every action it counts.

No checks and no events here (`apply` adds both). The new position's Zobrist key is
updated incrementally; the repetition history grows by one key per reversible ply and
starts afresh after a capture, a Troop move, a placement or a huff, because no position
before one of those can occur again.
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.war.actions import HUFF, PASS, PLACE, Action
from engine_service.rules.war.board import BEHIND, FORWARD, FORWARD2, JUMPED, WIDTH
from engine_service.rules.war.compulsion import allowed_victims, offenders_of, victim_of
from engine_service.rules.war.legal import legal_actions
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import FLYING_MACHINE, SIDE_SPAN, TROOP_MOVED
from engine_service.rules.war.state import (
    HUFF_KEYS,
    PIECE_KEYS,
    RESERVE_KEYS,
    SIDE_KEY,
    WarState,
)

_new = tuple.__new__
# The key change when a side's reserve drops from n to n - 1.
_RESERVE_DROP: Final = tuple(
    tuple(keys[n] ^ keys[n - 1] if n else 0 for n in range(len(keys))) for keys in RESERVE_KEYS
)


def move_man(
    rules: WarRules, work: bytearray, side: int, move: Action, ep: int
) -> tuple[int, bool, int, int]:
    """Make a move (origin, landing, ...) on `work` in place.

    Returns (key change, progress, new en-passant square, last landing). Progress means a
    capture or a Troop move (A25).
    """
    origin = move[0]
    to = move[1]
    piece = work[origin]
    work[origin] = 0
    keys = PIECE_KEYS
    delta = keys[(origin << 5) | piece]
    kind = piece - 1 - SIDE_SPAN * side
    if kind <= TROOP_MOVED:
        moved = piece + TROOP_MOVED - kind
        new_ep = -1
        if JUMPED[origin * 100 + to] >= 0:
            at = origin
            for land in move[1:]:  # 7.5: each jumped man is removed at once
                over = JUMPED[at * 100 + land]
                delta ^= keys[(over << 5) | work[over]]
                work[over] = 0
                at = land
            to = at
        else:
            target = work[to]
            if target:
                delta ^= keys[(to << 5) | target]
            elif (to - origin) % WIDTH:
                behind = BEHIND[side][to]  # A18: en passant takes the Troop behind
                delta ^= keys[(behind << 5) | work[behind]]
                work[behind] = 0
            elif rules.en_passant and to == FORWARD2[side][origin]:
                new_ep = FORWARD[side][origin]
        work[to] = moved
        return delta ^ keys[(to << 5) | moved], True, new_ep, to
    target = work[to]
    work[to] = piece
    delta ^= keys[(to << 5) | piece]
    if target:
        return delta ^ keys[(to << 5) | target], True, -1, to
    return delta, False, -1, to


def _successor(
    state: WarState,
    board: bytes,
    *,
    reserves: tuple[int, int],
    ep: int,
    huffable: tuple[int, ...],
    key: int,
    progress: bool,
) -> WarState:
    """The position after `state`'s side has acted, with the other side to move: `key` is
    its Zobrist key; progress (A25) clears the no-progress count and the repetition history."""
    rules = state.rules
    side = state.side
    if progress:
        quiet = 0
        history: tuple[int, ...] = (key,)
    else:
        quiet = state.quiet + 1
        history = state.history + (key,) if rules.repetition else (key,)  # noqa: RUF005 (compiled, `(*a, b)` is a list extended, then copied)
    return _new(
        WarState,
        (
            board,
            1 - side,
            reserves,
            ep,
            huffable,
            quiet,
            state.move + (side != rules.first_player),
            history,
            rules,
        ),
    )


def play(state: WarState, action: Action) -> WarState:
    """The position after a legal action (nothing is checked)."""
    rules = state.rules
    head = action[0]
    side = state.side
    if head < PLACE and rules.plain:
        work = bytearray(state.board)
        delta, progress, ep, _ = move_man(rules, work, side, action, state.ep)
        key = state.history[-1] ^ SIDE_KEY ^ delta
        return _successor(
            state,
            bytes(work),
            reserves=state.reserves,
            ep=ep,
            huffable=(),
            key=key,
            progress=progress,
        )
    if head == PLACE and rules.plain:
        return _place(state, action[1])
    return _play_general(state, action)


def _place(state: WarState, cell: int) -> WarState:
    """A placement that is the whole turn (8.2)."""
    side = state.side
    board = state.board
    machine = 1 + SIDE_SPAN * side + FLYING_MACHINE
    south, north = state.reserves
    left = south if side == 0 else north
    key = (
        state.history[-1] ^ SIDE_KEY ^ PIECE_KEYS[(cell << 5) | machine] ^ _RESERVE_DROP[side][left]
    )
    board = board[:cell] + bytes((machine,)) + board[cell + 1 :]
    reserves = (south - 1, north) if side == 0 else (south, north - 1)
    return _successor(state, board, reserves=reserves, ep=-1, huffable=(), key=key, progress=True)


def _play_general(state: WarState, action: Action) -> WarState:
    """Any action: huff, placement with or without a move, pass, and huff bookkeeping."""
    rules = state.rules
    side = state.side
    start = state.board
    key = state.history[-1] ^ SIDE_KEY
    for cell in state.huffable:
        key ^= HUFF_KEYS[cell]
    progress = False
    ep = state.ep
    reserves = state.reserves
    rest = action
    if rest[0] == HUFF:
        cell = rest[1]
        key ^= PIECE_KEYS[(cell << 5) | start[cell]]
        start = start[:cell] + b"\x00" + start[cell + 1 :]
        progress = True
        if ep >= 0 and BEHIND[side][ep] == cell:
            ep = -1
        rest = rest[2:]
    work = bytearray(start)
    if rest[0] == PLACE:
        cell = rest[1]
        machine = 1 + SIDE_SPAN * side + FLYING_MACHINE
        work[cell] = machine
        key ^= PIECE_KEYS[(cell << 5) | machine] ^ _RESERVE_DROP[side][reserves[side]]
        reserves = (reserves[0] - 1, reserves[1]) if side == 0 else (reserves[0], reserves[1] - 1)
        progress = True
        rest = rest[2:]
    new_ep = -1
    victim = -1
    mover = landing = -1
    if rest and rest[0] != PASS:
        victim = victim_of(work, side, ep, rest)
        mover = rest[0]
        delta, moved_progress, new_ep, landing = move_man(rules, work, side, rest, ep)
        key ^= delta
        progress = progress or moved_progress
    huffable: tuple[int, ...] = ()
    if rules.huff:
        offenders, exposed_men = offenders_of(rules, start, side)
        if offenders and victim not in allowed_victims(rules, start, side, exposed_men):
            huffable = tuple(sorted(landing if c == mover else c for c in offenders))
            for cell in huffable:
                key ^= HUFF_KEYS[cell]
    return _successor(
        state,
        bytes(work),
        reserves=reserves,
        ep=new_ep,
        huffable=huffable,
        key=key,
        progress=progress,
    )


def perft(state: WarState, depth: int) -> int:
    """Action sequences of exactly `depth` actions; every leaf is made (BENCHMARKS.md)."""
    if depth == 0:
        return 1
    actions = legal_actions(state)
    if depth == 1:
        for action in actions:
            play(state, action)
        return len(actions)
    return sum(perft(play(state, action), depth - 1) for action in actions)
