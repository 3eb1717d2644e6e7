"""ReplayRecord cannot explode the engine's memory.

A 357 kB record replayed with `include_states` built a 52 MB answer (past the 4 MB message
limit, so the client got a bare RESOURCE_EXHAUSTED), four such calls took a worker from
75 MB to over 1 GB, and the work went on after the callers had left. Now every answer is
bounded before it is built: RESPONSE_TOO_LARGE, with the reason and the way out.
"""

from __future__ import annotations

import threading

import grpc
import pytest

from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.service import RulesEngine
from tests.security.engine import (
    long_record,
    pool_started,
    resident_mb,
    wait_idle,
    wait_until,
)
from tests.servers import ServiceProcess
from wargame.runtime.refusal import Refusal
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc

RECORD = long_record(18_000)  # 357 kB, as in the report


@pytest.mark.system
def test_a_replay_too_large_to_answer_is_refused_with_its_reason(engine: ServiceProcess) -> None:
    assert 350_000 < len(RECORD) < 360_000
    with grpc.insecure_channel(engine.address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ReplayRecord(
                engine_pb2.ReplayRecordRequest(record=RECORD, include_states=True), timeout=60
            )
        details = error_details(refused.value)
        assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details.reason == "RESPONSE_TOO_LARGE", details
        assert "include_states" in details.message
        # The same record without the states fits, and a short one with them too.
        reply = stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=RECORD), timeout=300)
        assert len(reply.actions) == 18_000
        short = stub.ReplayRecord(
            engine_pb2.ReplayRecordRequest(record=long_record(40), include_states=True),
            timeout=60,
        )
        assert len(short.states) == 40


@pytest.mark.system
def test_callers_that_leave_leave_no_work_and_no_memory_behind(engine: ServiceProcess) -> None:
    pid = engine.process.pid
    assert wait_until(lambda: pool_started(pid), 60), "the pool's processes did not start"
    assert wait_idle(pid, 30)
    before = resident_mb(pid)
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak.append(resident_mb(pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    request = engine_pb2.ReplayRecordRequest(record=RECORD, include_states=True)
    try:
        with grpc.insecure_channel(engine.address) as channel:
            stub = engine_pb2_grpc.RulesEngineStub(channel)
            calls = [stub.ReplayRecord.future(request, timeout=120) for _ in range(4)]
            wait_until(lambda: all(call.done() for call in calls), 2.0)
            for call in calls:
                call.cancel()  # the callers leave
            assert wait_idle(pid, 5), "the replays went on after their callers left"
    finally:
        done.set()
        sampler.join()
    grown = max(peak) - before
    assert grown < 150, f"the engine grew by {grown:.0f} MB"


def test_an_answer_that_outgrows_its_estimate_is_stopped_at_the_limit() -> None:
    """Without states the estimate is two states; the actions alone pass a small limit."""
    limits = Limits(max_message_bytes=30_000)
    engine = RulesEngine(rulesets(), limits)
    record = long_record(2_000)
    with pytest.raises(Refusal) as refused:
        engine._replayed(engine_pb2.ReplayRecordRequest(record=record))
    assert refused.value.reason == "RESPONSE_TOO_LARGE"
    assert "more than 30000 bytes" in refused.value.message
