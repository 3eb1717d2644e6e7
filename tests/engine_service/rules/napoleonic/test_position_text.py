"""The position text of a game in progress (docs/positions.md#napoleonic-chess): how unit
ids are written, and every unreadable or impossible section refused as INVALID_SETUP
naming what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET
from tests.engine_service.rules.napoleonic.test_deployment import committed
from tests.engine_service.rules.napoleonic.test_withheld_deployments import (
    red_revealed_withheld,
    red_sealed_withheld,
)

BOARD = "board 8x8; red: d4=I h1=G; black: d5=I a8=G; "
PHASES = (
    "deploy_commit, deploy_reveal, deploy_sealed, placement, movement, attack_declaration, "
    "defence, advance, game_over"
)


def red_revealed_nothing() -> NapoleonicState:
    """Both have committed and red's revealed array is empty (written `-`)."""
    state = committed()
    assert state.deployment is not None
    return state.evolve(deployment=replace(state.deployment, reveals=(("red", ()),)))


def refused(text: str) -> str:
    with pytest.raises(RuleError) as error:
        RULESET.new_game(RULESET.resolve_options({}), BOARD + text)
    assert (error.value.reason, error.value.field) == (Reason.INVALID_SETUP, "setup")
    return error.value.message


def test_unit_ids_are_written_as_short_as_they_can_be_read_back() -> None:
    options = RULESET.resolve_options({})
    setup = "board 8x8; red: d4=I#R_I01 c4=I#R_I7 e4=I#R_I0 h1=G; black: d5=I a8=G"
    state = RULESET.new_game(options, setup)
    text = RULESET.setup_text(state)
    # R_I7 is 'I7'; a number with a leading zero, or 0, is no such short form.
    assert "red: h1=G c4=I7 d4=I#R_I01 e4=I#R_I0;" in text
    again = RULESET.new_game(options, text)
    assert sorted(u.id for u in again.units) == sorted(u.id for u in state.units)
    assert again.by_id()["R_I01"].cell == state.geo.index["d4"]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (
            "turn: red dance 3",
            f"set-up: turn 'red dance 3' is not '<player> <phase> <turns>' (phases: {PHASES})",
        ),
        (
            "turn: red movement 0; placing: red 1",
            "set-up: phase movement has no deployment in progress",
        ),
        (
            "turn: red movement 0; history: AAAAAAAAAA",
            "set-up: history: 7 bytes is not a whole number of 8-byte keys",
        ),
        (
            "players: red/south; turn: red movement 0",
            "set-up: players: 2 to 8 players, each named once",
        ),
        (
            "players: red/south red/north; turn: red movement 0",
            "set-up: players: 2 to 8 players, each named once",
        ),
        (
            "turn: red attack_declaration 0; attacks: R_I>B_I>B_G",
            "set-up: target B_I>B_G of R_I is not on the board",
        ),
        ("turn: red movement 0; quiet: 3", "set-up: turn counters 0/3 are impossible"),
        (
            "turn: red movement 0; quiet: 3; eliminated: B_X",
            "set-up: turn counters 0/3 are impossible; phase movement has vacated squares",
        ),
    ],
)
def test_an_unreadable_or_impossible_position_is_refused_saying_why(
    section: str, message: str
) -> None:
    assert refused(section) == message


def test_two_players_of_their_own_alliances_are_read() -> None:
    options = RULESET.resolve_options({})
    state = RULESET.new_game(
        options, BOARD + "players: red/south black/north; turn: red movement 0"
    )
    assert [(p.id, p.alliance) for p in state.players] == [("red", "south"), ("black", "north")]
    assert state.phase is Phase.MOVEMENT


def test_10_2_the_placing_section_names_the_next_placer_and_its_placements() -> None:
    assert refused("turn: red placement 0; placing: red") == (
        "set-up: placing: 'red' is not '<player> <placed>'"
    )


@pytest.mark.parametrize(
    ("ruleset", "copy", "section"),
    [
        (RULESET, red_revealed_withheld, "revealed red: withheld"),
        (SEALED_RULESET, red_sealed_withheld, "sealed red: withheld"),
        (RULESET, red_revealed_nothing, "revealed red: -"),
    ],
)
def test_10_1_a_deployment_in_progress_is_read_back_as_written(
    ruleset: NapoleonicRuleset, copy: Callable[[], NapoleonicState], section: str
) -> None:
    state = copy()
    text = ruleset.setup_text(state)
    assert text.endswith(f"; {section}")
    assert ruleset.new_game(ruleset.options_of(state), text) == state
