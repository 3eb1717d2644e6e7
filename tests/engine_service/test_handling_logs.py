"""The rpc wrapper's log lines: each names the call's request id, RPC and game, though the
wrapper makes those fields only when a line is written (not on every call)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import structlog

from tests.conftest import TEST_SEAL_KEY, engine_in_process
from wargame.runtime.logs import configure_logging
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """The engine's log lines of the test, as JSON in a buffer (the logging restored after)."""
    saved = structlog.get_config()
    handlers = list(logging.getLogger().handlers)
    level = logging.getLogger().level
    lines = io.StringIO()
    yield lines
    structlog.configure(**saved)
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture
def stub() -> Iterator[engine_pb2_grpc.RulesEngineStub]:
    """A RulesEngine of the test's own, on a free port."""
    with engine_in_process(TEST_SEAL_KEY) as address, grpc.insecure_channel(address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)


def _lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")]


def test_a_refusal_is_logged_with_the_callers_request_id_rpc_and_game(
    stub: engine_pb2_grpc.RulesEngineStub, logged: io.StringIO
) -> None:
    configure_logging("json", "info", stream=logged)
    state = game_pb2.GameState(game="war", position="not a position")
    with pytest.raises(grpc.RpcError):
        stub.ListLegalActions(
            engine_pb2.ListLegalActionsRequest(state=state), metadata=(("x-request-id", "r-42"),)
        )
    (line,) = [line for line in _lines(logged) if line["event"] == "rpc refused"]
    assert (line["request_id"], line["rpc"], line["game"]) == ("r-42", "ListLegalActions", "war")
    assert line["reason"] == "INVALID_STATE" and line["code"] == "INVALID_ARGUMENT"


def test_refusals_write_lines_only_at_info_and_the_level_is_read_per_call(
    stub: engine_pb2_grpc.RulesEngineStub, logged: io.StringIO
) -> None:
    # A flood of refused calls at `--log-level warning` writes nothing (and the wrapper
    # gathers nothing for the line); switched to info, the next refusal is logged.
    state = game_pb2.GameState(game="war", position="not a position")
    for level, request_id in (("warning", "quiet"), ("info", "loud")):
        configure_logging("json", level, stream=logged)
        with pytest.raises(grpc.RpcError):
            stub.ListLegalActions(
                engine_pb2.ListLegalActionsRequest(state=state),
                metadata=(("x-request-id", request_id),),
            )
    assert [line["request_id"] for line in _lines(logged)] == ["loud"]


def test_each_call_gets_its_own_request_id_when_the_caller_sends_none(
    stub: engine_pb2_grpc.RulesEngineStub, logged: io.StringIO
) -> None:
    configure_logging("json", "debug", stream=logged)
    for _ in range(2):
        stub.Ping(engine_pb2.PingRequest(payload=b"x"))
    ids = [line["request_id"] for line in _lines(logged) if line["event"] == "rpc"]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(len(i) == 16 for i in ids)


def test_answered_calls_write_no_line_above_debug(
    stub: engine_pb2_grpc.RulesEngineStub, logged: io.StringIO
) -> None:
    configure_logging("json", "info", stream=logged)
    stub.Ping(engine_pb2.PingRequest(payload=b"x"), metadata=(("x-request-id", "quiet"),))
    configure_logging("json", "debug", stream=logged)  # the level is read per call
    stub.Ping(engine_pb2.PingRequest(payload=b"x"), metadata=(("x-request-id", "loud"),))
    assert [line["request_id"] for line in _lines(logged)] == ["loud"]
