"""Notation with the book's square numbers, and the messages for illegal input."""

from __future__ import annotations

import pytest

from engine_service.rules.battle.actions import Move
from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.helpers import RULES, mv, position, sq

LIVE = "attacker to move; attacker: C52 A38 I127 W134 L85; defender: I13 A5 T19 L45 A44"


def test_moves_and_captures_are_written_with_square_numbers() -> None:
    board = position(LIVE)
    assert RULES.format_action(board, mv("52-51")) == "52-51"
    assert RULES.format_action(board, mv("52x44")) == "52x44"
    assert RULES.parse_action(board, "52-51") == Move(sq(52), sq(51))
    assert RULES.parse_action(board, "52x44") == Move(sq(52), sq(44))
    assert RULES.parse_action(board, " 52 - 51 ", "attacker") == Move(sq(52), sq(51))
    assert RULES.parse_action(board, "52 51") == Move(sq(52), sq(51))


def test_every_legal_move_reads_back() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    for move in RULES.legal_actions(start):
        assert RULES.parse_action(start, RULES.format_action(start, move)) == move


def test_short_forms_resolve_among_legal_moves() -> None:
    board = position(LIVE)
    assert RULES.parse_action(board, "x44") == Move(sq(52), sq(44))
    assert RULES.parse_action(board, "Cx44") == Move(sq(52), sq(44))
    assert RULES.parse_action(board, "C53") == Move(sq(52), sq(53))


def test_ambiguous_short_form_lists_the_candidates() -> None:
    board = position("attacker to move; attacker: C52 C36 I127 W134; defender: T19 L45")
    with pytest.raises(RuleError) as error:
        RULES.parse_action(board, "44")
    assert error.value.reason is Reason.NOTATION_AMBIGUOUS
    assert "give the origin square" in error.value.message
    assert {"52-44", "36-44"} <= set(error.value.alternatives)


@pytest.mark.parametrize(
    ("text", "reason", "words"),
    [
        ("hello", Reason.NOTATION_INVALID, "cannot read 'hello'"),
        ("52-140", Reason.UNKNOWN_CELL, "1..139"),
        ("60-61", Reason.NO_PIECE, "60"),
        ("13-21", Reason.NO_PIECE, "defender"),
        ("52x51", Reason.NOTATION_INVALID, "52-51"),
        ("127-134", Reason.DESTINATION_OCCUPIED, "own Wagon"),
        ("52-44", Reason.NOTATION_INVALID, "52x44"),
        ("x30", Reason.ILLEGAL_ACTION, "30"),
    ],
)
def test_malformed_input_says_what_is_accepted(text: str, reason: Reason, words: str) -> None:
    with pytest.raises(RuleError) as error:
        RULES.parse_action(position(LIVE), text)
    assert error.value.reason is reason and words in error.value.message
    if reason is Reason.NOTATION_INVALID and text == "hello":
        assert "<from>-<to>" in error.value.accepted  # the forms go beside the message


@pytest.mark.parametrize(
    ("setup", "move", "reason", "message"),
    [
        (
            "defender to move; attacker: A51 I127 W134; defender: T19 L45 C29",
            "29-44",
            Reason.EXPOSED_TO_ARTILLERY,
            "Cavalry may not end on 44: in range of enemy Artillery on 51 and not protected",
        ),
        (
            "defender to move; attacker: A51 I127 W134; defender: T19 L45 A37 C29",
            "29-44",
            Reason.EXPOSED_TO_ARTILLERY,
            "next to its own Artillery on 37 but also next to the enemy's on 51",
        ),
        (
            "attacker to move; attacker: L54 I127 W134; defender: T19 L39",
            "54x39",
            Reason.RIVER_CROSSING,
            "the river runs between 54 and 39",
        ),
        (
            "attacker to move; attacker: C46 I127 W134; defender: T19 L45",
            "46-47",
            Reason.RIVER_CROSSING,
            "the ford 47 is entered and left only through its marked entrances",
        ),
        (
            "attacker to move; attacker: C15 I13 W134; defender: T19 L45",
            "15-12",
            Reason.PATH_BLOCKED,
            "13 intervenes",
        ),
        (
            "attacker to move; attacker: A38 I127 W134; defender: T19 I13 L45",
            "38x13",
            Reason.CAPTURE_NOT_ALLOWED,
            "Artillery takes only enemy Artillery",
        ),
        (
            "attacker to move; attacker: A27 I127 W134; defender: T19 L45",
            "27x19",
            Reason.CAPTURE_NOT_ALLOWED,
            "Artillery cannot take the Citadel",
        ),
        (
            "attacker to move; attacker: I127 W134 A27; defender: T19 L45",
            "134-135",
            Reason.ILLEGAL_MOVE_GEOMETRY,
            "Wagon moves 1-2 squares obliquely",
        ),
        (
            "defender to move; attacker: I127 W134; defender: T19 L45",
            "19-20",
            Reason.ILLEGAL_MOVE_GEOMETRY,
            "the Citadel never moves",
        ),
        (
            "attacker to move; attacker: I127 W134; defender: T19 L45",
            "45-37",
            Reason.NOT_YOUR_TURN,
            "the attacker is to move",
        ),
        (
            "defender to move; attacker: C51 A38 I127 W134; defender: T19 I13 A5 L45",
            "5-12",
            Reason.UNCOVERS_FIGURE,
            "the Infantry of the Line on 13 exposed to enemy Artillery on 38",
        ),
        (
            "defender to move; attacker: A60 A40 I127 W134; defender: I16 I26 A1 T19 L45",
            "45-53",
            Reason.FORCED_REPLY,
            "the Infantry of the Line on 16, the Infantry of the Line on 26 are exposed",
        ),
    ],
)
def test_illegal_moves_name_the_rule(setup: str, move: str, reason: Reason, message: str) -> None:
    board = position(setup)
    with pytest.raises(RuleError) as error:
        RULES.apply(board, mv(move))
    assert error.value.reason is reason, error.value.message
    assert message in error.value.message, error.value.message
