"""Engine inputs that used to end in INTERNAL are INVALID_ARGUMENT.

A reveal with non-ASCII digits, a SuggestAction budget of 2^63 s, a state whose ply is
near 2^32, a set-up with a superscript digit: each is a bad request, refused with a reason
(the property tests in tests/engine_service/test_service_properties.py look for more).
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import duration_pb2

from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, game_pb2

pytestmark = pytest.mark.system

RED = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK = "a7=C b7=C c7=I d7=I e7=I f7=I g7=C h7=C a6=I b6=I c6=A d6=G e6=I f6=A g6=I"
SALT = "ab" * 32


def refused(call: object, request: object) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as failure:
        call(request, timeout=30)  # type: ignore[operator]
    details = error_details(failure.value)
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT, (details.code, details.message)
    assert details.reason, details.message
    return details


def test_a_reveal_with_non_ascii_digits(stub) -> None:
    state = stub.NewGame(
        engine_pb2.NewGameRequest(game="napoleonic", options={"scenario": "attack_at_dawn"})
    ).state
    for side, array in (("red", RED), ("black", BLACK)):
        state = stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(
                state=state,
                actions=[game_pb2.Action(side=side, notation=f"commit {array} salt {SALT}")],
            )
        ).state
    for text in (RED.replace("a3", "a\u0663"), RED.replace("a3", "a³"), RED + " é=I"):
        reveal = game_pb2.Action(side="red", notation=f"reveal {text} salt {SALT}")
        details = refused(
            stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[reveal])
        )
        assert details.reason == "NOTATION_INVALID"


def test_a_search_budget_of_two_to_the_63_seconds(stub) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    for budget in (
        duration_pb2.Duration(seconds=2**63 - 1),
        duration_pb2.Duration(seconds=-(2**63)),
        duration_pb2.Duration(seconds=10**11),
        duration_pb2.Duration(seconds=1, nanos=-5),
    ):
        refused(
            stub.SuggestAction, engine_pb2.SuggestActionRequest(state=state, time_budget=budget)
        )


def test_a_ply_near_two_to_the_32(stub) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    action = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions[0]
    state.ply = 2**32 - 1
    details = refused(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action.action])
    )
    assert details.fields and details.fields[0][0] == "state.ply"
    refused(
        stub.WriteRecord,
        engine_pb2.WriteRecordRequest(initial_state=state, actions=[action.action]),
    )


def test_a_set_up_with_a_superscript_digit(stub) -> None:
    setup = "mhc1gk1chm/²/10/10/10/10/10/10/10/MHC1GK1CHM S FF:ff"
    details = refused(stub.NewGame, engine_pb2.NewGameRequest(game="war", setup=setup))
    assert details.reason == "INVALID_SETUP"


def test_a_level_beyond_five(stub) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    details = refused(stub.SuggestAction, engine_pb2.SuggestActionRequest(state=state, level=6))
    assert details.fields[0][0] == "level"
