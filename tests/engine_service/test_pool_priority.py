"""The pool's reserved share: calls of priority (the matchmaker's, which
carry the caller key) are admitted and served whatever the other calls hold; a call with a
wrong key, or none, is like any other.

The work is the stand-in of `test_pool.py`, run in real pool processes; the key is read
from a real call's metadata (a real gRPC server on loopback).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from engine_service.convert.tags import tag_key
from engine_service.handling import Limits
from engine_service.pool import Job, Pool
from engine_service.rules import rulesets
from engine_service.service import SERVICE_NAME, RulesEngine, pool_work, search_limit
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.test_pool import Caller, _wait, stand_in
from tests.security.engine import long_record
from tests.servers import free_port
from wargame.runtime.config import CALLER_KEY_HEADER
from wargame.runtime.refusal import Reason, Refusal
from wargame.runtime.serving import create_server, register_service
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc

KEY = "k3y-" + "9f" * 20


def _running(
    pool: Pool, job: Job, caller: Caller, *, priority: bool = False
) -> tuple[threading.Thread, list[object]]:
    """`job` run in the pool from a thread of its own: the thread, and what it ended with."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(pool.run(job, caller, priority=priority))
        except Exception as error:
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.fixture
def pool() -> Iterator[Pool]:
    made = Pool(
        stand_in, (), processes=1, queue=1, reserved=1, log_format="console", log_level="error"
    )
    yield made
    made.close()


def test_a_call_of_priority_runs_at_once_while_the_others_are_refused(pool: Pool) -> None:
    callers = [Caller(), Caller()]
    running = [_running(pool, Job("sleep", b"30", 30, 60), caller) for caller in callers]
    _wait(lambda: pool._admitted == pool.capacity and pool._slots[0].busy_until > 0)
    with pytest.raises(Refusal) as refused:
        pool.run(Job("echo", b"x", 1, 30), Caller())
    assert refused.value.reason == Reason.ENGINE_BUSY
    pool.refuse_when_full(priority=True)  # room for it
    # Served by the reserved process at once (a queued call would wait 30 s for a slot).
    assert pool.run(Job("echo", b"bot", 1, 30), Caller(), priority=True) == b"bot"
    reserved = int(pool.run(Job("pid", b"", 1, 30), Caller(), priority=True))
    pids = [slot.process.pid if slot.process else 0 for slot in pool._slots]
    assert reserved == pids[1] != pids[0]
    assert pool._free_reserved == [pool._slots[1]]  # given back to the calls of priority
    assert pool._admitted_priority == 0  # both ended: their places are free again
    for caller in callers:
        caller.there = False
    for thread, _outcome in running:
        thread.join(30)


def test_calls_of_priority_have_a_bound_of_their_own(pool: Pool) -> None:
    callers = [Caller(), Caller()]
    running = [
        _running(pool, Job("sleep", b"30", 30, 60), caller, priority=True) for caller in callers
    ]
    _wait(lambda: pool._admitted_priority == pool.priority_capacity)
    with pytest.raises(Refusal) as refused:
        pool.run(Job("echo", b"x", 1, 30), Caller(), priority=True)
    assert refused.value.reason == Reason.ENGINE_BUSY
    for caller in callers:
        caller.there = False
    for thread, _outcome in running:
        thread.join(30)


def test_without_reserved_processes_priority_is_like_any_call() -> None:
    made = Pool(stand_in, (), processes=1, queue=0, log_format="console", log_level="error")
    try:
        caller = Caller()
        thread, _ = _running(made, Job("sleep", b"30", 30, 60), caller)
        _wait(lambda: made._admitted == made.capacity)
        assert made.priority_capacity == 0
        with pytest.raises(Refusal):
            made.run(Job("echo", b"x", 1, 30), Caller(), priority=True)
        caller.there = False
        thread.join(30)
    finally:
        made.close()


