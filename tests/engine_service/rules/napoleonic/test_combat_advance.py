"""Advance after elimination (spec 7.4) and its terrain limits (10.4), refusal by refusal.

Each refusal carries its reason and names the rule; the options that forbid advances
(`advance_requires_unmoved`, `obstacles_block_movement`, `hill_to_hill_moves`) forbid
exactly what they say and nothing when off.
"""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.napoleonic.actions import Advance, Attack, EndPhase, Move
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import (
    RULESET,
    STORM_D5,
    STORMING_D5,
    apply_batch,
    cited,
)
from tests.engine_service.rules.napoleonic.test_combat import fight, refused, start

TWO_ATTACKERS = "board 8x8; red: d4=I#R_I c4=C#R_C h1=G#R_G b2=I#R_X; black: d5=I#B_I a8=G#B_G"


def after(setup: str, attacks: list[tuple[str, str]], **options: str) -> NapoleonicState:
    """The advance phase after red's `attacks` eliminated black's infantry B_I."""
    state, _events, tallies = fight(setup, attacks, (), **options)
    assert tallies["B_I"].eliminated and state.phase is Phase.ADVANCE
    return state


@pytest.mark.parametrize(
    ("action", "reason", "message"),
    [
        (
            Advance("red", "R_nobody", "d5"),
            "UNKNOWN_UNIT",
            "there is no unit R_nobody on the board",
        ),
        (Advance("red", "B_G", "d5"), "NOT_OWN_UNIT", "Black guards on a8 is not red's to advance"),
        (
            Advance("red", "R_I", "d6"),
            "ADVANCE_SQUARE_NOT_VACATED",
            "Infantry on d4 cannot advance to d6: an advance goes only into a square vacated "
            "in this combat (7.4)",
        ),
        (
            Advance("red", "R_I", "z9"),
            "ADVANCE_SQUARE_NOT_VACATED",
            "Infantry on d4 cannot advance to z9: an advance goes only into a square vacated "
            "in this combat (7.4)",
        ),
        (
            Advance("red", "R_X", "d5"),
            "ADVANCE_NOT_ATTACKER",
            "Infantry on b2 did not attack the unit that held d5: only its attackers may "
            "advance into it (7.4)",
        ),
    ],
)
def test_an_advance_refusal_names_the_rule(action: Advance, reason: str, message: str) -> None:
    state = after(TWO_ATTACKERS, [("R_I", "B_I"), ("R_C", "B_I")])
    error = refused(state, [action])
    assert (error.reason, cited(error)) == (reason, message)


def test_an_unknown_square_is_no_vacated_square_even_next_to_b1() -> None:
    # The vacated square is b1 (cell 1): a square name the board lacks must not read as it.
    setup = "board 8x8; red: b2=I#R_I a1=I#R_I2 h8=G#R_G; black: b1=I#B_I a8=G#B_G"
    state = after(setup, [("R_I", "B_I"), ("R_I2", "B_I")])
    assert refused(state, [Advance("red", "R_I", "q0")]).reason == "ADVANCE_SQUARE_NOT_VACATED"


def test_one_unit_per_vacated_square_names_the_square() -> None:
    state = after(TWO_ATTACKERS, [("R_I", "B_I"), ("R_C", "B_I")])
    state, _ = RULESET.apply(state, Advance("red", "R_I", "d5"))
    error = refused(state, [Advance("red", "R_C", "d5")])
    assert error.message == "d5 has already been taken by an advance: one unit per vacated square"


def test_an_advance_is_told_as_an_event() -> None:
    state = after(TWO_ATTACKERS, [("R_I", "B_I"), ("R_C", "B_I")])
    state, events = RULESET.apply(state, Advance("red", "R_C", "d5"))
    [event] = [e for e in events if e.kind is EventKind.ADVANCED]
    assert (event.text, event.side, event.cells, event.piece, event.unit) == (
        "Red cavalry on c4 advances into d5.",
        "red",
        ("c4", "d5"),
        "cavalry",
        "R_C",
    )


