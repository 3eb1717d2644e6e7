"""Refusals of attacks and supports (spec 7.1, 7.2) name the rule broken, in words.

Each refused declaration or allocation carries its reason code and a message naming the
units, the squares and the rule, as the style guide asks ("refusals name the rule").
"""

from __future__ import annotations

import pytest

from engine_service.rules.napoleonic.actions import Attack, EndPhase, Support
from tests.engine_service.rules.napoleonic.helpers import RULESET, apply_batch, cited
from tests.engine_service.rules.napoleonic.test_combat import refused, start

ATTACKS = "board 8x8; red: d4=A#R_A b2=I#R_I e4=C#R_C h1=G#R_G; black: d5=I#B_I f6=I#B_I2 a8=G#B_G"


@pytest.mark.parametrize(
    ("action", "reason", "message"),
    [
        (
            Attack("red", "R_nobody", "B_I"),
            "UNKNOWN_UNIT",
            "there is no unit R_nobody on the board",
        ),
        (
            Attack("red", "B_I", "R_A"),
            "NOT_OWN_UNIT",
            "Black infantry on d5 is not red's: red cannot attack with it",
        ),
        (
            Attack("red", "R_A", "B_nobody"),
            "UNKNOWN_UNIT",
            "there is no unit B_nobody to attack (7.1)",
        ),
        (
            Attack("red", "R_A", "R_C"),
            "TARGET_NOT_ENEMY",
            "Artillery on d4 cannot attack e4: only enemy units can be attacked "
            "(e4 holds red cavalry)",
        ),
        (
            Attack("red", "R_A", "B_I2"),
            "ATTACK_NOT_ADJACENT",
            "Artillery on d4 cannot attack f6: attacks go into an adjacent square only",
        ),
    ],
)
def test_an_attack_refusal_names_the_rule(action: Attack, reason: str, message: str) -> None:
    error = refused(start(ATTACKS), [action])
    assert (error.reason, cited(error)) == (reason, message)


def test_a_unit_makes_a_single_attack_and_the_refusal_says_where_it_attacks() -> None:
    setup = "board 8x8; red: d4=G#R_G; black: d5=I#B_I e5=I#B_I2 a8=G#B_G"
    error = refused(start(setup), [Attack("red", "R_G", "B_I"), Attack("red", "R_G", "B_I2")])
    assert error.reason == "ATTACKER_ALREADY_ASSIGNED"
    assert error.message == "Guards on d4 already attacks d5: a unit makes a single attack"


SUPPORTS = (
    "board 8x8; red: d4=A#R_A b2=I#R_I h1=G#R_G; "
    "black: d5=I#B_I f6=I#B_I2 d6=I#B_I3 c6=C#B_C e6=I#B_I4 a8=G#B_G"
)


@pytest.fixture
def defence():
    """Red's artillery d4 attacks black's infantry d5; black is to allocate supports."""
    state, _ = apply_batch(RULESET, start(SUPPORTS), [Attack("red", "R_A", "B_I"), EndPhase("red")])
    return state


@pytest.mark.parametrize(
    ("action", "reason", "message"),
    [
        (
            Support("black", "B_nobody", "B_I"),
            "UNKNOWN_UNIT",
            "there is no unit B_nobody on the board",
        ),
        (
            Support("black", "B_I3", "B_nobody"),
            "UNKNOWN_UNIT",
            "there is no unit B_nobody on the board",
        ),
        (
            Support("black", "R_I", "B_I"),
            "SUPPORT_NOT_FRIENDLY",
            "Red infantry on b2 is not black's: supports are between friendly units",
        ),
        (
            Support("black", "B_I3", "R_A"),
            "SUPPORT_NOT_FRIENDLY",
            "Red artillery on d4 is not black's: supports are between friendly units",
        ),
        (
            Support("black", "B_I", "B_I"),
            "SUPPORT_SELF",
            "Infantry on d5 cannot support itself",
        ),
        (
            Support("black", "B_I", "B_I3"),
            "SUPPORTER_UNDER_ATTACK",
            "Infantry on d5 is under attack and cannot support d6 (7.2)",
        ),
        (
            Support("black", "B_I3", "B_I4"),
            "SUPPORTED_NOT_UNDER_ATTACK",
            "Infantry on d6 cannot support e6: e6 is not under attack",
        ),
        (
            Support("black", "B_I2", "B_I"),
            "SUPPORT_NOT_ADJACENT",
            "Infantry on f6 cannot support d5: supports go into an adjacent square only",
        ),
        (
            Support("black", "B_I4", "B_I"),
            "SUPPORT_DIRECTION_NOT_ALLOWED",
            "Infantry on e6 cannot support d5: it supports orthogonally only",
        ),
    ],
)
def test_a_support_refusal_names_the_rule(
    defence, action: Support, reason: str, message: str
) -> None:
    error = refused(defence, [action])
    assert (error.reason, cited(error)) == (reason, message)


def test_a_unit_gives_a_single_support_and_the_refusal_says_whom_it_supports() -> None:
    setup = "board 8x8; red: d4=A#R_A f4=A#R_A2 h1=G#R_G; black: d5=I#B_I f5=I#B_I2 e5=G#B_G"
    state, _ = apply_batch(
        RULESET,
        start(setup),
        [Attack("red", "R_A", "B_I"), Attack("red", "R_A2", "B_I2"), EndPhase("red")],
    )
    error = refused(state, [Support("black", "B_G", "B_I"), Support("black", "B_G", "B_I2")])
    assert error.reason == "SUPPORTER_ALREADY_ASSIGNED"
    assert error.message == "Guards on e5 already supports d5: a unit gives a single support"


def test_a_support_across_an_obstacle_names_the_option() -> None:
    setup = (
        "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I d6=I#B_I2 a8=G#B_G; obstacles: d5|d6"
    )
    state, _ = apply_batch(
        RULESET,
        start(setup, obstacles_block_support="true"),
        [Attack("red", "R_A", "B_I"), EndPhase("red")],
    )
    error = refused(state, [Support("black", "B_I2", "B_I")])
    assert error.reason == "SUPPORT_ACROSS_OBSTACLE"
    assert error.message == (
        "Infantry on d6 cannot support d5 across an obstacle (obstacles_block_support)"
    )
