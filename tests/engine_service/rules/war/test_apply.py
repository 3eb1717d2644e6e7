"""apply: events in full sentences, and refusals naming the rule broken."""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.war.notation import read_text

from .helpers import RULES, act, options, position


def _events(state: Any, text: str) -> list[Any]:
    return RULES.apply(state, RULES.parse_action(state, text))[1]


def test_a_move_is_one_moved_event() -> None:
    events = _events(RULES.new_game(options()), "e3-e5")
    assert [e.kind for e in events] == [EventKind.MOVED]
    assert events[0].text == "South Troop moves from e3 to e5."
    assert events[0].cells == ("e3", "e5") and events[0].piece == "troop"


def test_a_jump_chain_captures_each_troop() -> None:
    events = _events(position("Ta3 tb4 td6 Kj1 ka10"), "a3:c5:e7")
    assert [e.kind for e in events] == [EventKind.MOVED, EventKind.CAPTURED, EventKind.CAPTURED]
    assert events[0].text == "South Troop jumps from a3 to c5 to e7."
    assert [e.cells for e in events[1:]] == [("b4",), ("d6",)]


def test_a_displacement_capture_names_the_victim() -> None:
    events = _events(position("Tc5 td6 Md1 Kj1 ka10"), "Md1xd6")
    assert events[1].kind is EventKind.CAPTURED
    assert events[1].text == "South Mortar captures the North Troop on d6."


def test_en_passant_is_said_to_be_in_passing() -> None:
    opts = options(en_passant="displacement_only")
    state = act(position("Te7 td9 Kj1 ka10", side="N", opts=opts), "d9-d7")
    events = _events(state, "e7xd8")
    assert events[1].cells == ("d7",) and "in passing" in events[1].text


def test_a_placement_event() -> None:
    events = _events(position("Ka1 ka10", reserves="FF:-"), "F@e5")
    assert [e.kind for e in events] == [EventKind.PLACED]
    assert "e5" in events[0].text and "1 left" in events[0].text


def test_entering_the_citadel_and_winning() -> None:
    state = position("Tf9 ma10 Ka1")
    entered = _events(state, "f9-f10")
    kinds = [e.kind for e in entered]
    assert EventKind.CITADEL_ENTERED in kinds
    assert "stays there for good" in entered[0].text
    after = act(state, "f9-f10")
    won = _events(after, "Ma10-a9")
    assert won[-1].kind is EventKind.GAME_OVER and won[-1].side == "south"


@pytest.mark.parametrize(
    ("men", "action", "reason"),
    [
        ("Ka1 ka10", (100, 44), "NO_FLYING_MACHINE_LEFT"),
        ("Ka1 ka10", (101,), "PASSING_NOT_ALLOWED"),
        ("Ka1 ka10", (102, 5, 0, 1), "ILLEGAL_ACTION"),
        ("Ka1 ka10", (0,), "ILLEGAL_ACTION"),
        ("Ka1 ka10", (0, 200), "ILLEGAL_ACTION"),
        ("Ka1 ka10", "Ka1-a2", "ILLEGAL_ACTION"),
        ("Ka1 ka10", (0, 1, 2), "ILLEGAL_MOVE_GEOMETRY"),
        ("Ka1 ka10 Ta2", (0, 10), "DESTINATION_OCCUPIED"),
        ("Ka1 ka10", (90, 80), "NO_PIECE"),
    ],
)
def test_refusals_carry_the_reason(men: str, action: Any, reason: str) -> None:
    with pytest.raises(RuleError) as error:
        RULES.apply(position(men), action)
    assert error.value.reason == reason, error.value.message


def test_placing_when_it_is_not_the_whole_turn_and_vice_versa() -> None:
    state = position("Ka1 ka10", reserves="F:-")
    with pytest.raises(RuleError) as error:
        RULES.apply(state, (100, 44, 0, 1))
    assert "whole turn" in error.value.message
    opts = options(placement_uses_turn="false")
    state = position("Ka1 ka10", reserves="F:-", opts=opts)
    with pytest.raises(RuleError) as error:
        RULES.apply(state, read_text("F@e5").action())
    assert "goes on with a move" in error.value.message


def test_apply_equals_play() -> None:
    state = RULES.new_game(options())
    for action in RULES.legal_actions(state):
        assert RULES.apply(state, action)[0] == RULES.play(state, action)
