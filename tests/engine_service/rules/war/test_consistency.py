"""check_state: every problem of a position that could not arise in play, all at once."""

from __future__ import annotations

from typing import Any

from engine_service.rules.war import WarState
from engine_service.rules.war.board import cell_index
from engine_service.rules.war.state import position_key

from .helpers import RULES, act, options, position


def _with(state: WarState, **fields: Any) -> WarState:
    """A copy of a state with some fields replaced and its key brought up to date."""
    changed = state._replace(**fields)
    key = position_key(changed.board, changed.side, changed.reserves, changed.huffable)
    return changed._replace(history=(key,))


def _put(state: WarState, square: str, piece: int) -> WarState:
    cell = cell_index(square)
    assert cell is not None
    board = bytearray(state.board)
    board[cell] = piece
    return _with(state, board=bytes(board))


def test_positions_of_play_are_consistent() -> None:
    state = RULES.new_game(options())
    assert RULES.check_state(state) == []
    assert RULES.check_state(act(state, "e3-e5")) == []


def test_an_unmoved_troop_off_its_starting_ranks() -> None:
    state = _put(position("Ka1 ka10"), "c5", 1)  # code 1: South Troop, not moved
    problems = RULES.check_state(state)
    assert any("c5" in p and "not moved" in p for p in problems)


def test_both_kings_missing_can_arise_in_play_and_is_accepted() -> None:
    # The King is not royal (section 5): North takes South's King, South takes North's.
    # Such a position arises in legal play, so check_state must not refuse it.
    state = position("Ke4 ke6 Ge1 gd9")
    for text in ("Ke4-e5", "Ke6xe5", "Ge1xe5"):
        state = act(state, text)
    assert not any(v.kind == "king" for v in RULES.pieces(state))
    assert RULES.check_state(state) == []
    assert RULES.outcome(state) is None


def test_two_kings_for_a_side() -> None:
    state = _put(position("Ka1 ka10"), "b1", 3)
    problems = RULES.check_state(state)
    assert problems == ["South has 2 kings; an army has 1"]


def test_three_flying_machines_for_a_side() -> None:
    state = position("Ka1 ka10 Fe5", reserves="F:-")
    assert RULES.check_state(state) == []
    crowded = _with(state, reserves=(2, 0))
    problems = RULES.check_state(crowded)
    assert any("3 Flying Machines" in p for p in problems)


def test_a_huffable_square_without_a_troop() -> None:
    opts = options(compulsion="huff")
    state = position("Tc5 Ka1 ka10", side="N", opts=opts, extra="huff=c5")
    assert RULES.check_state(state) == []
    empty = _with(state, huffable=(43,))  # d5 is empty
    problems = RULES.check_state(empty)
    assert any("d5" in p and "huffable" in p for p in problems)
    legality = position("Tc5 Ka1 ka10", side="N")
    problems = RULES.check_state(_with(legality, huffable=(42,)))
    assert any("compulsion = huff" in p for p in problems)


def test_every_problem_is_reported_at_once() -> None:
    state = position("Ka1 ka10 Fe5", reserves="F:-")
    state = _put(state, "b1", 3)  # a second South King
    state = _put(state, "c6", 1)  # an unmoved Troop on c6
    state = _put(state, "f1", 8)  # a South Flying Machine on the Citadel: 3 machines too
    problems = RULES.check_state(state)
    assert len(problems) >= 4
    text = " | ".join(problems)
    for words in ("2 kings", "not moved", "3 Flying Machines", "on a Citadel"):
        assert words in text


def test_bookkeeping_problems() -> None:
    state = position("Ka1 ka10")
    assert any("key" in p for p in RULES.check_state(state._replace(history=(1,))))
    assert any("plies" in p for p in RULES.check_state(_with(state)._replace(history=(1, 2))))
    assert any("en_passant" in p for p in RULES.check_state(state._replace(ep=44)))
    assert RULES.check_state(state._replace(move=0)) == ["the turn number counts from 1"]
    assert any("negative" in p for p in RULES.check_state(state._replace(quiet=-1)))


def test_own_men_on_their_own_citadel_when_the_option_forbids_it() -> None:
    opts = options(own_men_on_own_citadel="false")
    allowed = position("Kf1 Ga1 ka10", opts=opts)
    assert RULES.check_state(allowed) == []
    problems = RULES.check_state(_put(allowed, "f1", 4))
    assert any("own Citadel" in p for p in problems)
