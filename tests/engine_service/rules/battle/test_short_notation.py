"""Short move notation: a destination with an optional kind letter and `-` or `x`; the
letter and the separator narrow the legal moves to one, or the refusal says why none fit.
"""

from __future__ import annotations

import pytest

from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.helpers import RULES

START = RULES.new_game(RULES.resolve_options({}))


def _read(text: str) -> str:
    return RULES.format_action(START, RULES.parse_action(START, text))


def _refusal(text: str) -> tuple[Reason, str]:
    with pytest.raises(RuleError) as error:
        RULES.parse_action(START, text)
    return error.value.reason, error.value.message


def test_the_kind_letter_picks_the_piece() -> None:
    # the Light Infantry on 101 and the Cavalry on 125 both reach 106
    assert _refusal("106")[0] is Reason.NOTATION_AMBIGUOUS
    assert _read("C106") == _read("c 106") == "125-106"
    assert _read("L106") == _read("L-106") == "101-106"


def test_a_capture_sign_needs_a_piece_to_take() -> None:
    for text in ("x86", "X86"):
        assert _refusal(text) == (
            Reason.ILLEGAL_ACTION,
            "no legal move of a piece of the attacker goes to 86",
        )


def test_no_piece_of_that_kind_reaches_the_square() -> None:
    assert _refusal("C86") == (
        Reason.ILLEGAL_ACTION,
        "no legal move of a Cavalry of the attacker goes to 86",
    )
    assert _refusal("A86") == (
        Reason.ILLEGAL_ACTION,
        "no legal move of an Artillery of the attacker goes to 86",
    )
