"""Nobody can starve the engine with expensive calls.

24 SuggestAction calls with a 10 s budget used to hold every request thread of a worker, so
that cheap rules calls (and every matchmaker submit) waited for ~30 s. Now expensive calls
are admitted to a bounded pool of niced processes: the rest are refused at once with
RESOURCE_EXHAUSTED (ENGINE_BUSY) and a retry hint, cheap calls keep being answered, and a
call whose caller leaves has its work stopped.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from tests.security.engine import start_engine, wait_idle, wait_until, wait_working
from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.system

FLOOD = 24
CHEAP_DEADLINE = 5.0  # seconds: far less than the flood's 10 s budget


def _war(stub: engine_pb2_grpc.RulesEngineStub) -> game_pb2.GameState:
    return stub.NewGame(engine_pb2.NewGameRequest(game="war"), timeout=30).state


def test_a_suggest_flood_is_refused_with_a_retry_hint_and_cheap_calls_go_on(stub) -> None:
    state = _war(stub)
    flood = engine_pb2.SuggestActionRequest(
        state=state, time_budget=duration_pb2.Duration(seconds=10)
    )
    calls = [stub.SuggestAction.future(flood, timeout=30) for _ in range(FLOOD)]
    refused: list[ErrorDetails] = []

    def settled() -> bool:
        refused.clear()
        for call in calls:
            if call.done() and call.exception() is not None:
                refused.append(error_details(call.exception()))
        return len(refused) >= FLOOD // 2

    try:
        # The engine refuses what its pool cannot take at once (it holds a few, not 24).
        assert wait_until(settled, 20), "the flood was not refused"
        for details in refused:
            assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED, details
            assert details.reason == "ENGINE_BUSY", details
            assert details.retry_after is not None and details.retry_after > 0, details
            # The hint in the metadata is the RetryInfo's, in milliseconds.
            retry_ms = int(details.metadata["retry_after_ms"])
            assert retry_ms == round(details.retry_after * 1000), details
        # While the admitted searches run, every cheap rules call is answered in time.
        legal = stub.ListLegalActions(
            engine_pb2.ListLegalActionsRequest(state=state), timeout=CHEAP_DEADLINE
        ).actions
        for index in range(20):
            stub.NewGame(engine_pb2.NewGameRequest(game="battle"), timeout=CHEAP_DEADLINE)
            stub.ValidateAction(
                engine_pb2.ValidateActionRequest(state=state, action=legal[index].action),
                timeout=CHEAP_DEADLINE,
            )
            applied = stub.ApplyActions(
                engine_pb2.ApplyActionsRequest(state=state, actions=[legal[index].action]),
                timeout=CHEAP_DEADLINE,
            )
            assert applied.state.ply == state.ply + 1
    finally:
        for call in calls:
            call.cancel()


def test_a_search_stops_when_its_caller_goes_away(tmp_path: Path) -> None:
    engine = start_engine(tmp_path)
    try:
        with grpc.insecure_channel(engine.address) as channel:
            stub = engine_pb2_grpc.RulesEngineStub(channel)
            request = engine_pb2.SuggestActionRequest(
                state=_war(stub), time_budget=duration_pb2.Duration(seconds=30)
            )
            assert wait_idle(engine.process.pid, 30)
            call = stub.SuggestAction.future(request, timeout=60)
            assert wait_working(engine.process.pid, 30), "the search did not start"
            call.cancel()
            assert wait_idle(engine.process.pid, 15), "the search went on after its caller left"
    finally:
        engine.stop()
