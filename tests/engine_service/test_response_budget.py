"""A replay's answer is bounded by the message limit (`max_message_bytes`): refused with
RESPONSE_TOO_LARGE before any work when its estimate is beyond it, and as soon as the bytes
built pass it, naming the field to change (`include_states`, else `record`).

The work of ReplayRecord as a pool process runs it, here in this process (so that a mutation
run sees it); over gRPC and in a real engine process: tests/security/test_engine_replay.py.
"""

from __future__ import annotations

import grpc
import pytest

from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.service import RulesEngine
from tests.conftest import TEST_SEAL_KEY
from tests.security.engine import long_record
from wargame.runtime.refusal import Refusal
from wargame.v1 import engine_pb2

PLIES = 40
RECORD = long_record(PLIES)


def _state_bytes() -> int:
    """The size of the record's initial state, the unit of the engine's estimate."""
    answer = RulesEngine(rulesets(TEST_SEAL_KEY)).work(
        "ReplayRecord", engine_pb2.ReplayRecordRequest(record=RECORD), 60
    )
    assert isinstance(answer, engine_pb2.ReplayRecordResponse)
    return answer.initial_state.ByteSize()


def _replay(limit: int, include_states: bool) -> engine_pb2.ReplayRecordResponse:
    engine = RulesEngine(rulesets(TEST_SEAL_KEY), Limits(max_message_bytes=limit))
    request = engine_pb2.ReplayRecordRequest(record=RECORD, include_states=include_states)
    answer = engine.work("ReplayRecord", request, 60)
    assert isinstance(answer, engine_pb2.ReplayRecordResponse)
    return answer


def _refusal(limit: int, include_states: bool) -> Refusal:
    with pytest.raises(Refusal) as refused:
        _replay(limit, include_states)
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "RESPONSE_TOO_LARGE",
    )
    return refused.value


def test_an_estimate_beyond_the_limit_is_refused_before_any_work() -> None:
    """With the states, the answer holds about (2 + plies) states: refused when that
    passes the limit, naming include_states; without them the same limit is enough."""
    size = _state_bytes()
    limit = (2 + PLIES) * size - 1
    refusal = _refusal(limit, include_states=True)
    assert refusal.message.startswith(f"the replay would answer with about {limit + 1} bytes")
    assert "without include_states" in refusal.message
    assert [name for name, _why in refusal.fields] == ["include_states"]
    assert len(_replay(limit, include_states=False).actions) == PLIES


def test_bytes_built_beyond_the_limit_are_refused_naming_the_record() -> None:
    """Without the states the estimate is two states; the actions' bytes then pass a
    limit just above it, and the refusal says so and names the record."""
    size = _state_bytes()
    limit = 2 * size + 10
    refusal = _refusal(limit, include_states=False)
    assert refusal.message == (
        f"the replay would answer with more than {limit} bytes; at most {limit} fit in one "
        "message: ask for a shorter record"
    )
    assert [name for name, _why in refusal.fields] == ["record"]
    assert len(_replay(limit + 10_000, include_states=False).actions) == PLIES
