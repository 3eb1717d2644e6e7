"""How every RulesEngine call is handled: request id, logs, metrics, errors, limits.

Each servicer method is wrapped once by `rpc(...)`: its log lines name the request id, the
RPC and the game, it times and counts the call, and maps failures to the error model of the
architecture: a `RuleError` (the rules' own error, free of gRPC) becomes a `Refusal` here,
INVALID_ARGUMENT (NOT_FOUND for an unknown game); a `Refusal` raised by the servicer keeps
its own code (RESOURCE_EXHAUSTED beyond a limit); any other exception is INTERNAL with the
request id — logged with its traceback, never sent to the client. No response leaves larger
than the message limit: the client gets RESPONSE_TOO_LARGE instead of a transport error. A
call whose caller left while its work ran in the pool (`CallerGoneError`) ends as CANCELLED.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from prometheus_client import Counter

from engine_service.memo import memo
from engine_service.rules.errors import RuleError
from wargame.runtime.calls import Method, call_metrics, elapsed_ms, new_request_id
from wargame.runtime.refusal import Code, Reason, Refusal, internal
from wargame.runtime.serving import check_decoded

log = structlog.get_logger(component="engine")

METRICS = call_metrics(
    "engine",
    calls="RulesEngine calls by RPC and status code",
    refusals="RulesEngine refusals by RPC and ErrorReason",
    latency="RulesEngine call duration",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
RPCS, ERRORS, LATENCY = METRICS.rpcs, METRICS.errors, METRICS.latency
CUT_SHORT = Counter(
    "wargame_engine_suggestions_cut_short_total",
    "SuggestAction searches the wall-clock cap stopped before their CPU budget was spent"
    " (played below their level), by game and level",
    ["game", "level"],
)


@dataclass(frozen=True)
class Limits:
    """Request limits; each is refused with a clear status when exceeded."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_actions: int = 512  # actions in one ApplyActions request
    max_record_actions: int = 20_000  # actions in one WriteRecord request (a whole game)
    max_record_bytes: int = 1024 * 1024
    max_suggest_seconds: float = 30.0
    max_battle_seconds: float = 120.0  # ResolveBattle's time budget (Napoleonic 10.7)
    # A replay or record in the pool is stopped after this (its caller's deadline first):
    # a safety net, far beyond the longest record on a busy machine.
    max_work_seconds: float = 300.0
    max_ply: int = 1_000_000_000  # a state's ply beyond this is refused (counts stay in range)


class CallerGoneError(Exception):
    """The caller cancelled or its deadline passed, so its work was stopped."""


def beyond_limit(reason: Reason, message: str, field: str) -> Refusal:
    """The refusal of a request beyond a service limit."""
    return Refusal(Code.RESOURCE_EXHAUSTED, reason, message, field=field)


LEGAL_TEXT_BYTES = 500  # of the alternatives a refusal lists (the rest: ListLegalActions)


def refusal_of(error: RuleError) -> Refusal:
    """What the rules refused, as the service's refusal (the rules know no gRPC).

    The ErrorInfo metadata carries what the message leaves out (errors.proto): `rule`, the
    section of the game's rules; `alternatives`, what is legal instead (", "-separated
    notations); `accepted`, how actions are written; `index`, the failing item of a batch.
    """
    code = Code.NOT_FOUND if error.reason is Reason.UNKNOWN_GAME else Code.INVALID_ARGUMENT
    metadata = {
        "index": "" if error.index is None else str(error.index),
        "rule": error.rule,
        "alternatives": _listed(error.alternatives),
        "accepted": error.accepted,
    }
    return Refusal(
        code,
        error.reason,
        error.message,
        field=error.field or "",
        metadata={key: value for key, value in metadata.items() if value},
        logged=error.logged,
    )


def _listed(notations: tuple[str, ...]) -> str:
    """Whole notations, ", "-separated, as many as fit in LEGAL_TEXT_BYTES."""
    text = ""
    for notation in notations:
        longer = f"{text}, {notation}" if text else notation
        if len(longer.encode()) > LEGAL_TEXT_BYTES:
            break
        text = longer
    return text


