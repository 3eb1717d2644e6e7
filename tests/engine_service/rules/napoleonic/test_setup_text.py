"""Set-up texts (whole positions) and game records that replay to the same state."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.napoleonic.scenarios import SCENARIOS
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from engine_service.rules.record import parse_record, record_of, replay
from tests.engine_service.rules.napoleonic.helpers import (
    RULESET,
    SEALED_RULESET,
    all_cases,
    case_state,
    play_text,
    setup_text_of,
)

VARIANTS = [{"scenario": s} for s in SCENARIOS] + [
    {"setup": "pieces_forward"},
    {"setup": "linear_battle_order"},
    {"deployment": "marching_orders", "scenario": "grand_battle"},
    {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
    {"repetition_draw": "3"},
]


@pytest.mark.parametrize("given", VARIANTS, ids=[",".join(v.values()) for v in VARIANTS])
def test_an_initial_state_is_its_set_up_text(given: dict[str, str]) -> None:
    options = SEALED_RULESET.resolve_options(given)
    state = SEALED_RULESET.new_game(options)
    text = SEALED_RULESET.setup_text(state)
    assert SEALED_RULESET.new_game(options, text) == state


def test_the_set_up_text_format() -> None:
    state = case_state(all_cases()[0])
    # Ids the engine would give a unit where it stands are left out; others are written.
    assert RULESET.setup_text(state) == (
        "board 8x8; red: h1=G c4=I d4=A e4=C#R_C_A f4=C#R_C_F; "
        "black: c5=I#B_I_W d5=A e5=I#B_I_E d6=I#B_I_R a8=G; turn: red movement 0"
    )
    terrain = case_state(next(c for c in all_cases() if c["id"].startswith("T30a")))
    assert "; obstacles: d4|d5; " in RULESET.setup_text(terrain)


@pytest.mark.parametrize("case", all_cases(), ids=[c["id"] for c in all_cases()])
def test_every_json_position_round_trips(case: dict[str, Any]) -> None:
    state = case_state(case)
    again = RULESET.new_game(RULESET.options_of(state), RULESET.setup_text(state))
    assert again == state
    assert RULESET.setup_text(again) == RULESET.setup_text(
        RULESET.new_game(RULESET.options_of(state), setup_text_of(case["position"]))
    )


def test_a_position_in_play_keeps_terrain_sites_and_lost_units() -> None:
    setup = "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G; hills: c4"
    state = RULESET.new_game(
        RULESET.resolve_options({"redoubt_build_turns": "3", "auto_skip_defence": "true"}), setup
    )
    state, _ = play_text(
        RULESET, state, ["red redoubt d4", "red attack d4>d5", "red end", "red end"]
    )
    text = RULESET.setup_text(state)
    assert text == (
        "board 8x8; red: h1=G d4=A; black: a8=G; army black: 1I 1G; "
        "hills: c4; sites: d4=red/1/R_A; turn: black movement 1"
    )
    again = RULESET.new_game(RULESET.options_of(state), text)
    assert again.units == state.units and again.terrain == state.terrain
    assert again.armies == state.armies


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("8x8; red: a1=G", "must start with 'board"),
        ("board 30x8; red: a1=G", "outside"),
        ("board 8x8; red: a9=G#R_G", "a9 is not a square"),
        ("board 8x8; red: a1=G#R_G b1=I#R_G", "two units have the id R_G"),
        ("board 8x8; red: a1=G#R_G; black: a1=G#B_G", "both on a1"),
        ("board 8x8; red: a1=Q", "no unit type"),
        ("board 8x8; red: a1=G; army red: 1I", "army has 0"),
        ("board 8x8; red: a1=G; fog: a2", "unknown section"),
        ("board 8x8; red: a1=G; red: a2=I", "appears twice"),
        ("board 8x8; red: a1=G; obstacles: a1|c3", "not between orthogonal"),
        ("board 8x8; army red: 1G; army black: 1G", "needs units"),
    ],
)
def test_bad_set_up_texts(text: str, words: str) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.new_game(RULESET.resolve_options({}), text)
    assert error.value.reason == "INVALID_SETUP" and words in error.value.message


def test_a_deployment_set_up_has_armies_but_no_units() -> None:
    options = RULESET.resolve_options({"scenario": "marching_orders"})
    state = RULESET.new_game(options, "board 8x8; army red: 2I 1G; army black: 1G")
    assert state.phase is Phase.PLACEMENT and state.army("red") == (
        "infantry",
        "infantry",
        "guards",
    )
    with pytest.raises(RuleError) as error:
        RULESET.new_game(options, "board 8x8; red: a2=G")
    assert error.value.reason == "INVALID_SETUP"


@pytest.mark.parametrize(
    "given",
    [
        {"auto_skip_defence": "false", "turn_limit": "30"},
        {"scenario": "attack_at_dawn", "turn_limit": "20"},
        {"scenario": "hill_and_stream", "turn_limit": "30"},
    ],
    ids=["standard", "attack_at_dawn", "terrain"],
)
def test_records_replay_to_the_same_state(given: dict[str, str]) -> None:
    rng = random.Random(11)
    initial: Game[NapoleonicState] = Game(RULESET, RULESET.new_game(RULESET.resolve_options(given)))
    game = initial
    played = []
    while game.outcome is None:
        action = RULESET.random_action(game.state, rng)
        assert action is not None
        game, _ = game.apply(action.side, action)
        played.append((action.side, action))
    record = record_of(initial, played)
    final, history = replay(RULESET, parse_record(record))
    assert final.state == game.state and len(history) == len(played) + 1
    assert f'[Result "{game.outcome.message}"]' in record


def test_10_1_unit_ids_are_numbered_in_board_order() -> None:
    # Listed out of board order: the numbers follow the board (rank, then file) instead.
    setup = "board 8x8; red: d4=I c2=I b3=I h1=G; black: d5=I a8=G"
    state = RULESET.new_game(RULESET.resolve_options({}), setup)
    ids = {u.id: state.geo.names[u.cell] for u in state.units if u.side == "red"}
    assert ids == {"R_I1": "c2", "R_I2": "b3", "R_I3": "d4", "R_G": "h1"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "board 8 x 8; red: a1=G; black: a8=G",
            "set-up: 'board 8 x 8' is not 'board <width>x<height>'",
        ),
        (
            "board 8x8; red: a1=G; black: a8=G; obstacles: d4d5",
            "set-up: obstacles: 'd4d5' is not an edge 'a|b' (e.g. 'd4|d5')",
        ),
    ],
)
def test_a_bad_set_up_text_is_refused_quoting_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.new_game(RULESET.resolve_options({}), text)
    assert (error.value.reason, error.value.message) == ("INVALID_SETUP", message)
