"""The Connect protocol (connectrpc.com/docs/protocol), the parts the web service serves.

Unary calls are a POST of one message (`application/json` or `application/proto`) answered
by one message, or by an error: an HTTP status and a JSON body `{code, message, details}`.
Server-streaming calls (`application/connect+json` / `+proto`) send one enveloped message
and receive enveloped messages, the last one (flag END_STREAM) a JSON object holding the
error, if any. An envelope is a flags byte, a 4-byte big-endian length and the message.

Errors keep the gRPC status's details (`google.rpc.ErrorInfo` with the contract's reason,
`BadRequest`, `RetryInfo`): each as `{type, value}` (the message's bytes in unpadded
base64), with `debug` holding it as JSON so a page reads the reason without protobuf.
"""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from wargame.runtime.refusal import Refusal

END_STREAM = 0x02
COMPRESSED = 0x01
ENVELOPE = struct.Struct(">BI")

# Content types: (serialization, streaming).
CONTENT_TYPES: dict[str, tuple[str, bool]] = {
    "application/json": ("json", False),
    "application/proto": ("proto", False),
    "application/connect+json": ("json", True),
    "application/connect+proto": ("proto", True),
}

# gRPC status codes as Connect names them, and the HTTP status of a unary error.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}

# The details a page can read as JSON (`debug`).
KNOWN_DETAILS: dict[str, type[Message]] = {
    message.DESCRIPTOR.full_name: message
    for message in (
        error_details_pb2.ErrorInfo,
        error_details_pb2.BadRequest,
        error_details_pb2.RetryInfo,
    )
}


def code_name(code: grpc.StatusCode) -> str:
    """The Connect name of a status code: "invalid_argument"."""
    return str(code.name).lower()


@dataclass(frozen=True)
class ConnectError(Exception):
    """A call's failure as Connect sends it."""

    code: grpc.StatusCode
    message: str
    details: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_status(cls, status: status_pb2.Status) -> ConnectError:
        """The error of a `google.rpc.Status` (what a refusal carries), details kept."""
        code = next((c for c in grpc.StatusCode if c.value[0] == status.code), None)
        details = []
        for packed in status.details:
            name = packed.TypeName()
            detail: dict[str, Any] = {"type": name, "value": unpadded(packed.value)}
            known = KNOWN_DETAILS.get(name)
            if known is not None:
                message = known()
                packed.Unpack(message)
                detail["debug"] = json_format.MessageToDict(message)
            details.append(detail)
        return cls(code or grpc.StatusCode.UNKNOWN, status.message, tuple(details))

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> ConnectError:
        """The error of a failed gRPC call: its rich status when it has one."""
        try:
            status = rpc_status.from_call(error)
        except (ValueError, AttributeError, TypeError):
            status = None
        if status is not None:
            return cls.from_status(status)
        code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
        message = error.details() if hasattr(error, "details") else ""
        return cls(code, message or "")

    @property
    def http_status(self) -> int:
        """The HTTP status of this error as a unary call's answer."""
        return HTTP_STATUS.get(self.code, 500)

    def json(self) -> dict[str, Any]:
        """The error as a JSON object."""
        body: dict[str, Any] = {"code": code_name(self.code), "message": self.message}
        if self.details:
            body["details"] = list(self.details)
        return body


def unpadded(data: bytes) -> str:
    """Base64 without padding, as Connect sends detail values."""
    return base64.b64encode(data).decode("ascii").rstrip("=")


def decode(data: bytes, serialization: str, message: Message) -> Message:
    """Fill `message` from a request body; ValueError saying why it is not one."""
    try:
        if serialization == "json":
            json_format.Parse(data.decode("utf-8") or "{}", message, ignore_unknown_fields=True)
        else:
            message.ParseFromString(data)
    except Exception as error:  # ParseError, DecodeError, bad UTF-8, absurd nesting
        raise ValueError(
            f"the request is not a valid {message.DESCRIPTOR.full_name}: "
            f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
        ) from None
    return message


def encode(message: Message, serialization: str) -> bytes:
    """A message as a body in `serialization`."""
    if serialization == "json":
        text = json_format.MessageToJson(message, indent=None, ensure_ascii=False)
        return text.encode("utf-8")
    return message.SerializeToString()


def envelope(data: bytes, flags: int = 0) -> bytes:
    """One enveloped message."""
    return ENVELOPE.pack(flags, len(data)) + data


def end_of_stream(error: ConnectError | None) -> bytes:
    """The last envelope of a stream: its error, if it failed."""
    body: dict[str, Any] = {} if error is None else {"error": error.json()}
    return envelope(json.dumps(body).encode("utf-8"), END_STREAM)


def unenvelope(data: bytes) -> bytes:
    """The one message of an enveloped request body; ValueError when it is not one."""
    if len(data) < ENVELOPE.size:
        raise ValueError("the request is not an enveloped message")
    flags, length = ENVELOPE.unpack_from(data)
    if flags & COMPRESSED:
        raise ValueError("compressed requests are not accepted")
    if len(data) != ENVELOPE.size + length:
        raise ValueError("the request's envelope length does not match its body")
    return data[ENVELOPE.size :]


def refused(refusal: Refusal) -> ConnectError:
    """The error of a refusal the web service makes itself (same reasons as the services)."""
    trailing = dict(refusal.status().trailing_metadata)
    return ConnectError.from_status(status_pb2.Status.FromString(trailing[STATUS_DETAILS]))


STATUS_DETAILS = "grpc-status-details-bin"
