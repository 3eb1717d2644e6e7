"""Making a move: capture by replacement (5), figures lost under `forced_reply=lose_figure`
(ruling 3), the position key and the counters of the draw rules (ruling 19); and perft,
which makes every move it counts.

This is the hot path of perft and search: it checks nothing and reports nothing.
"""

from __future__ import annotations

import sys
from typing import Final

from engine_service.hotpath import compiled
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.legal import legal_actions, lost_figures
from engine_service.rules.battle.state import DEFENDER_TO_MOVE, PIECE_KEYS, BattleState

# Compiled, a state is a native object, which only its constructor makes (`object.__new__`
# refuses it); pure, it is made fastest field by field (calling the constructor would cost a
# third of `play`).
NATIVE_STATE: Final = compiled(sys.modules["engine_service.rules.battle.state"])
_new = object.__new__


def play(state: BattleState, action: Move) -> BattleState:
    """The position after `action`, known to be legal (`BattleRuleset.play` itself)."""
    origin, destination = action
    board = state.board
    piece = board[origin]
    target = board[destination]
    after = bytearray(board)
    after[destination] = piece
    after[origin] = 0
    keys = PIECE_KEYS[piece]
    key = state.history[-1] ^ keys[origin] ^ keys[destination] ^ DEFENDER_TO_MOVE
    rules = state.rules
    removed = bool(target)
    if removed:
        key ^= PIECE_KEYS[target][destination]
    if rules.lose_figure:
        for square in lost_figures(board, state.side, action, rules):
            key ^= PIECE_KEYS[after[square]][square]
            after[square] = 0
            removed = True
    side = 1 - state.side
    if removed:
        quiet = 0
        history: tuple[int, ...] = (key,)
        steps: tuple[int, ...] | None = ()
    else:
        quiet = state.quiet + 1
        history = state.history + (key,)  # noqa: RUF005 (compiled, `(*a, b)` is a list extended, then copied)
        steps = state.steps
        if steps is not None:
            steps = steps + (origin << 12 | destination,)  # noqa: RUF005 (compiled, `(*a, b)` is a list extended, then copied)
    if NATIVE_STATE:
        return BattleState(
            bytes(after), side, state.options, quiet, history, steps=steps, rules=rules
        )
    new: BattleState = _new(BattleState)
    new.board = bytes(after)
    new.side = side
    new.quiet = quiet
    new.history = history
    new.steps = steps
    new.options = state.options
    new.rules = rules
    new._analysis = None
    new._quick = None
    return new


def perft(state: BattleState, depth: int) -> int:
    """Move sequences of exactly `depth` moves; every leaf is made (BENCHMARKS.md)."""
    if depth == 0:
        return 1
    moves = legal_actions(state)
    if depth == 1:
        for move in moves:
            play(state, move)
        return len(moves)
    return sum(perft(play(state, move), depth - 1) for move in moves)
