"""How every RulesEngine call is handled: request id, logs, metrics, errors, limits.

Each servicer method is wrapped once by `rpc(...)`: it binds a request id, the RPC and the
game to the logs, times the call, and maps failures to the error model of the architecture:
a `RuleError` becomes INVALID_ARGUMENT (NOT_FOUND for an unknown game), a `RequestError`
its own code (RESOURCE_EXHAUSTED beyond a limit), and any other exception INTERNAL with the
request id — logged with its traceback, never sent to the client.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import structlog
from prometheus_client import Counter, Histogram

from engine_service.rules.errors import Reason, RuleError
from wargame.runtime.serving import MalformedRequest
from wargame.runtime.status import rich_status

log = structlog.get_logger(component="engine")

RPCS = Counter(
    "wargame_engine_rpcs_total", "RulesEngine calls by RPC and status code", ["rpc", "code"]
)
ERRORS = Counter(
    "wargame_engine_errors_total", "RulesEngine refusals by RPC and ErrorReason", ["rpc", "reason"]
)
LATENCY = Histogram(
    "wargame_engine_rpc_seconds",
    "RulesEngine call duration",
    ["rpc"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


@dataclass(frozen=True)
class Limits:
    """Request limits; each is refused with a clear status when exceeded."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_actions: int = 512  # actions in one ApplyActions request
    max_record_actions: int = 20_000  # actions in one WriteRecord request (a whole game)
    max_record_bytes: int = 1024 * 1024
    max_suggest_seconds: float = 30.0


class RequestError(Exception):
    """A request refused before the rules see it: a missing field, a value beyond a limit."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str, field: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.field = field


def missing(field: str) -> RequestError:
    """The refusal of a request whose required field is empty."""
    return RequestError(
        grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD", f"{field} is required", field
    )


def beyond_limit(reason: str, message: str, field: str) -> RequestError:
    """The refusal of a request beyond a service limit."""
    return RequestError(grpc.StatusCode.RESOURCE_EXHAUSTED, reason, message, field)


def status_of(error: RuleError | RequestError) -> grpc.Status:
    """The rich gRPC status of a refusal."""
    fields = [(error.field, error.message)] if error.field else []
    if isinstance(error, RequestError):
        return rich_status(error.code, error.reason, error.message, fields=fields)
    code = (
        grpc.StatusCode.NOT_FOUND
        if error.reason is Reason.UNKNOWN_GAME
        else grpc.StatusCode.INVALID_ARGUMENT
    )
    metadata = {"index": str(error.index)} if error.index is not None else {}
    return rich_status(code, error.reason.value, error.message, fields=fields, metadata=metadata)


def _game_of(request: Any) -> str:
    for holder in (
        request,
        getattr(request, "state", None),
        getattr(request, "initial_state", None),
    ):
        game = getattr(holder, "game", None)
        if isinstance(game, str) and game:
            return game
    return ""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


Method = TypeVar("Method", bound=Callable[..., Any])


def rpc(name: str) -> Callable[[Method], Method]:
    """Wrap a servicer method with request ids, logs, metrics and the error model."""

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        def handler(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
            metadata = dict(context.invocation_metadata() or ())
            request_id = str(metadata.get("x-request-id") or uuid.uuid4().hex[:16])
            started = time.perf_counter()
            status: grpc.Status | None = None
            with structlog.contextvars.bound_contextvars(
                request_id=request_id, rpc=name, game=_game_of(request)
            ):
                try:
                    if isinstance(request, MalformedRequest):
                        raise RequestError(
                            grpc.StatusCode.INVALID_ARGUMENT,
                            "MALFORMED_REQUEST",
                            request.describe(),
                        )
                    response = method(self, request, context)
                except (RuleError, RequestError) as error:
                    status = status_of(error)
                    ERRORS.labels(name, str(error.reason)).inc()
                    log.info(
                        "rpc refused",
                        code=status.code.name,
                        reason=str(error.reason),
                        message=error.message,
                        duration_ms=_ms(started),
                    )
                except Exception:
                    log.exception("rpc failed", duration_ms=_ms(started))
                    status = rich_status(
                        grpc.StatusCode.INTERNAL,
                        "INTERNAL_ERROR",
                        f"internal error (request id {request_id})",
                    )
                    ERRORS.labels(name, "INTERNAL_ERROR").inc()
                else:
                    log.debug("rpc", duration_ms=_ms(started))
                finally:
                    RPCS.labels(name, status.code.name if status else "OK").inc()
                    LATENCY.labels(name).observe(time.perf_counter() - started)
            if status is not None:
                context.abort_with_status(status)
            return response

        return handler  # type: ignore[return-value]

    return wrap
