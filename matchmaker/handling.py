"""How every Matchmaker call is handled: request id, logs, metrics, errors.

Each servicer method is wrapped once, by `unary(...)` or `stream(...)`: the wrapper binds
the request id, the RPC and the game id to the logs (the player id once the token is
checked), times the call, and maps failures to the architecture's error model:
a `Refusal` to its own status; Redis unreachable or failing over to UNAVAILABLE
(STORE_UNAVAILABLE, with a retry hint); anything else to INTERNAL with the request id,
logged with its traceback and never sent to the client.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog
from redis.exceptions import RedisError

from matchmaker.engine import EngineFailure
from matchmaker.redis_client import TRANSIENT_ERRORS
from wargame.runtime.calls import (
    REQUEST_ID,
    call_metrics,
    elapsed_ms,
    new_request_id,
)
from wargame.runtime.refusal import Reason, Refusal, internal, unavailable
from wargame.runtime.serving import check_decoded

log = structlog.get_logger(component="matchmaker")

METRICS = call_metrics(
    "matchmaker",
    calls="Matchmaker calls by RPC and status code",
    refusals="Matchmaker refusals by RPC and reason",
    latency="Matchmaker unary call duration (streams: time to the first message)",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RPCS, ERRORS, LATENCY = METRICS.rpcs, METRICS.errors, METRICS.latency

RETRY_HINT = 1.0  # seconds; replaced by main.py from --retry-hint


def set_retry_hint(seconds: float) -> None:
    """The retry hint sent with UNAVAILABLE."""
    global RETRY_HINT
    RETRY_HINT = seconds


def _game_id(request: Any) -> str:
    value = getattr(request, "game_id", "")
    return value if isinstance(value, str) else ""


def _refusal_of(error: BaseException, request_id: str) -> Refusal:
    """The refusal a failure is answered with."""
    if isinstance(error, Refusal):
        return error
    if isinstance(error, TRANSIENT_ERRORS):
        return unavailable(
            Reason.STORE_UNAVAILABLE, "the session store cannot be reached", RETRY_HINT
        )
    if isinstance(error, RedisError) and "LOADING" in str(error):
        return unavailable(Reason.STORE_UNAVAILABLE, "the session store is starting", RETRY_HINT)
    return internal(request_id)


def _failed(name: str, error: Exception, request_id: str, started: float) -> grpc.Status:
    """Count and log a failed call; the status to end it with."""
    refusal = _refusal_of(error, request_id)
    ERRORS.labels(name, refusal.reason).inc()
    said = error.logged if isinstance(error, Refusal) else str(error)
    fields = {"code": refusal.code.name, "reason": refusal.reason, "message": said}
    if isinstance(error, EngineFailure):
        log.error(
            "engine call failed", **fields, engine=error.engine, duration_ms=elapsed_ms(started)
        )
    elif refusal.code == grpc.StatusCode.INTERNAL and not isinstance(error, Refusal):
        log.error("rpc failed", duration_ms=elapsed_ms(started), exc_info=error)
    elif refusal.code == grpc.StatusCode.INTERNAL:
        log.error("rpc failed", **fields, duration_ms=elapsed_ms(started))
    elif refusal.code == grpc.StatusCode.UNAVAILABLE:
        log.warning("rpc unavailable", **fields, duration_ms=elapsed_ms(started))
    else:
        log.info("rpc refused", **fields, duration_ms=elapsed_ms(started))
    return refusal.status()


def _request_id(context: grpc.aio.ServicerContext) -> str:
    """The client's request id (`x-request-id`: up to 64 letters, digits, `-`, `_`, `.`)
    or a new one; anything else a client sends there is replaced, never logged as sent."""
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and value:
            text = str(value)[:64]
            if REQUEST_ID.fullmatch(text):
                return text
    return new_request_id()


class _Call:
    """One call being handled: its request id and RPC bound to the logs, its outcome
    counted, a failure logged and turned into `status` (the status to end the call with;
    None while it has not failed)."""

    def __init__(
        self, name: str, request: Any, context: grpc.aio.ServicerContext, *, timed: bool
    ) -> None:
        self.name = name
        self.timed = timed  # observe the latency of the whole call (unary calls)
        self.started = time.perf_counter()
        self.status: grpc.Status | None = None
        self.request_id = _request_id(context)
        self._bound = structlog.contextvars.bound_contextvars(
            request_id=self.request_id, rpc=name, game_id=_game_id(request), player_id=""
        )

    def seconds(self) -> float:
        """Time since the call began."""
        return time.perf_counter() - self.started

    def __enter__(self) -> _Call:
        self._bound.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: Any
    ) -> bool:
        code = "OK"
        if isinstance(error, (asyncio.CancelledError, GeneratorExit)):
            code = "CANCELLED"
        elif isinstance(error, Exception):
            self.status = _failed(self.name, error, self.request_id, self.started)
            code = self.status.code.name
        RPCS.labels(self.name, code).inc()
        if self.timed:
            LATENCY.labels(self.name).observe(self.seconds())
        self._bound.__exit__(kind, error, trace)
        return self.status is not None  # a failure ends here: the handler aborts with it


class Traffic:
    """The unary calls a servicer is handling now (counted by `unary` on a servicer with a
    `traffic`): work that may wait, a burst of watch openings, gives way to them
    (`watch.Hub.reading`)."""

    def __init__(self) -> None:
        self.calls = 0


Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
StreamMethod = TypeVar("StreamMethod", bound=Callable[..., AsyncIterator[Any]])


def unary(name: str) -> Callable[[Method], Method]:
    """Wrap an async unary servicer method with request ids, logs, metrics and errors."""

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        async def handler(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
            traffic: Traffic | None = getattr(self, "traffic", None)
            if traffic is not None:
                traffic.calls += 1
            try:
                with _Call(name, request, context, timed=True) as call:
                    check_decoded(request)
                    response = await method(self, request, context)
                    log.debug("rpc", duration_ms=elapsed_ms(call.started))
            finally:
                if traffic is not None:
                    traffic.calls -= 1
            if call.status is not None:
                await context.abort(
                    call.status.code, call.status.details, call.status.trailing_metadata
                )
            return response

        return handler  # type: ignore[return-value]

    return wrap


def stream(name: str) -> Callable[[StreamMethod], StreamMethod]:
    """Wrap an async-generator servicer method the same way (errors end the stream)."""

    def wrap(method: StreamMethod) -> StreamMethod:
        @functools.wraps(method)
        async def handler(
            self: Any, request: Any, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            with _Call(name, request, context, timed=False) as call:
                check_decoded(request)
                first = True
                async for item in method(self, request, context):
                    if first:  # streams: the time to the first message
                        LATENCY.labels(name).observe(call.seconds())
                        first = False
                    yield item
                log.debug("stream ended", duration_ms=elapsed_ms(call.started))
            if call.status is not None:
                await context.abort(
                    call.status.code, call.status.details, call.status.trailing_metadata
                )

        return handler  # type: ignore[return-value]

    return wrap


def bind_player(player_id: str) -> None:
    """Add the caller's player id to the logs of the current call."""
    structlog.contextvars.bind_contextvars(player_id=player_id)
