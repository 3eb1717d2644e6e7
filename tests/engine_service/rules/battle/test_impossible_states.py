"""`check_state` on states that could not arise in play (section 3, ruling 19), and how
such a state's pieces are listed for drawing.
"""

from __future__ import annotations

from engine_service.rules.battle import BattleState
from tests.engine_service.rules.battle.helpers import RULES, position, sq

LIVE = "attacker to move; attacker: I127 W134; defender: T19 L45"


def test_3_unknown_piece_codes_are_named_by_square() -> None:
    base = position(LIVE)
    board = bytearray(base.board)
    board[sq(1)] = 7  # an attacker's code of no kind
    board[sq(2)] = 15  # a defender's code of no kind
    state = BattleState(bytes(board), 0, base.options)
    assert RULES.check_state(state) == [
        "square 1 holds an unknown piece code 7",
        "square 2 holds an unknown piece code 15",
    ]
    unknown = [(p.cell, p.kind, p.side) for p in RULES.pieces(state) if p.cell in ("1", "2")]
    assert unknown == [("1", "unknown", "attacker"), ("2", "unknown", "defender")]


def test_ruling_19_the_history_ends_with_the_current_position() -> None:
    base = position(LIVE)
    empty = BattleState(base.board, 0, base.options, 0, ())
    assert RULES.check_state(empty) == [
        "the position history is empty (it ends with the current position)"
    ]
