"""How every Matchmaker call is handled: request id, logs, metrics, errors.

Each servicer method is wrapped once, by `unary(...)` or `stream(...)`: the wrapper binds
the request id, the RPC and the game id to the logs (the player id once the token is
checked), times the call, and maps failures to the architecture's error model:
a `Refusal` to its own status; Redis unreachable to UNAVAILABLE (STORE_UNAVAILABLE,
with a retry hint); anything else to INTERNAL with the request id, logged with its
traceback and never sent to the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import grpc
import structlog
from prometheus_client import Counter, Histogram
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from wargame.runtime.refusal import Reason, Refusal, internal, unavailable
from wargame.runtime.serving import check_decoded

log = structlog.get_logger(component="matchmaker")

RPCS = Counter(
    "wargame_matchmaker_rpcs_total", "Matchmaker calls by RPC and status code", ["rpc", "code"]
)
ERRORS = Counter(
    "wargame_matchmaker_errors_total", "Matchmaker refusals by RPC and reason", ["rpc", "reason"]
)
LATENCY = Histogram(
    "wargame_matchmaker_rpc_seconds",
    "Matchmaker unary call duration (streams: time to the first message)",
    ["rpc"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

RETRY_HINT = 1.0  # seconds; replaced by main.py from --retry-hint


def set_retry_hint(seconds: float) -> None:
    """The retry hint sent with UNAVAILABLE."""
    global RETRY_HINT
    RETRY_HINT = seconds


def _game_id(request: Any) -> str:
    value = getattr(request, "game_id", "")
    return value if isinstance(value, str) else ""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _refusal_of(error: BaseException, request_id: str) -> Refusal:
    """The refusal a failure is answered with."""
    if isinstance(error, Refusal):
        return error
    if isinstance(error, (RedisConnectionError, RedisTimeoutError)):
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
    fields = {"code": refusal.code.name, "reason": refusal.reason, "message": str(error)}
    if refusal.code == grpc.StatusCode.INTERNAL and not isinstance(error, Refusal):
        log.error("rpc failed", duration_ms=_ms(started), exc_info=error)
    elif refusal.code == grpc.StatusCode.UNAVAILABLE:
        log.warning("rpc unavailable", **fields, duration_ms=_ms(started))
    else:
        log.info("rpc refused", **fields, duration_ms=_ms(started))
    return refusal.status()


@contextlib.contextmanager
def _call(name: str, request: Any, context: grpc.aio.ServicerContext) -> Iterator[str]:
    """The call's request id (the client's, or a new one), bound to its logs with the RPC
    and the game."""
    request_id = ""
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and value:
            request_id = str(value)[:64]
            break
    request_id = request_id or uuid.uuid4().hex[:16]
    with structlog.contextvars.bound_contextvars(
        request_id=request_id, rpc=name, game_id=_game_id(request), player_id=""
    ):
        yield request_id


Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
StreamMethod = TypeVar("StreamMethod", bound=Callable[..., AsyncIterator[Any]])


def unary(name: str) -> Callable[[Method], Method]:
    """Wrap an async unary servicer method with request ids, logs, metrics and errors."""

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        async def handler(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            status: grpc.Status | None = None
            code = "OK"
            with _call(name, request, context) as request_id:
                try:
                    check_decoded(request)
                    response = await method(self, request, context)
                    log.debug("rpc", duration_ms=_ms(started))
                except asyncio.CancelledError:
                    code = "CANCELLED"
                    raise
                except Exception as error:
                    status = _failed(name, error, request_id, started)
                    code = status.code.name
                finally:
                    RPCS.labels(name, code).inc()
                    LATENCY.labels(name).observe(time.perf_counter() - started)
            if status is not None:
                await context.abort(status.code, status.details, status.trailing_metadata)
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
            started = time.perf_counter()
            first = True
            status: grpc.Status | None = None
            code = "OK"
            with _call(name, request, context) as request_id:
                try:
                    check_decoded(request)
                    async for item in method(self, request, context):
                        if first:
                            LATENCY.labels(name).observe(time.perf_counter() - started)
                            first = False
                        yield item
                    log.debug("stream ended", duration_ms=_ms(started))
                except (asyncio.CancelledError, GeneratorExit):
                    code = "CANCELLED"
                    raise
                except Exception as error:
                    status = _failed(name, error, request_id, started)
                    code = status.code.name
                finally:
                    RPCS.labels(name, code).inc()
            if status is not None:
                await context.abort(status.code, status.details, status.trailing_metadata)

        return handler  # type: ignore[return-value]

    return wrap


def bind_player(player_id: str) -> None:
    """Add the caller's player id to the logs of the current call."""
    structlog.contextvars.bind_contextvars(player_id=player_id)
