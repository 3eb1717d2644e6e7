"""Section 11: whether a Troop has moved is tracked from the set-up on, never guessed from its
square; every Troop of an initial position (the `initial_position` option) is unmoved,
wherever it stands (A1-A3, 7.2)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from engine_service.convert import conversions
from engine_service.rules import rulesets
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.record import parse_record, record_of, replay
from engine_service.rules.war.setup import SetupError, parse_setup
from tests.engine_service.convert.helpers import refused, wire
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

from .helpers import RULES, act, options

# The Van Troops a step forward of section 3.2's squares: South's on rank 4, North's on
# rank 7, off the Troop ranks 2 and 3 of each side.
ADVANCED_VAN = (
    "mhc1gk1chm/1t1t1t1t1t/10/t1t1t1t1t1/10/10/T1T1T1T1T1/10/1T1T1T1T1T/MHC1GK1CHM S FF:ff"
)


def _legal(state: Any) -> set[str]:
    return {RULES.format_action(state, action) for action in RULES.legal_actions(state)}


def test_every_troop_of_a_custom_initial_position_is_unmoved() -> None:
    state = RULES.new_game(options(initial_position=ADVANCED_VAN))
    troops = [view for view in RULES.pieces(state) if view.kind == "troop"]
    assert len(troops) == 20 and not any(view.moved for view in troops)
    assert {"a4-a6", "e4-e6", "b2-b4"} <= _legal(state)  # 7.2: off ranks 2-3 too
    after = act(state, "a4-a6")
    assert {"c7-c5", "i7-i5"} <= _legal(after)  # North's Troops on rank 7 as well


def test_a_troop_that_has_moved_loses_its_double_step() -> None:
    state = act(RULES.new_game(options(initial_position=ADVANCED_VAN)), "e4-e5")
    state = act(state, "a7-a6")
    moved = {view.cell: view.moved for view in RULES.pieces(state) if view.kind == "troop"}
    assert moved["e5"] and not moved["c4"]
    assert "e5-e7" not in _legal(state) and "e5-e6" in _legal(state)


def test_the_set_up_text_and_the_record_keep_the_unmoved_troops() -> None:
    game_options = options(initial_position=ADVANCED_VAN)
    initial = RULES.new_game(game_options)
    text = RULES.setup_text(initial)
    assert "unmoved=a4,c4,e4,g4,i4,a7,c7,e7,g7,i7" in text
    assert RULES.new_game(game_options, text) == initial
    played = [("south", RULES.parse_action(initial, "a4-a6"))]
    following = act(initial, "a4-a6")
    played.append(("north", RULES.parse_action(following, "c7-c5")))
    record = record_of(Game(RULES, initial), played)
    final, _ = replay(RULES, parse_record(record))
    assert final.state == act(following, "c7-c5")


def test_a_state_with_unmoved_troops_on_the_initial_squares_comes_back_from_the_wire() -> None:
    convert = conversions(rulesets())
    game_options = options(initial_position=ADVANCED_VAN)
    state = RULES.new_game(game_options)
    back = convert.game_from_proto(wire(convert, Game(RULES, state)))
    assert back.state == state
    # Under the default set-up, a Troop marked unmoved on rank 4 could not arise in play.
    msg = wire(convert, Game(RULES, RULES.new_game(options())))
    troop = next(piece for piece in msg.pieces if piece.cell == "e3")
    troop.cell = "e4"
    msg.war.ClearField("position_history")
    error = refused(convert, msg)
    assert "e4" in error.message and "not moved" in error.message


def test_an_initial_position_has_no_moved_troops() -> None:
    with pytest.raises(RuleError) as error:
        options(initial_position=ADVANCED_VAN + " moved=b2")
    assert error.value.reason == "INVALID_OPTION_VALUE" and "moved" in error.value.message


def test_setup_strings_of_other_positions_list_unmoved_troops_off_their_ranks() -> None:
    setup = parse_setup("10/10/10/10/10/2T7/10/10/10/10 S -:- unmoved=c5")
    assert setup.board[42] == 1  # a South Troop that has not moved
    assert parse_setup("10/10/10/10/10/2T7/10/10/10/10 S -:-").board[42] == 2  # as before
    for text, words in (
        ("10/10/10/10/10/2T7/10/10/10/10 S -:- unmoved=d5", "no Troop"),
        ("10/10/10/10/10/2T7/10/10/10/10 S -:- moved=c5 unmoved=c5", "both"),
    ):
        with pytest.raises(SetupError) as error:
            parse_setup(text)
        assert words in str(error.value)


@pytest.mark.integration
def test_new_game_and_apply_actions_double_step_from_a_custom_initial_position(
    engine_channel: grpc.Channel,
) -> None:
    stub = engine_pb2_grpc.RulesEngineStub(engine_channel)
    created = stub.NewGame(
        engine_pb2.NewGameRequest(game="war", options={"initial_position": ADVANCED_VAN}),
        timeout=30,
    )
    assert not any(piece.moved for piece in created.state.pieces if piece.kind == "troop")
    step = game_pb2.Action(side="south", notation="a4-a6")
    after = stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=created.state, actions=[step]), timeout=30
    ).state
    moved = {piece.cell: piece.moved for piece in after.pieces if piece.kind == "troop"}
    assert moved["a6"] and not moved["c4"]
    reply = game_pb2.Action(side="north", notation="c7-c5")
    again = stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=after, actions=[reply]), timeout=30
    ).state
    assert any(piece.cell == "c5" for piece in again.pieces)
    replayed = stub.NewGame(
        engine_pb2.NewGameRequest(
            game="war", options={"initial_position": ADVANCED_VAN}, setup=created.setup
        ),
        timeout=30,
    )
    assert list(replayed.state.pieces) == list(created.state.pieces)
