"""Engine service fixtures: a stub on the session's in-process engine, and the request and
refusal helpers its tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2


@pytest.fixture
def stub(engine_channel: grpc.Channel) -> engine_pb2_grpc.RulesEngineStub:
    """A RulesEngine stub on the session's in-process engine."""
    return engine_pb2_grpc.RulesEngineStub(engine_channel)


def refused(call: Callable[..., Any], request: Any) -> ErrorDetails:
    """The error details of a call that must fail."""
    with pytest.raises(grpc.RpcError) as failure:
        call(request, timeout=30)
    return error_details(failure.value)


def applying(state: game_pb2.GameState, side: str, **action: Any) -> engine_pb2.ApplyActionsRequest:
    """A request to apply one action of `side` (`notation="..."`, `resign=...`) to `state`."""
    return engine_pb2.ApplyActionsRequest(
        state=state, actions=[game_pb2.Action(side=side, **action)]
    )