def _check_size(response: Any, limits: Limits) -> None:
    size = response.ByteSize()
    if size > limits.max_message_bytes:
        raise beyond_limit(
            Reason.RESPONSE_TOO_LARGE,
            f"the answer would have {size} bytes; at most {limits.max_message_bytes}",
            "",
        )


class _Gone(grpc.Status):  # type: ignore[misc]
    code = grpc.StatusCode.CANCELLED
    details = "the call was cancelled; its work was stopped"
    trailing_metadata = ()


_CALLER_GONE = _Gone()


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


class _Call:
    """One call as its log lines name it; the request id made only when something needs it
    (a log line, an internal error, the pool), not on every call."""

    __slots__ = ("_id", "context", "request", "rpc")

    def __init__(self, rpc: str, request: Any, context: grpc.ServicerContext) -> None:
        self.rpc = rpc
        self.request = request
        self.context = context
        self._id = ""

    @property
    def request_id(self) -> str:
        """The caller's `x-request-id`, or a new random one."""
        if not self._id:
            metadata = dict(self.context.invocation_metadata() or ())
            self._id = str(metadata.get("x-request-id") or new_request_id())
        return self._id

    def fields(self) -> dict[str, str]:
        """What every log line of the call says about it."""
        return {"request_id": self.request_id, "rpc": self.rpc, "game": _game_of(self.request)}


_CALL: ContextVar[_Call | None] = ContextVar("engine_call", default=None)


def request_id() -> str:
    """The request id of the call this thread handles ("" outside a call)."""
    call = _CALL.get()
    return call.request_id if call is not None else ""


def _debugging() -> bool:
    """Whether the logs take debug lines (structlog's filtering loggers drop them at once;
    the lazy logger proxy would cost a logger per call to find out)."""
    return _logs_at(structlog.get_config()["wrapper_class"], logging.DEBUG)


def _informing() -> bool:
    """Whether the logs take info lines: a refusal's line (its request id made, its fields
    gathered) is made only then, so that refusals by the thousand cost little at
    `--log-level warning`."""
    return _logs_at(structlog.get_config()["wrapper_class"], logging.INFO)


@memo(16)  # keyed by the configured logger class (one per log level) and the level asked
def _logs_at(wrapper: type, level: int) -> bool:
    test = getattr(wrapper, "is_enabled_for", None)
    return bool(test(None, level)) if test else True


@memo(256)  # one per RPC and status code: the metric's children made once, not per call
def _counted(name: str, code: str) -> Any:
    return RPCS.labels(name, code)


@memo(64)  # one per RPC
def _timed(name: str) -> Any:
    return LATENCY.labels(name)


def rpc(name: str) -> Callable[[Method], Method]:
    """Wrap a servicer method with request ids, logs, metrics and the error model."""

    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        def handler(self: Any, request: Any, context: grpc.ServicerContext) -> Any:
            started = time.perf_counter()
            call = _Call(name, request, context)
            token = _CALL.set(call)
            status: grpc.Status | None = None
            try:
                check_decoded(request)
                response = method(self, request, context)
                _check_size(response, self.limits)
            except CallerGoneError:
                status = _CALLER_GONE
                log.info(
                    "caller left; its work was stopped",
                    **call.fields(),
                    duration_ms=elapsed_ms(started),
                )
            except (RuleError, Refusal) as error:
                refusal = refusal_of(error) if isinstance(error, RuleError) else error
                status = refusal.status()
                ERRORS.labels(name, refusal.reason).inc()
                if _informing():
                    log.info(
                        "rpc refused",
                        **call.fields(),
                        code=status.code.name,
                        reason=str(refusal.reason),
                        message=refusal.logged,
                        duration_ms=elapsed_ms(started),
                    )
            except Exception:
                log.exception("rpc failed", **call.fields(), duration_ms=elapsed_ms(started))
                status = internal(call.request_id).status()
                ERRORS.labels(name, Reason.INTERNAL_ERROR).inc()
            else:
                if _debugging():
                    log.debug("rpc", **call.fields(), duration_ms=elapsed_ms(started))
            finally:
                _CALL.reset(token)
                _counted(name, status.code.name if status else "OK").inc()
                _timed(name).observe(time.perf_counter() - started)
            if status is not None:
                context.abort_with_status(status)
            return response

        return handler  # type: ignore[return-value]

    return wrap
