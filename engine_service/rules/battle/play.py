"""Making a move: capture by replacement (5), figures lost under `forced_reply=lose_figure`
(ruling 3), the position key and the counters of the draw rules (ruling 19).

This is the hot path of perft and search: it checks nothing and reports nothing.
"""

from __future__ import annotations

from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.legal import lost_figures
from engine_service.rules.battle.state import DEFENDER_TO_MOVE, PIECE_KEYS, BattleState

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
    new: BattleState = _new(BattleState)
    new.board = bytes(after)
    new.side = 1 - state.side
    if removed:
        new.quiet = 0
        new.history = (key,)
        new.steps = ()
    else:
        new.quiet = state.quiet + 1
        new.history = (*state.history, key)
        steps = state.steps
        new.steps = None if steps is None else (*steps, origin << 12 | destination)
    new.options = state.options
    new.rules = rules
    new._analysis = None
    new._quick = None
    return new
