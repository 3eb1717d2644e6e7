"""One refusal for both services: a status code, a reason of the contract, a message, where.

Code anywhere in the engine or the matchmaker raises `Refusal` (or one of the helpers
below); each service's one mapper (its `handling.py`) sends it as a rich status
(`Refusal.status()`). `Reason` is the contract's `wargame.v1.ErrorReason`
(`wargame/reasons.py`, the one list). The engine's rules keep their own domain error
(`RuleError`, free of gRPC), turned into a `Refusal` once, at the engine's edge.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc

from wargame.reasons import Reason
from wargame.runtime.quoting import bounded, quoted
from wargame.runtime.status import rich_status

__all__ = [
    "Code",
    "Reason",
    "Refusal",
    "bounded",
    "internal",
    "malformed",
    "missing",
    "quoted",
    "unavailable",
]

Code = grpc.StatusCode


class Refusal(Exception):  # noqa: N818 (a refusal is an answer, not a failure)
    """A refused request: status code, reason, a message for people, and where.

    `field` names the one request field at fault (`fields` several, with their own
    descriptions); `metadata` travels in the ErrorInfo; `retry_after` (seconds) becomes a
    google.rpc.RetryInfo. Every text is kept within `MESSAGE_BYTES` (quote client input
    with `quoted`), so the status always fits gRPC's metadata limit. `logged` is what the
    logs say instead of the message, when the message tells its sender a secret of its own
    (the squares of a hidden array).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: Reason,
        message: str,
        *,
        field: str = "",
        fields: tuple[tuple[str, str], ...] = (),
        metadata: Mapping[str, str] | None = None,
        retry_after: float | None = None,
        logged: str | None = None,
    ) -> None:
        message = bounded(message)
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.logged = message if logged is None else bounded(logged)
        self.fields = tuple(
            (bounded(name, 200), bounded(text))
            for name, text in (fields or (((field, message),) if field else ()))
        )
        self.metadata = {bounded(k, 200): bounded(v) for k, v in (metadata or {}).items()}
        self.retry_after = retry_after

    def status(self) -> grpc.Status:
        """The rich gRPC status that carries this refusal to the client."""
        return rich_status(
            self.code,
            self.reason,
            self.message,
            fields=self.fields,
            metadata=self.metadata,
            retry_after=self.retry_after,
        )


def missing(field: str) -> Refusal:
    """A required field is empty."""
    return Refusal(Code.INVALID_ARGUMENT, Reason.MISSING_FIELD, f"{field} is required", field=field)


def malformed(field: str, message: str) -> Refusal:
    """A field holds a value of the wrong form."""
    return Refusal(Code.INVALID_ARGUMENT, Reason.MALFORMED_REQUEST, message, field=field)


def unavailable(reason: Reason, message: str, retry_after: float) -> Refusal:
    """A service the call needs cannot be reached: retry after a while."""
    millis = max(1, round(retry_after * 1000))
    return Refusal(
        Code.UNAVAILABLE,
        reason,
        f"{message}; retry in {retry_after:g} s",
        metadata={"retry_after_ms": str(millis)},
        retry_after=retry_after,
    )


def internal(request_id: str) -> Refusal:
    """A bug: the client learns only the request id its traceback is logged under."""
    return Refusal(
        Code.INTERNAL, Reason.INTERNAL_ERROR, f"internal error (request id {request_id})"
    )
