"""The notation's refusals (docs/notation.md, spec 6): a text that names no action is
refused as NOTATION_INVALID, quoting the text and saying what is wrong with it."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import Attack, EndPhase
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, STORM_D5, STORMING_D5
from tests.engine_service.rules.napoleonic.test_deployment import dawn

MOVING = "board 8x8; red: d4=I c4=C e1=G; black: d5=I a8=G"


def refusal(state: NapoleonicState, text: str, side: str | None = None) -> str:
    with pytest.raises(RuleError) as error:
        RULESET.parse_action(state, text, side)
    assert error.value.reason == Reason.NOTATION_INVALID
    return error.value.message


def advancing() -> NapoleonicState:
    options = RULESET.resolve_options({"auto_skip_defence": "false"})
    state = RULESET.new_game(options, STORMING_D5 + "hills: e4")
    for attacker, target in STORM_D5:
        state, _events = RULESET.apply(state, Attack("red", attacker, target))
    for side in ("red", "black"):
        state, _events = RULESET.apply(state, EndPhase(side))
    assert state.phase is Phase.ADVANCE
    return state


def test_a_bare_move_names_a_unit_and_a_square() -> None:
    state = RULESET.new_game(RULESET.resolve_options({}), MOVING)
    assert refusal(state, "X9-d4") == "'X9-d4': 'X9' is neither a square nor a unit id on the board"
    assert refusal(state, "d4-d") == "'d4-d': 'd' is not a square name"
    assert refusal(state, "R_Q>d5") == (
        "'R_Q>d5': 'R_Q' is neither a square nor a unit id on the board"
    )


def test_a_bare_advance_names_a_unit_and_a_square() -> None:
    state = advancing()
    assert refusal(state, "d4-q") == "'d4-q': 'q' is not a square name"
    assert refusal(state, "Q_Z-d5") == (
        "'Q_Z-d5': 'Q_Z' is neither a square nor a unit id on the board"
    )


def test_a_word_that_is_no_action_is_refused() -> None:
    state = RULESET.new_game(RULESET.resolve_options({}), MOVING)
    assert refusal(state, "dance") == "'dance': not an action"


def test_10_1_a_salt_is_32_bytes_in_64_hex_digits() -> None:
    assert refusal(dawn(), "commit a2=A salt abc", "red") == (
        "'commit'… (20 characters, not quoted: they hold a secret): "
        "a salt is 32 bytes written as 64 hex digits"
    )