@pytest.mark.parametrize(
    ("configured", "sent", "priority"),
    [
        (KEY, KEY, True),
        (KEY, KEY[:-1] + "0", False),  # a wrong key: any caller
        (KEY, KEY + "x", False),
        (KEY, "", False),
        (KEY, None, False),  # no header
        ("", KEY, False),  # an engine without a key has no priority to give
    ],
)
def test_only_the_configured_caller_key_gives_priority(
    configured: str, sent: str | None, priority: bool
) -> None:
    engine = RulesEngine(rulesets(), caller_key=configured)
    seen: list[bool] = []

    def answer(request: bytes, context: grpc.ServicerContext) -> bytes:
        seen.append(engine._priority(context))
        return b""

    server = grpc.server(futures.ThreadPoolExecutor(2))
    handler = grpc.unary_unary_rpc_method_handler(answer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("priority.test.Caller", {"Ask": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            metadata = () if sent is None else ((CALLER_KEY_HEADER, sent),)
            channel.unary_unary("/priority.test.Caller/Ask")(b"", metadata=metadata, timeout=10)
    finally:
        server.stop(None)
    assert seen == [priority]


# A record of more than `max_actions` goes to the pool: 4 here, so that a record of 12 does.
POOLED = Limits(max_actions=4)
REPLAY = engine_pb2.ReplayRecordRequest(record=long_record(12), include_states=True)


@contextlib.contextmanager
def _pooled_engine() -> Iterator[tuple[engine_pb2_grpc.RulesEngineStub, Pool]]:
    """An engine served in this process with a pool of one process and one reserved for
    the caller key (and no queue): a stub on it, and its pool."""
    pool = Pool(
        pool_work,
        (TEST_SEAL_KEY, POOLED),
        processes=1,
        queue=0,
        reserved=1,
        log_format="console",
        log_level="error",
    )
    engine = RulesEngine(
        rulesets(TEST_SEAL_KEY), POOLED, pool, caller_key=KEY, tag_key=tag_key(TEST_SEAL_KEY)
    )
    serving = create_server(
        f"127.0.0.1:{free_port()}",
        lambda server: register_service(
            server, engine, engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"]
        ),
        [SERVICE_NAME],
    )
    serving.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{serving.port}") as channel:
            yield engine_pb2_grpc.RulesEngineStub(channel), pool
    finally:
        serving.stop(grace=1)
        pool.close()


def test_an_engine_with_a_pool_answers_as_one_without_with_the_key_or_without() -> None:
    """The expensive calls of an engine with a pool run in its processes (the reserved one
    for the caller key): a replay through it is the replay the engine makes in place."""
    # Keyed alike, as the pool's processes are (`service.pool_work`): the same tags.
    in_place = RulesEngine(rulesets(TEST_SEAL_KEY), POOLED, tag_key=tag_key(TEST_SEAL_KEY))
    in_place_answer = in_place.work("ReplayRecord", REPLAY, 60)
    with _pooled_engine() as (stub, _pool):
        for metadata in [(), ((CALLER_KEY_HEADER, KEY),)]:
            assert stub.ReplayRecord(REPLAY, metadata=metadata, timeout=120) == in_place_answer


def test_the_caller_key_is_served_by_the_reserved_process_while_the_other_is_busy() -> None:
    with _pooled_engine() as (stub, pool):
        state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        search = engine_pb2.SuggestActionRequest(
            state=state, level=5, time_budget=duration_pb2.Duration(seconds=5)
        )
        busy = stub.SuggestAction.future(search, timeout=300)
        _wait(lambda: pool._admitted == pool.capacity)
        with pytest.raises(grpc.RpcError) as refused:
            stub.ReplayRecord(REPLAY, timeout=120)
        assert error_details(refused.value).reason == "ENGINE_BUSY"
        keyed = stub.ReplayRecord(REPLAY, metadata=((CALLER_KEY_HEADER, KEY),), timeout=120)
        assert len(keyed.actions) == 12
        busy.cancel()  # the search is not what this is about: its caller leaves


def test_a_pooled_search_goes_with_its_limit_and_its_calls_request_id() -> None:
    """The job of a search carries its budget and its `search_limit` (without the limit the
    pool would let a runaway search hold its process for as long as its caller waits), and
    the pool is given the call's request id, which the pool process logs under."""
    calls: list[tuple[Job, str]] = []
    with _pooled_engine() as (stub, pool):
        run = pool.run

        def recorded(job: Job, context: Any, request_id: str = "", **kwargs: Any) -> bytes:
            calls.append((job, request_id))
            return run(job, context, request_id, **kwargs)

        pool.run = recorded  # type: ignore[method-assign]
        state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        budget = duration_pb2.Duration(nanos=200_000_000)
        request = engine_pb2.SuggestActionRequest(state=state, level=1, time_budget=budget)
        metadata = (("x-request-id", "search-1"),)
        assert stub.SuggestAction(request, metadata=metadata, timeout=60).HasField("action")
    assert [(job.name, job.seconds, job.limit, id_) for job, id_ in calls] == [
        ("SuggestAction", 0.2, search_limit(0.2), "search-1")
    ]
