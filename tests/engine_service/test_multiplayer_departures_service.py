"""Departures through a real engine server (docs/multiplayer.md): the first player
resigning a 3-player deployment leaves a state the engine goes on from, and a reveal naming
a cell that is no square (not even ASCII) is refused with its reason, never INTERNAL:
ApplyActions answers INVALID_ARGUMENT UNKNOWN_CELL, ValidateAction `legal = false` with
that reason."""

from __future__ import annotations

import grpc
import pytest

from tests.engine_service.conftest import applying, refused
from wargame.v1 import engine_pb2, engine_pb2_grpc, errors_pb2, game_pb2
from wargame.v1 import napoleonic_pb2 as nap

pytestmark = pytest.mark.integration

# Red's standard army on its rows 2 and 3 of the 8x8 board (Attack at Dawn).
RED_ARRAY = " ".join(f"{f}2=I" for f in "abcdefgh") + " a3=C b3=C c3=C d3=C e3=A f3=A g3=G"
KINDS = {"I": "infantry", "C": "cavalry", "A": "artillery", "G": "guards"}
SALT = "11" * 32


@pytest.mark.parametrize("deployment", ["marching_orders", "attack_at_dawn"])
def test_the_first_player_resigning_a_three_player_deployment_leaves_a_playable_state(
    stub: engine_pb2_grpc.RulesEngineStub, deployment: str
) -> None:
    options = {"scenario": "three_way", "deployment": deployment}
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", options=options)).state
    resign = game_pb2.Resign(reason=game_pb2.OUTCOME_REASON_RESIGNATION)
    state = stub.ApplyActions(applying(state, "red", resign=resign)).state
    moves = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state))
    expected = ["black"] if deployment == "marching_orders" else ["black", "green"]
    assert list(moves.to_act) == expected
    assert state.napoleonic.active_player == "black"  # the next player moves first


def _revealing(stub: engine_pb2_grpc.RulesEngineStub) -> game_pb2.GameState:
    """An Attack-at-Dawn game where both players have committed (red to RED_ARRAY)."""
    options = {"scenario": "attack_at_dawn"}
    state = stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", options=options)).state
    state = stub.ApplyActions(applying(state, "red", notation=f"commit {RED_ARRAY} salt {SALT}"))
    black = RED_ARRAY.replace("2=", "7=").replace("3=", "6=")
    return stub.ApplyActions(
        applying(state.state, "black", notation=f"commit {black} salt {'22' * 32}")
    ).state


def _reveal(cell: str) -> game_pb2.Action:
    """Red's reveal of RED_ARRAY with a2 named `cell`."""
    placements = []
    for item in RED_ARRAY.split():
        square, letter = item.split("=")
        placements.append(
            nap.NapoleonicPlacement(
                unit_type=KINDS[letter], cell=cell if square == "a2" else square
            )
        )
    reveal = nap.NapoleonicReveal(placements=placements, salt=bytes.fromhex(SALT))
    return game_pb2.Action(side="red", napoleonic=nap.NapoleonicAction(reveal=reveal))


@pytest.mark.parametrize("cell", ["é2", "a\u0662", "a2\n", "\x00"])
def test_a_reveal_naming_a_cell_that_is_no_square_is_refused_with_its_reason(
    stub: engine_pb2_grpc.RulesEngineStub, cell: str
) -> None:
    state = _revealing(stub)
    action = _reveal(cell)
    # ValidateAction answers an illegal action with its reason (legal = false).
    checked = stub.ValidateAction(engine_pb2.ValidateActionRequest(state=state, action=action))
    assert not checked.legal and checked.reason == errors_pb2.ERROR_REASON_UNKNOWN_CELL
    assert cell not in checked.message  # the array is secret: none of it is quoted
    details = refused(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action])
    )
    assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_CELL")
    assert cell not in details.message
    # The honest reveal still works from the same state: nothing was lost.
    revealed = stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=state, actions=[_reveal("a2")])
    ).state
    assert list(revealed.to_act) == ["black"]
