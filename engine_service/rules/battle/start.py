"""The start of a game (section 3): Plate 1's position, or a set-up text's.

The initial position is read from the board file; the side to move first is the
`first_player` option (ruling 2) unless a set-up text names it. A set-up text is any
position (`setup.py`), checked as a state from a client is (`check_state`).
"""

from __future__ import annotations

from typing import Final

from engine_service.rules.battle.board import SQUARES, setup_data
from engine_service.rules.battle.consistency import check_state
from engine_service.rules.battle.options import rules_of
from engine_service.rules.battle.pieces import KIND_OF_ID, SIDE_IDS, code
from engine_service.rules.battle.setup import parse_setup
from engine_service.rules.battle.state import BattleState
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options


def initial_board() -> bytes:
    """The Plate 1 set-up (section 3) as a board, from the board file."""
    board = bytearray(SQUARES)
    for side_id, pieces in setup_data().items():
        side = SIDE_IDS.index(side_id)
        for cell, kind_id in pieces:
            board[cell] = code(side, KIND_OF_ID[kind_id])
    return bytes(board)


INITIAL_BOARD: Final = initial_board()


def new_game(options: Options, setup: str | None = None, *, checked: bool = True) -> BattleState:
    """Plate 1's position with `first_player` to move, or the position of a set-up text
    (checked by `check_state` unless `checked` is False)."""
    first = rules_of(options).first_player
    if setup is None:
        return BattleState(INITIAL_BOARD, first, options)
    state = parse_setup(setup, options, first)
    problems = check_state(state) if checked else []
    if problems:
        raise RuleError(Reason.INVALID_SETUP, "; ".join(problems), field="setup")
    return state
