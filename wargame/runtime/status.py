"""Rich gRPC error statuses (google.rpc.Status with ErrorInfo and BadRequest), both ways.

Servers build a `grpc.Status` with `rich_status(...)` and abort with it; clients read it back
with `error_details(rpc_error)`. The ErrorInfo reason is a `wargame.v1.ErrorReason` name
without its prefix; its domain is "wargame.v1".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from wargame.v1 import errors_pb2

DOMAIN = "wargame.v1"
REASONS = frozenset(
    name.removeprefix("ERROR_REASON_") for name in errors_pb2.ErrorReason.DESCRIPTOR.values_by_name
) - {"UNSPECIFIED"}


class _Status(grpc.Status):  # type: ignore[misc]
    def __init__(
        self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, bytes], ...]
    ):
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata


def rich_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    fields: Iterable[tuple[str, str]] = (),
    metadata: Mapping[str, str] | None = None,
    retry_after: float | None = None,
) -> grpc.Status:
    """A status with ErrorInfo(reason) and a BadRequest entry per (field, description)."""
    if reason not in REASONS:
        raise ValueError(f"{reason!r} is not a wargame.v1.ErrorReason")
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=dict(metadata or {}))
    details = [info]
    violations = [
        error_details_pb2.BadRequest.FieldViolation(field=name, description=text)
        for name, text in fields
    ]
    packed: list[any_pb2.Any] = []
    for detail in details:
        holder = any_pb2.Any()
        holder.Pack(detail)
        packed.append(holder)
    if violations:
        holder = any_pb2.Any()
        holder.Pack(error_details_pb2.BadRequest(field_violations=violations))
        packed.append(holder)
    if retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(round(retry_after * 1e9))
        holder = any_pb2.Any()
        holder.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        packed.append(holder)
    proto = status_pb2.Status(code=code.value[0], message=message, details=packed)
    status = rpc_status.to_status(proto)
    return _Status(status.code, status.details, tuple(status.trailing_metadata))


@dataclass(frozen=True)
class ErrorDetails:
    """What a client learns from a failed call."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)
    retry_after: float | None = None  # seconds, from a google.rpc.RetryInfo detail


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """Unpack a failed call's status: code, message, ErrorInfo reason, BadRequest fields."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    reason = ""
    fields: list[tuple[str, str]] = []
    metadata: dict[str, str] = {}
    retry_after: float | None = None
    try:
        status = rpc_status.from_call(error)
    except (ValueError, AttributeError, TypeError):
        status = None
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                reason = info.reason
                metadata = dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                fields += [(v.field, v.description) for v in bad.field_violations]
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                retry_after = retry.retry_delay.ToNanoseconds() / 1e9
    return ErrorDetails(code, message or "", reason, tuple(fields), metadata, retry_after)
