"""The board description, the state checks and the position keys."""

from __future__ import annotations

import subprocess
import sys

from engine_service.rules.base import CellShape
from engine_service.rules.battle import BattleState
from engine_service.rules.battle.board import SQUARES
from engine_service.rules.battle.pieces import ATTACKER, CAVALRY, CITADEL, code
from tests.engine_service.rules.battle.helpers import RULES, position


def test_description_draws_the_diamond_board() -> None:
    described = RULES.describe(RULES.resolve_options({}))
    assert described.game == "battle" and len(described.cells) == SQUARES
    cells = {c.name: c for c in described.cells}
    assert all(c.shape is CellShape.DIAMOND and c.label == c.name for c in described.cells)
    assert (cells["1"].x, cells["1"].y) == (3.0, 0.0) and (cells["139"].x, cells["139"].y) == (
        13.0,
        18.0,
    )
    assert "ford" in cells["47"].tags and "bridge" in cells["70"].tags
    assert "bank:south" in cells["46"].tags and "bank:north" in cells["54"].tags
    assert "citadel" in cells["19"].tags
    kinds = [f.kind for f in described.features]
    assert kinds.count("river") == 1 and kinds.count("river_cell") == 4
    closed = {f.label for f in described.features if f.kind == "closed_side"}
    assert closed == {
        "ford 47: E closed",
        "ford 47: W closed",
        "ford 83: E closed",
        "ford 83: W closed",
        "bridge 70: NE closed",
        "bridge 70: SW closed",
    }
    assert {k.id for k in described.piece_kinds} == {
        "light_infantry",
        "infantry_of_the_line",
        "cavalry",
        "artillery",
        "wagon",
        "citadel",
    }
    assert [s.id for s in described.sides] == ["attacker", "defender"]
    assert "36-51" in described.notation


def test_check_state_reports_every_problem() -> None:
    start = RULES.new_game(RULES.resolve_options({"no_capture_limit": "10"}))
    board = bytearray(start.board)
    board[44] = code(ATTACKER, CAVALRY)  # square 45 (a defending LI) now a 3rd attacking Cavalry
    board[60] = code(ATTACKER, CITADEL)  # a Citadel for the attacker on 61
    broken = BattleState(bytes(board), start.side, start.options, 25, start.history)
    problems = RULES.check_state(broken)
    assert any("Cavalry" in p and "an army has 2" in p for p in problems)
    assert any("Citadel belongs to the defender" in p for p in problems)
    assert any("last key" in p for p in problems)
    assert any("no_capture_limit" in p for p in problems)
    assert RULES.check_state(start) == []


def test_repeated_history_is_reported() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    key = start.history[-1]
    looped = BattleState(start.board, start.side, start.options, 8, (key, 1, key, 2, key, 3, key))
    assert any("repetition_draw" in p for p in RULES.check_state(looped))


def test_position_keys_are_the_same_in_every_process() -> None:
    here = RULES.new_game(RULES.resolve_options({})).history[-1]
    code_text = (
        "from engine_service.rules.battle import BattleRuleset as R;"
        "r=R(); print(r.new_game(r.resolve_options({})).history[-1])"
    )
    other = subprocess.run(
        [sys.executable, "-c", code_text], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert int(other) == here
    assert 0 < here < 2**64


def test_keys_follow_moves_and_side_to_move() -> None:
    a = position("attacker to move; attacker: W129 I127; defender: T19 L45")
    d = position("defender to move; attacker: W129 I127; defender: T19 L45")
    assert a.history[-1] != d.history[-1]
    moved = RULES.play(a, RULES.parse_action(a, "127-119"))
    again = position("defender to move; attacker: W129 I119; defender: T19 L45")
    assert moved.history[-1] == again.history[-1] and moved.history[0] == a.history[-1]