def test_advance_requires_unmoved_names_the_option() -> None:
    setup = "board 8x8; red: d3=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    state, _ = apply_batch(
        RULESET,
        start(setup, advance_requires_unmoved="true"),
        [Move("red", "R_A", "d4"), Attack("red", "R_A", "B_I"), EndPhase("red"), EndPhase("black")],
    )
    error = refused(state, [Advance("red", "R_A", "d5")])
    assert error.message == (
        "Artillery on d4 moved this turn and may not advance (advance_requires_unmoved)"
    )


def test_T29c_a_unit_that_entered_a_hill_this_turn_may_not_advance_off_it() -> None:
    setup = "board 8x8; red: d3=I#R_I e5=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G; hills: d4"
    state, _ = apply_batch(
        RULESET,
        start(setup),
        [
            Move("red", "R_I", "d4"),
            Attack("red", "R_I", "B_I"),
            Attack("red", "R_A", "B_I"),
            EndPhase("red"),
            EndPhase("black"),
        ],
    )
    error = refused(state, [Advance("red", "R_I", "d5")])
    assert (error.reason, cited(error)) == (
        "HILL_ON_AND_OFF",
        "Infantry on d4 entered that hill or redoubt this turn and may not leave it the same "
        "turn (10.4)",
    )


def test_T31a_artillery_may_not_enter_the_enemy_redoubt_the_turn_it_falls() -> None:
    setup = STORMING_D5 + "redoubts: d5=black"
    state = after(setup, STORM_D5)
    error = refused(state, [Advance("red", "R_A", "d5")])
    assert (error.reason, cited(error)) == (
        "ADVANCE_TERRAIN_FORBIDDEN",
        "Artillery on d4 cannot enter the enemy redoubt on d5 in the turn it falls (10.4)",
    )


def test_artillery_may_retake_its_own_sides_redoubt() -> None:
    # The bar is on *enemy* redoubts: a redoubt red built, held by black, is red's to enter.
    setup = STORMING_D5 + "redoubts: d5=red"
    state = after(setup, STORM_D5)
    state, _ = RULESET.apply(state, Advance("red", "R_A", "d5"))
    artillery = state.unit("R_A")
    assert artillery is not None and state.geo.names[artillery.cell] == "d5"


@pytest.mark.parametrize("blocking", ["false", "true"])
def test_obstacles_block_an_advance_only_with_the_option(blocking: str) -> None:
    setup = "board 8x8; red: d4=A#R_A c5=I#R_I h1=G#R_G; black: d5=I#B_I a8=G#B_G; obstacles: d4|d5"
    state = after(setup, [("R_A", "B_I"), ("R_I", "B_I")], obstacles_block_movement=blocking)
    if blocking == "false":
        RULESET.apply(state, Advance("red", "R_A", "d5"))
        return
    error = refused(state, [Advance("red", "R_A", "d5")])
    assert (error.reason, cited(error)) == (
        "PATH_BLOCKED",
        "Artillery on d4 cannot advance across the obstacle to d5 (obstacles_block_movement)",
    )
    RULESET.apply(state, Advance("red", "R_I", "d5"))  # the other side is open


@pytest.mark.parametrize("allowed", ["true", "false"])
def test_hill_to_hill_advances_follow_the_option(allowed: str) -> None:
    # R_I starts its turn on hill d4 (so it may leave it); d5 is a hill too.
    setup = (
        "board 8x8; red: d4=I#R_I c4=C#R_C e5=I#R_I2 h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
        "hills: d4 d5"
    )
    state = after(
        setup, [("R_I", "B_I"), ("R_C", "B_I"), ("R_I2", "B_I")], hill_to_hill_moves=allowed
    )
    RULESET.apply(state, Advance("red", "R_C", "d5"))  # from flat ground onto the hill: fine
    if allowed == "true":
        RULESET.apply(state, Advance("red", "R_I", "d5"))
        return
    error = refused(state, [Advance("red", "R_I", "d5")])
    assert (error.reason, cited(error)) == (
        "HILL_ON_AND_OFF",
        "Infantry on d4 may not move from one hill or redoubt onto another "
        "(hill_to_hill_moves is off)",
    )
