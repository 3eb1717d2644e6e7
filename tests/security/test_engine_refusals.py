"""An engine refusal never echoes a whole input, and an oversized request is
refused with REQUEST_TOO_LARGE.

Error messages quoted the whole input, so a few kB of bad input pushed the status past
gRPC's metadata limit and the client got RESOURCE_EXHAUSTED with no reason at all. Now
client text is quoted by a short prefix (`wargame.runtime.quoting.quoted`) and every
refusal is bounded; a request over the message limit is refused by the engine itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from wargame.runtime.quoting import MESSAGE_BYTES
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.system

LONG = 20_000  # characters of bad input: far past gRPC's 16 kB of metadata
Stub = engine_pb2_grpc.RulesEngineStub


def _state(stub: Stub, game: str) -> game_pb2.GameState:
    return stub.NewGame(engine_pb2.NewGameRequest(game=game), timeout=30).state


def _parse(game: str, text: str) -> Callable[[Stub], Any]:
    return lambda stub: stub.ParseAction(
        engine_pb2.ParseActionRequest(state=_state(stub, game), text=text), timeout=30
    )


CASES: dict[str, Callable[[Stub], Any]] = {
    "war notation": _parse("war", "x" * LONG),
    "battle notation": _parse("battle", "7" * LONG),
    "napoleonic notation": _parse("napoleonic", "move " + "é" * LONG),
    "option value": lambda stub: stub.NewGame(
        engine_pb2.NewGameRequest(game="war", options={"compulsion": "ü" * LONG}), timeout=30
    ),
    "option name": lambda stub: stub.NewGame(
        engine_pb2.NewGameRequest(game="war", options={"q" * LONG: "1"}), timeout=30
    ),
    "set-up": lambda stub: stub.NewGame(
        engine_pb2.NewGameRequest(game="napoleonic", setup="board 8x8; red: " + "z" * LONG),
        timeout=30,
    ),
    "game": lambda stub: stub.NewGame(engine_pb2.NewGameRequest(game="g" * LONG), timeout=30),
    "cell": lambda stub: stub.ListLegalActions(
        engine_pb2.ListLegalActionsRequest(state=_state(stub, "war"), cell="c" * LONG),
        timeout=30,
    ),
    "record line": lambda stub: stub.ReplayRecord(
        engine_pb2.ReplayRecordRequest(record='[Game "war"]\n' + "y" * LONG), timeout=30
    ),
    "action notation": lambda stub: stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(
            state=_state(stub, "war"), actions=[game_pb2.Action(notation="Z" * LONG)]
        ),
        timeout=30,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_long_bad_input_is_refused_with_its_reason_and_a_short_quote(stub, case: str) -> None:
    with pytest.raises(grpc.RpcError) as failure:
        CASES[case](stub)
    details = error_details(failure.value)
    assert details.code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND), details
    assert details.reason, details
    assert len(details.message.encode()) <= MESSAGE_BYTES, details.message
    for _field, text in details.fields:
        assert len(text.encode()) <= MESSAGE_BYTES


def test_a_request_over_the_size_limit_is_refused_with_request_too_large(stub) -> None:
    for payload in (4 * 1024 * 1024 + 1, 7 * 1024 * 1024):
        with pytest.raises(grpc.RpcError) as failure:
            stub.Ping(engine_pb2.PingRequest(payload=b"x" * payload), timeout=30)
        details = error_details(failure.value)
        assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details.reason == "REQUEST_TOO_LARGE", details
        assert "at most 4194304" in details.message
    assert stub.Ping(engine_pb2.PingRequest(payload=b"x" * 4_000_000), timeout=30).payload
