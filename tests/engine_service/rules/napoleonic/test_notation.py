"""Notation: every action printed and read back; bad text refused with a reason."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.state import NapoleonicState
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET, play_text

SETUP = "board 8x8; red: c2=C#R_C d4=A#R_A e5=I#R_I h1=G#R_G; black: d5=I#B_I d6=I#B_I2 a8=G#B_G"


def start(**options: str) -> NapoleonicState:
    given = {"auto_skip_defence": "false", "redoubt_build_turns": "3", **options}
    return RULESET.new_game(RULESET.resolve_options(given), SETUP)


def round_trip(state: NapoleonicState, text: str, action: NapoleonicAction) -> None:
    parsed = RULESET.parse_action(state, text, action.side)
    assert parsed == action
    assert RULESET.format_action(state, parsed) == text


def test_the_brief_examples() -> None:
    state = start()
    round_trip(state, "move c2-d3", Move("red", "R_C", "d3"))
    round_trip(state, "move c2-c4", Move("red", "R_C", "c4"))
    round_trip(state, "attack d4>d5", Attack("red", "R_A", "B_I"))
    round_trip(state, "redoubt d4", BeginRedoubt("red", "d4"))
    round_trip(state, "end", EndPhase("red"))
    defence, _ = play_text(RULESET, state, ["red attack d4>d5", "red end"])
    round_trip(defence, "support d6>d5", Support("black", "B_I2", "B_I"))
    advance, _ = play_text(RULESET, defence, ["black end"])
    round_trip(advance, "advance d4>d5", Advance("red", "R_A", "d5"))
    assert RULESET.parse_action(advance, "advance d4-d5") == Advance("red", "R_A", "d5")


def test_bare_forms_follow_the_phase() -> None:
    state = start()
    assert RULESET.parse_action(state, "c2-c4") == Move("red", "R_C", "c4")
    assert RULESET.parse_action(state, "d4>d5") == Attack("red", "R_A", "B_I")
    defence, _ = play_text(RULESET, state, ["red attack d4>d5", "red end"])
    assert RULESET.parse_action(defence, "d6>d5") == Support("black", "B_I2", "B_I")
    advance, _ = play_text(RULESET, defence, ["black end"])
    assert RULESET.parse_action(advance, "d4-d5") == Advance("red", "R_A", "d5")
    assert RULESET.parse_action(advance, "d4>d5") == Advance("red", "R_A", "d5")


def test_units_may_be_named_by_id_and_text_is_forgiving() -> None:
    state = start()
    assert RULESET.parse_action(state, "move R_C-c4") == Move("red", "R_C", "c4")
    assert RULESET.parse_action(state, "  MOVE   c2 - c4 ") == Move("red", "R_C", "c4")
    assert RULESET.parse_action(state, "pass") == EndPhase("red")


def test_the_side_defaults_to_the_one_to_act() -> None:
    state = start()
    assert RULESET.parse_action(state, "end") == EndPhase("red")
    assert RULESET.parse_action(state, "end", "black") == EndPhase("black")
    dawn = RULESET.new_game(RULESET.resolve_options({"scenario": "attack_at_dawn"}))
    with pytest.raises(RuleError) as error:
        RULESET.parse_action(dawn, "commit " + "00" * 32)
    assert error.value.reason == "NOTATION_AMBIGUOUS"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "NOTATION_INVALID"),
        ("charge!", "NOTATION_INVALID"),
        ("move c2", "NOTATION_INVALID"),
        ("move c3-c4", "UNKNOWN_UNIT"),
        ("attack d4>d7", "UNKNOWN_UNIT"),
        ("move z9-c4", "UNKNOWN_CELL"),
        ("move R_Q-c4", "NOTATION_INVALID"),
        ("move c2-44", "NOTATION_INVALID"),
        ("place c3=Z", "NOTATION_INVALID"),
        ("reveal a2=A salt 1234", "NOTATION_INVALID"),
        ("reveal a2=A", "NOTATION_INVALID"),
        ("commit abc", "NOTATION_INVALID"),
    ],
)
def test_bad_text(text: str, reason: str) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.parse_action(start(), text, "red")
    assert error.value.reason == reason
    if reason == "NOTATION_INVALID":
        assert "move c2-d4" in error.value.accepted  # the help names the forms


def test_deployment_actions_round_trip() -> None:
    dawn = RULESET.new_game(RULESET.resolve_options({"scenario": "attack_at_dawn"}))
    digest = bytes(range(32))
    round_trip(dawn, f"commit {digest.hex()}", Commit("red", digest))
    placements = (("a2", "artillery"), ("b3", "infantry"))
    salt = bytes(range(32, 64))
    round_trip(dawn, f"reveal a2=A b3=I salt {salt.hex()}", Reveal("red", placements, salt))
    sealed = SEALED_RULESET.new_game(
        SEALED_RULESET.resolve_options(
            {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
        )
    )
    assert SEALED_RULESET.parse_action(sealed, "seal b3=infantry a2=A", "red") == Seal(
        "red", placements
    )
    assert SEALED_RULESET.format_action(sealed, Seal("red", placements)) == "seal a2=A b3=I"
    marching = RULESET.new_game(RULESET.resolve_options({"scenario": "marching_orders"}))
    round_trip(marching, "place c3=I", Place("red", "infantry", "c3"))
    assert RULESET.parse_action(marching, "place c3=horse_guards") == Place(
        "red", "cuirassiers", "c3"
    )


def test_every_legal_action_round_trips_in_a_game() -> None:
    state = start()
    seen: set[type] = set()
    for line in ["red move c2-c4", "red attack d4>d5", "red end", "black end"]:
        for action in RULESET.legal_actions(state):
            round_trip(state, RULESET.format_action(state, action), action)
            seen.add(type(action))
        state, _ = play_text(RULESET, state, [line])
    assert {Move, Attack, EndPhase, Support, BeginRedoubt} <= seen
