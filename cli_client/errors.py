"""Every failure the client reports, as one readable line.

`ClientError` carries a finished sentence for the user; `explain` turns a failed gRPC call
into one, reading the `google.rpc.ErrorInfo` reason the services attach (see
`proto/wargame/v1/errors.proto`). Nothing here knows a game rule: illegal actions are
reported with the engine's own words.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc

from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import errors_pb2

START_HINT = "start it with `make run`"

# Reasons that mean "the action breaks a rule"; the engine's message names the rule.
_NOTATION = frozenset({"NOTATION_INVALID", "NOTATION_AMBIGUOUS", "UNKNOWN_CELL"})
_SERVICE_REASONS_START = 100


class ClientError(Exception):
    """A problem to show the user as one line (no traceback).

    `details` is the refusal's ErrorInfo metadata (errors.proto): the rule's section
    ("rule"), what is legal instead ("alternatives"), how actions are written ("accepted").
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        code: grpc.StatusCode | None = None,
        details: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(one_line(message))
        self.reason = reason
        self.code = code
        self.details = dict(details or {})

    @property
    def message(self) -> str:
        """The line to show."""
        return str(self.args[0])


class UnreachableError(ClientError):
    """A service could not be reached at all (nothing answered)."""


def one_line(text: str) -> str:
    """Collapse whitespace and newlines so a message fits on one line."""
    return " ".join(text.split())


def _prefixed(prefix: str, message: str) -> str:
    """`prefix: message`, unless the message already starts with the prefix's words."""
    if not message:
        return prefix
    if message.lower().startswith(prefix.lower()):
        return message
    return f"{prefix}: {message}"


def is_rules_reason(reason: str) -> bool:
    """Whether a reason says the action breaks a rule or cannot be read (not a service issue)."""
    return _is_rules_reason(reason)


def _is_rules_reason(reason: str) -> bool:
    try:
        number = errors_pb2.ErrorReason.Value(f"ERROR_REASON_{reason}")
    except ValueError:
        return False
    return 0 < number < _SERVICE_REASONS_START


def transport_problem(message: str, service: str, address: str) -> str:
    """What went wrong with TLS when a connection failed ("" when nothing did), from gRPC's
    own words for a failed handshake."""
    at = f"the {service} at {address}"
    if "Hostname Verification" in message:
        return (
            f"the certificate of {at} is for another name: connect by the name it carries, "
            "or give that name with --tls-server-name"
        )
    if "CERTIFICATE_VERIFY_FAILED" in message:
        why = message.rpartition("CERTIFICATE_VERIFY_FAILED:")[2].removesuffix(": OK").strip()
        return (
            f"cannot trust the certificate of {at} ({why or 'not verified'}); "
            "for a private CA, give its certificate with --tls-ca-file"
        )
    if "WRONG_VERSION_NUMBER" in message or "handshake failed" in message.lower():
        return f"{at} does not speak TLS as asked: try --plaintext (and no grpcs://)"
    if message.startswith("failed to connect to all addresses") and message.endswith(
        "Socket closed"
    ):  # closed by the server before HTTP/2 began: a TLS-only server, or mutual TLS
        return (
            f"{at} closed the connection at once: it may speak TLS only (use --tls) or want "
            "a client certificate"
        )
    return ""


def describe(details: ErrorDetails, service: str, address: str) -> str:
    """The one line for a failed call to `service` ("matchmaker", "rules engine") at `address`."""
    code, reason, message = details.code, details.reason, one_line(details.message)
    if code == grpc.StatusCode.UNAVAILABLE and not reason:
        return transport_problem(message, service, address) or (
            f"cannot reach the {service} at {address} — {START_HINT}"
        )
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"the {service} at {address} did not answer in time; try again"
    if reason == "ENGINE_UNAVAILABLE":
        return "the matchmaker cannot reach the rules engine right now; try again shortly"
    if reason == "STORE_UNAVAILABLE":
        return "the matchmaker cannot reach its session store (Redis) right now; try again shortly"
    if reason == "NOT_YOUR_TURN":
        return _prefixed("not your turn", message)
    if reason == "GAME_OVER":
        return _prefixed("the game is over", message)
    if reason == "WRONG_PHASE":
        return _prefixed("not now", message)
    if reason in _NOTATION:
        return _prefixed("not understood", message)
    if reason == "UNKNOWN_GAME":
        return f"{message} (see `wargame games`)"
    if reason in {"UNKNOWN_OPTION", "INVALID_OPTION_VALUE", "UNKNOWN_PRESET"}:
        return f"{message} (see `wargame games`)"
    if reason == "INVALID_SETUP":
        return _prefixed("bad set-up", message)
    if reason in {"TOKEN_MISSING", "TOKEN_INVALID"}:
        return "the matchmaker does not know your saved identity; run the command again to register"
    if reason == "SESSION_NOT_FOUND":
        return message or "no such game"
    if reason == "VERSION_CONFLICT":
        return "the game moved on before your action arrived; look at the board and try again"
    if reason == "RATE_LIMITED":
        return "too many requests; wait a moment and try again"
    if reason == "INTERNAL_ERROR" or code == grpc.StatusCode.INTERNAL:
        return _prefixed(f"the {service} failed", message or "internal error")
    if _is_rules_reason(reason):
        return _prefixed("illegal", message)
    if message:
        return message
    return f"the {service} at {address} refused the request ({code.name.lower()})"


def explain(error: grpc.RpcError, service: str, address: str) -> ClientError:
    """A ClientError (an `UnreachableError` one when nothing answered) for a failed call."""
    details = error_details(error)
    text = describe(details, service, address)
    if details.code == grpc.StatusCode.UNAVAILABLE and not details.reason:
        return UnreachableError(text, code=details.code)
    return ClientError(text, reason=details.reason, code=details.code, details=details.metadata)
