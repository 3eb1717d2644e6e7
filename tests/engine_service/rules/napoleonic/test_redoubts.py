"""Redoubts (spec 10.4): construction over the builder's turns, abandonment, ownership and
the options redoubt_build_turns, redoubt_occupation, max_sites_per_side, redoubt_owner."""

from __future__ import annotations

import pytest

from engine_service.rules.base import Event, EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import BeginRedoubt
from engine_service.rules.napoleonic.state import NapoleonicState
from tests.engine_service.rules.napoleonic.helpers import RULESET, play_text

SETUP = "board 8x8; red: d4=I#R_I c4=I#R_I2 h1=G#R_G; black: d7=I#B_I a8=G#B_G"


def start(**options: str) -> NapoleonicState:
    given = {"auto_skip_defence": "false", "redoubt_build_turns": "2", **options}
    return RULESET.new_game(RULESET.resolve_options(given), SETUP)


def kinds(events: list[Event]) -> list[EventKind]:
    return [e.kind for e in events]


def test_a_redoubt_is_built_by_uninterrupted_occupation() -> None:
    state, events = play_text(RULESET, start(), ["red redoubt d4", "red end", "red end"])
    assert kinds(events)[0] is EventKind.REDOUBT_STARTED
    assert EventKind.REDOUBT_PROGRESS in kinds(events)
    (site,) = state.terrain.constructions
    assert (site.builder, site.turns_done, site.unit) == ("red", 1, "R_I")
    # The enemy's turn does not count; the builder's next turn completes it.
    state, events = play_text(RULESET, state, ["black end", "black end"])
    assert state.terrain.constructions[0].turns_done == 1
    state, events = play_text(RULESET, state, ["red end", "red end"])
    assert EventKind.REDOUBT_COMPLETED in kinds(events)
    assert state.terrain.redoubts == ((state.geo.index["d4"], "red"),)
    assert state.terrain.constructions == ()


def test_an_empty_site_is_dropped() -> None:
    state, _ = play_text(RULESET, start(), ["red redoubt d4", "red move d4-d5", "red end"])
    state, events = play_text(RULESET, state, ["red end"])
    assert EventKind.REDOUBT_ABANDONED in kinds(events)
    assert state.terrain.constructions == ()


@pytest.mark.parametrize(
    ("occupation", "kept"), [("any_own_unit_at_end_of_turn", True), ("same_unit", False)]
)
def test_units_may_be_swapped_on_a_site(occupation: str, kept: bool) -> None:
    state, _ = play_text(
        RULESET,
        start(redoubt_occupation=occupation),
        ["red redoubt d4", "red move d4-e5", "red move c4-d4", "red end", "red end"],
    )
    assert bool(state.terrain.constructions) is kept


def test_a_site_held_by_the_enemy_is_dropped() -> None:
    setup = "board 8x8; red: d4=I#R_I h1=G#R_G; black: d6=A#B_A c4=I#B_I2 a8=G#B_G"
    state = RULESET.new_game(
        RULESET.resolve_options({"auto_skip_defence": "false", "redoubt_build_turns": "3"}), setup
    )
    state, _ = play_text(RULESET, state, ["red redoubt d4", "red end", "red end"])
    state, events = play_text(
        RULESET,
        state,
        [
            "black move d6-d5",
            "black attack d5>d4",
            "black attack c4>d4",
            "black end",
            "red end",
            "black advance c4>d4",
            "black end",
        ],
    )
    assert EventKind.REDOUBT_ABANDONED in kinds(events)
    assert state.terrain.constructions == ()


def test_redoubts_can_be_off() -> None:
    state = start(redoubt_build_turns="off")
    assert not any(isinstance(a, BeginRedoubt) for a in RULESET.legal_actions(state))
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, BeginRedoubt("red", "d4"))
    assert (
        error.value.reason == "REDOUBT_NOT_ALLOWED" and "redoubt_build_turns" in error.value.message
    )


def test_where_a_redoubt_may_be_begun() -> None:
    state = start()
    for square, reason in (("e4", "REDOUBT_NOT_ALLOWED"), ("d7", "NOT_OWN_UNIT")):
        with pytest.raises(RuleError) as error:
            RULESET.apply(state, BeginRedoubt("red", square))
        assert error.value.reason == reason
    state, _ = play_text(RULESET, state, ["red redoubt d4"])
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, BeginRedoubt("red", "d4"))
    assert error.value.reason == "REDOUBT_NOT_ALLOWED"


@pytest.mark.parametrize(("limit", "second_allowed"), [("unlimited", True), ("1", False)])
def test_max_sites_per_side(limit: str, second_allowed: bool) -> None:
    state, _ = play_text(RULESET, start(max_sites_per_side=limit), ["red redoubt d4"])
    listed = BeginRedoubt("red", "c4") in RULESET.legal_actions(state)
    assert listed is second_allowed
    if not second_allowed:
        with pytest.raises(RuleError) as error:
            RULESET.apply(state, BeginRedoubt("red", "c4"))
        assert error.value.reason == "REDOUBT_NOT_ALLOWED"


@pytest.mark.parametrize(("owner", "expected"), [("builder", "red"), ("last_occupant", "black")])
def test_redoubt_owner(owner: str, expected: str) -> None:
    setup = "board 8x8; red: h1=G#R_G; black: d5=I#B_I a8=G#B_G; redoubts: d4=red"
    state = RULESET.new_game(RULESET.resolve_options({"redoubt_owner": owner}), setup)
    state, _ = play_text(RULESET, state, ["red end", "red end", "black move d5-d4", "black end"])
    state, _ = play_text(RULESET, state, ["black end"])
    assert dict(state.terrain.redoubts)[state.geo.index["d4"]] == expected


def test_a_completed_redoubt_is_elevation() -> None:
    setup = "board 8x8; red: d3=I#R_I h1=G#R_G; black: d7=I#B_I a8=G#B_G; redoubts: d4=red"
    state, _ = play_text(
        RULESET, RULESET.new_game(RULESET.resolve_options({}), setup), ["red move d3-d4"]
    )
    assert "R_I" in state.turn.entered_elevation


def test_a_completed_redoubt_forgets_the_positions_before_it() -> None:
    # With a redoubt on the board none of the earlier positions can come back, so the
    # repetition count starts again from the position after completion.
    state, _ = play_text(
        RULESET,
        start(repetition_draw="3"),
        ["red redoubt d4", "red end", "red end", "black end", "black end"],
    )
    assert len(state.position_history) >= 2 and not state.terrain.redoubts
    state, events = play_text(RULESET, state, ["red end", "red end"])
    assert EventKind.REDOUBT_COMPLETED in kinds(events)
    assert len(state.position_history) == 1
