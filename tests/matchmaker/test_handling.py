"""How a failure that is not a refusal is answered (`handling._refusal_of`): a session
store that is still loading its data is UNAVAILABLE with the retry hint, like one out of
reach; anything else is INTERNAL, naming only the request id."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import structlog
from prometheus_client import REGISTRY
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from matchmaker import handling
from matchmaker.engine import EngineFailure
from matchmaker.handling import _refusal_of
from tests.matchmaker.helpers import captured_logs
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.serving import _tolerant
from wargame.runtime.status import error_details
from wargame.v1 import matchmaker_pb2 as mm

log = structlog.get_logger(component="matchmaker")


@pytest.fixture(autouse=True)
def retry_hint() -> Iterator[None]:
    """A hint other than the default, as main.py sets it from --retry-hint."""
    saved = handling.RETRY_HINT
    handling.set_retry_hint(2.5)
    yield
    handling.set_retry_hint(saved)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        pytest.param(
            RedisError("LOADING Redis is loading the dataset in memory"),
            "the session store is starting; retry in 2.5 s",
            id="still-loading",
        ),
        pytest.param(
            RedisConnectionError("Connection refused"),
            "the session store cannot be reached; retry in 2.5 s",
            id="out-of-reach",
        ),
    ],
)
def test_a_store_still_loading_or_out_of_reach_is_unavailable_with_the_retry_hint(
    error: RedisError, message: str
) -> None:
    refusal = _refusal_of(error, "r1")
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.UNAVAILABLE,
        Reason.STORE_UNAVAILABLE,
    )
    assert refusal.message == message
    assert (refusal.retry_after, refusal.metadata) == (2.5, {"retry_after_ms": "2500"})


def test_any_other_failure_is_internal_naming_the_request_id_only() -> None:
    refusal = _refusal_of(RedisError("ERR wrong number of arguments"), "r1")
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert refusal.message == "internal error (request id r1)"


# -- the wrappers, on a real gRPC server ---------------------------------------------------
# A probe service wrapped as the matchmaker's methods are (`unary`, `stream`); what each
# call does is named by its request's game id. The client is a real gRPC channel.

PROBE = "wargame.test.Probe"


def failure(what: str) -> Exception:
    """The failure a probe call raises for `what`."""
    failures: dict[str, Exception] = {
        "refused": Refusal(Code.FAILED_PRECONDITION, Reason.GAME_OVER, "the game is over"),
        "store": RedisConnectionError("Connection refused"),
        "bug": ValueError("a secret detail of the bug"),
        "engine": EngineFailure(
            Code.INTERNAL,
            Reason.ENGINE_UNAVAILABLE,
            "the engine failed",
            engine="INTERNAL: engine bug",
        ),
        "broken": Refusal(Code.INTERNAL, Reason.INTERNAL_ERROR, "a stored state is broken"),
    }
    return failures[what]


class Probe:
    """One unary and one streaming method: they log, bind the player, then answer or fail."""

    @handling.unary("ProbeUnary")
    async def Unary(
        self, request: mm.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> mm.EchoResponse:
        log.info("probe working")
        handling.bind_player("p-probe")
        log.info("probe knows its player")
        if request.game_id != "ok":
            raise failure(request.game_id)
        return mm.EchoResponse(payload=b"unary")

    @handling.stream("ProbeStream")
    async def Stream(
        self, request: mm.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[mm.EchoResponse]:
        yield mm.EchoResponse(payload=b"first")
        if request.game_id == "forever":
            await asyncio.Event().wait()
        if request.game_id != "ok":
            raise failure(request.game_id)
        yield mm.EchoResponse(payload=b"second")


@contextlib.asynccontextmanager
async def probe() -> AsyncIterator[grpc.aio.Channel]:
    """The probe service on a free loopback port, and a channel to it."""
    server = grpc.aio.server()
    servicer = Probe()
    decode = _tolerant(mm.GetGameRequest, 1000)
    encode = mm.EchoResponse.SerializeToString
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(
            servicer.Unary, request_deserializer=decode, response_serializer=encode
        ),
        "Stream": grpc.unary_stream_rpc_method_handler(
            servicer.Stream, request_deserializer=decode, response_serializer=encode
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(PROBE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield channel
    finally:
        await server.stop(None)


async def call_unary(game_id: str, request_id: str = "") -> Any:
    """One unary probe call: its reply, or the details of its failure."""
    metadata = (("x-request-id", request_id),) if request_id else ()
    async with probe() as channel:
        method = channel.unary_unary(
            f"/{PROBE}/Unary",
            request_serializer=mm.GetGameRequest.SerializeToString,
            response_deserializer=mm.EchoResponse.FromString,
        )
        try:
            return await method(mm.GetGameRequest(game_id=game_id), metadata=metadata, timeout=10)
        except grpc.aio.AioRpcError as error:
            return error_details(error)


async def call_stream(game_id: str) -> tuple[list[bytes], Any]:
    """One streaming probe call: the payloads it sent, and the details of its failure."""
    async with probe() as channel:
        method = channel.unary_stream(
            f"/{PROBE}/Stream",
            request_serializer=mm.GetGameRequest.SerializeToString,
            response_deserializer=mm.EchoResponse.FromString,
        )
        got: list[bytes] = []
        try:
            async for reply in method(mm.GetGameRequest(game_id=game_id), timeout=10):
                got.append(reply.payload)
        except grpc.aio.AioRpcError as error:
            return got, error_details(error)
        return got, None


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def calls(rpc: str, code: str) -> float:
    return sample("wargame_matchmaker_rpcs_total", rpc=rpc, code=code)


def errors(rpc: str, reason: str) -> float:
    return sample("wargame_matchmaker_errors_total", rpc=rpc, reason=reason)


def timed(rpc: str) -> float:
    return sample("wargame_matchmaker_rpc_seconds_count", rpc=rpc)


def test_a_call_is_logged_under_its_request_id_rpc_game_and_player() -> None:
    before = (calls("ProbeUnary", "OK"), timed("ProbeUnary"))
    with captured_logs() as logs:
        reply = asyncio.run(call_unary("ok", request_id="req-1_a.B"))
    assert reply.payload == b"unary"
    ours = [entry for entry in logs if entry.get("rpc") == "ProbeUnary"]
    assert [
        (entry["event"], entry["request_id"], entry["game_id"], entry["player_id"])
        for entry in ours
    ] == [
        ("probe working", "req-1_a.B", "ok", ""),
        ("probe knows its player", "req-1_a.B", "ok", "p-probe"),
        ("rpc", "req-1_a.B", "ok", "p-probe"),
    ]
    assert ours[-1]["log_level"] == "debug" and ours[-1]["duration_ms"] >= 0
    # Counted once as OK, and timed once.
    assert (calls("ProbeUnary", "OK"), timed("ProbeUnary")) == (before[0] + 1, before[1] + 1)
    # Nothing of the call stays bound once it is over.
    assert "request_id" not in structlog.contextvars.get_contextvars()


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("abc-DEF_1.2", "abc-DEF_1.2"),
        ("x" * 70, "x" * 64),  # only 64 characters are read
        ("not a valid id!", ""),
        ("a/b:c", ""),
    ],
)
def test_a_clients_request_id_is_kept_if_well_formed_else_replaced(sent: str, kept: str) -> None:
    with captured_logs() as logs:
        details = asyncio.run(call_unary("bug", request_id=sent))
    [failed] = [entry for entry in logs if entry["event"] == "rpc failed"]
    used = failed["request_id"]
    assert details.message == f"internal error (request id {used})"
    if kept:
        assert used == kept
    else:
        assert re.fullmatch(r"[0-9a-f]{16}", used), used


def test_a_request_without_an_id_gets_a_fresh_one_each_time() -> None:
    with captured_logs() as logs:
        asyncio.run(call_unary("bug"))
        asyncio.run(call_unary("bug"))
    ids = [entry["request_id"] for entry in logs if entry["event"] == "rpc failed"]
    assert len(ids) == 2 and ids[0] != ids[1]
    assert all(re.fullmatch(r"[0-9a-f]{16}", used) for used in ids)


@pytest.mark.parametrize(
    ("what", "code", "reason", "event", "said"),
    [
        (
            "refused",
            Code.FAILED_PRECONDITION,
            "GAME_OVER",
            "rpc refused",
            ("info", "the game is over"),
        ),
        (
            "store",
            Code.UNAVAILABLE,
            "STORE_UNAVAILABLE",
            "rpc unavailable",
            ("warning", "Connection refused"),
        ),
        (
            "engine",
            Code.INTERNAL,
            "ENGINE_UNAVAILABLE",
            "engine call failed",
            ("error", "the engine failed"),
        ),
        (
            "broken",
            Code.INTERNAL,
            "INTERNAL_ERROR",
            "rpc failed",
            ("error", "a stored state is broken"),
        ),
    ],
)
def test_a_failed_call_is_answered_counted_and_logged_by_its_kind(
    what: str, code: grpc.StatusCode, reason: str, event: str, said: tuple[str, str]
) -> None:
    level, message = said
    before = (calls("ProbeUnary", code.name), errors("ProbeUnary", reason), timed("ProbeUnary"))
    with captured_logs() as logs:
        details = asyncio.run(call_unary(what))
    assert (details.code, details.reason) == (code, reason)
    after = (calls("ProbeUnary", code.name), errors("ProbeUnary", reason), timed("ProbeUnary"))
    assert after == (before[0] + 1, before[1] + 1, before[2] + 1)
    [entry] = [entry for entry in logs if entry["event"] == event]
    assert (entry["log_level"], entry["code"], entry["reason"], entry["message"]) == (
        level,
        code.name,
        reason,
        message,
    )
    assert entry["duration_ms"] >= 0 and entry["game_id"] == what
    if what == "engine":
        assert entry["engine"] == "INTERNAL: engine bug"
    else:
        assert "engine" not in entry
    if what == "store":
        assert details.retry_after == 2.5
    assert not any(entry["event"] == "rpc" for entry in logs)  # no success logged


def test_a_bug_is_internal_and_only_its_log_holds_the_traceback() -> None:
    with captured_logs() as logs:
        details = asyncio.run(call_unary("bug", request_id="bug-1"))
    assert (details.code, details.reason) == (Code.INTERNAL, "INTERNAL_ERROR")
    assert details.message == "internal error (request id bug-1)"
    [entry] = [entry for entry in logs if entry["event"] == "rpc failed"]
    assert entry["log_level"] == "error" and entry["duration_ms"] >= 0
    assert isinstance(entry["exc_info"], ValueError)
    assert "a secret detail of the bug" not in details.message
    assert "message" not in entry  # the bug's text stays with its traceback


def test_a_stream_is_timed_to_its_first_message_and_a_failure_ends_it() -> None:
    before = (timed("ProbeStream"), calls("ProbeStream", "OK"))
    with captured_logs() as logs:
        got, details = asyncio.run(call_stream("ok"))
    assert (got, details) == ([b"first", b"second"], None)
    assert (timed("ProbeStream"), calls("ProbeStream", "OK")) == (before[0] + 1, before[1] + 1)
    [ended] = [entry for entry in logs if entry["event"] == "stream ended"]
    assert (ended["rpc"], ended["game_id"], ended["log_level"]) == ("ProbeStream", "ok", "debug")

    before = (timed("ProbeStream"), calls("ProbeStream", "FAILED_PRECONDITION"))
    with captured_logs() as logs:
        got, details = asyncio.run(call_stream("refused"))
    assert got == [b"first"]
    assert (details.code, details.reason, details.message) == (
        Code.FAILED_PRECONDITION,
        "GAME_OVER",
        "the game is over",
    )
    after = (timed("ProbeStream"), calls("ProbeStream", "FAILED_PRECONDITION"))
    assert after == (before[0] + 1, before[1] + 1)
    assert [entry["event"] for entry in logs if entry.get("rpc") == "ProbeStream"] == [
        "rpc refused"
    ]


def test_a_stream_the_client_cancels_is_counted_as_cancelled() -> None:
    before = calls("ProbeStream", "CANCELLED")

    async def scenario() -> None:
        async with probe() as channel:
            method = channel.unary_stream(
                f"/{PROBE}/Stream",
                request_serializer=mm.GetGameRequest.SerializeToString,
                response_deserializer=mm.EchoResponse.FromString,
            )
            call = method(mm.GetGameRequest(game_id="forever"), timeout=10)
            assert (await call.read()).payload == b"first"
            call.cancel()
            # The server hears of the cancellation a moment later: wait for its count.
            for _ in range(200):
                if calls("ProbeStream", "CANCELLED") > before:
                    break
                await asyncio.sleep(0.05)

    with captured_logs() as logs:
        asyncio.run(scenario())
    assert calls("ProbeStream", "CANCELLED") == before + 1
    assert not any("failed" in entry["event"] or "refused" in entry["event"] for entry in logs)


def test_undecodable_request_bytes_are_refused_as_malformed() -> None:
    async def scenario() -> Any:
        async with probe() as channel:
            method = channel.unary_unary(f"/{PROBE}/Unary")
            try:
                await method(b"\xff\xff\xff", timeout=10)
            except grpc.aio.AioRpcError as error:
                return error_details(error)
            raise AssertionError("the malformed request was answered")

    details = asyncio.run(scenario())
    assert (details.code, details.reason) == (Code.INVALID_ARGUMENT, "MALFORMED_REQUEST")
