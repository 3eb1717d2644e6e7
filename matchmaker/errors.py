"""Refusals the matchmaker sends, as one exception type with a status code and a reason.

Code anywhere in the matchmaker raises `ServiceError` (or one of the helpers below);
`handling.py` turns it into a rich gRPC status. Reasons are `wargame.v1.ErrorReason` names
without their prefix.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc

Code = grpc.StatusCode


class ServiceError(Exception):
    """A refusal: status code, ErrorReason name, a message for people, and where."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        field: str = "",
        fields: tuple[tuple[str, str], ...] = (),
        metadata: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.fields = fields or (((field, message),) if field else ())
        self.metadata = dict(metadata or {})
        self.retry_after = retry_after  # seconds; sent as google.rpc.RetryInfo


def missing(field: str) -> ServiceError:
    """A required field is empty."""
    return ServiceError(Code.INVALID_ARGUMENT, "MISSING_FIELD", f"{field} is required", field=field)


def malformed(field: str, message: str) -> ServiceError:
    """A field holds a value of the wrong form."""
    return ServiceError(Code.INVALID_ARGUMENT, "MALFORMED_REQUEST", message, field=field)


def game_not_found(game_id: str) -> ServiceError:
    """No session has this id (or it has expired)."""
    return ServiceError(
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
        f"no game {game_id!r} (unknown or expired)",
        field="game_id",
    )


def unavailable(reason: str, message: str, retry_after: float) -> ServiceError:
    """The engine or Redis cannot be reached: retry after a while (safe with the same key)."""
    millis = max(1, round(retry_after * 1000))
    return ServiceError(
        Code.UNAVAILABLE,
        reason,
        f"{message}; retry in {retry_after:g} s",
        metadata={"retry_after_ms": str(millis)},
        retry_after=retry_after,
    )


def version_conflict(expected: int, current: int) -> ServiceError:
    """Someone else committed first."""
    return ServiceError(
        Code.ABORTED,
        "VERSION_CONFLICT",
        f"the game is at version {current}, not {expected}: fetch it and try again",
        field="expected_version",
        metadata={"current_version": str(current)},
    )
