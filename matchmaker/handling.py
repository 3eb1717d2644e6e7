"""How every Matchmaker call is handled: request id, logs, metrics, errors.

Each servicer method is wrapped once, by `unary(...)` or `stream(...)`: the wrapper binds
the request id, the RPC and the game id to the logs (the player id once the token is
checked), times the call, and maps failures to the architecture's error model:
`ServiceError` to its own status; Redis unreachable to UNAVAILABLE (STORE_UNAVAILABLE,
with a retry hint); anything else to INTERNAL with the request id, logged with its
traceback and never sent to the client.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog
from prometheus_client import Counter, Histogram
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from matchmaker.errors import ServiceError, unavailable
from wargame.runtime.serving import MalformedRequest
from wargame.runtime.status import rich_status

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


def _status_of(error: BaseException, request_id: str) -> tuple[grpc.Status, str]:
    """The gRPC status of a failure, and the reason for metrics."""
    if isinstance(error, ServiceError):
        service = error
    elif isinstance(error, (RedisConnectionError, RedisTimeoutError)):
        service = unavailable(
            "STORE_UNAVAILABLE", "the session store cannot be reached", RETRY_HINT
        )
    elif isinstance(error, RedisError) and "LOADING" in str(error):
        service = unavailable("STORE_UNAVAILABLE", "the session store is starting", RETRY_HINT)
    else:
        service = ServiceError(
            grpc.StatusCode.INTERNAL, "INTERNAL_ERROR", f"internal error (request id {request_id})"
        )
    status = rich_status(
        service.code,
        service.reason,
        service.message,
        fields=service.fields,
        metadata=service.metadata,
        retry_after=service.retry_after,
    )
    return status, service.reason


def _log_failure(error: BaseException, status: grpc.Status, reason: str, started: float) -> None:
    if status.code == grpc.StatusCode.INTERNAL and not isinstance(error, ServiceError):
        log.error("rpc failed", duration_ms=_ms(started), exc_info=error)
    elif status.code == grpc.StatusCode.UNAVAILABLE:
        log.warning(
            "rpc unavailable",
            code=status.code.name,
            reason=reason,
            message=str(error),
            duration_ms=_ms(started),
        )
    else:
        log.info(
            "rpc refused",
            code=status.code.name,
            reason=reason,
            message=str(error),
            duration_ms=_ms(started),
        )


def _check_decoded(request: Any) -> None:
    """Refuse a request whose bytes were not a valid message (see `register_service`)."""
    if isinstance(request, MalformedRequest):
        raise ServiceError(
            grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_REQUEST", request.describe()
        )


def _request_id(context: grpc.aio.ServicerContext) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and value:
            return str(value)[:64]
    return uuid.uuid4().hex[:16]


Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
StreamMethod = TypeVar("StreamMethod", bound=Callable[..., AsyncIterator[Any]])


def unary(name: str) -> Callable[[Method], Method]:
    """Wrap an async unary servicer method with request ids, logs, metrics and errors."""

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        async def handler(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
            request_id = _request_id(context)
            started = time.perf_counter()
            status: grpc.Status | None = None
            code = "OK"
            with structlog.contextvars.bound_contextvars(
                request_id=request_id, rpc=name, game_id=_game_id(request), player_id=""
            ):
                try:
                    _check_decoded(request)
                    response = await method(self, request, context)
                    log.debug("rpc", duration_ms=_ms(started))
                except asyncio.CancelledError:
                    code = "CANCELLED"
                    raise
                except Exception as error:
                    status, reason = _status_of(error, request_id)
                    code = status.code.name
                    ERRORS.labels(name, reason).inc()
                    _log_failure(error, status, reason, started)
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
            request_id = _request_id(context)
            started = time.perf_counter()
            first = True
            status: grpc.Status | None = None
            code = "OK"
            with structlog.contextvars.bound_contextvars(
                request_id=request_id, rpc=name, game_id=_game_id(request), player_id=""
            ):
                try:
                    _check_decoded(request)
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
                    status, reason = _status_of(error, request_id)
                    code = status.code.name
                    ERRORS.labels(name, reason).inc()
                    _log_failure(error, status, reason, started)
                finally:
                    RPCS.labels(name, code).inc()
            if status is not None:
                await context.abort(status.code, status.details, status.trailing_metadata)

        return handler  # type: ignore[return-value]

    return wrap


def bind_player(player_id: str) -> None:
    """Add the caller's player id to the logs of the current call."""
    structlog.contextvars.bind_contextvars(player_id=player_id)
