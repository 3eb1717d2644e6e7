"""One refusal for both services: a status code, a reason of the contract, a message, where.

Code anywhere in the engine or the matchmaker raises `Refusal` (or one of the helpers
below); each service's one mapper (its `handling.py`) sends it as a rich status
(`Refusal.status()`). `Reason` is the contract's `wargame.v1.ErrorReason`, value for value,
without the `ERROR_REASON_` prefix (`tests/wargame/test_refusal.py` keeps the two equal),
so a misspelt reason fails the type check instead of a call in production. The engine's
rules keep their own domain error (`RuleError` with its `Reason`, free of gRPC), turned
into a `Refusal` once, at the engine's edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

import grpc

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


class Reason(StrEnum):
    """Why a request was refused: a `wargame.v1.ErrorReason` name without its prefix."""

    # --- the rules (below 100; `engine_service.rules.errors.Reason` names them) ---------
    UNKNOWN_GAME = "UNKNOWN_GAME"
    ILLEGAL_ACTION = "ILLEGAL_ACTION"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    GAME_OVER = "GAME_OVER"
    UNKNOWN_CELL = "UNKNOWN_CELL"
    NOTATION_INVALID = "NOTATION_INVALID"
    NOTATION_AMBIGUOUS = "NOTATION_AMBIGUOUS"
    UNKNOWN_OPTION = "UNKNOWN_OPTION"
    INVALID_OPTION_VALUE = "INVALID_OPTION_VALUE"
    UNKNOWN_PRESET = "UNKNOWN_PRESET"
    INVALID_SETUP = "INVALID_SETUP"
    INVALID_STATE = "INVALID_STATE"
    INVALID_RECORD = "INVALID_RECORD"
    DRAW_NOT_OFFERED = "DRAW_NOT_OFFERED"
    DRAW_BY_AGREEMENT_DISABLED = "DRAW_BY_AGREEMENT_DISABLED"
    NO_PIECE = "NO_PIECE"
    DESTINATION_OCCUPIED = "DESTINATION_OCCUPIED"
    PATH_BLOCKED = "PATH_BLOCKED"
    ILLEGAL_MOVE_GEOMETRY = "ILLEGAL_MOVE_GEOMETRY"
    TARGET_NOT_CAPTURABLE = "TARGET_NOT_CAPTURABLE"
    PASSING_NOT_ALLOWED = "PASSING_NOT_ALLOWED"
    CAPTURE_COMPULSORY = "CAPTURE_COMPULSORY"
    JUMP_CHAIN_INCOMPLETE = "JUMP_CHAIN_INCOMPLETE"
    PIECE_IMMOBILE = "PIECE_IMMOBILE"
    PLACEMENT_FORBIDDEN = "PLACEMENT_FORBIDDEN"
    NO_FLYING_MACHINE_LEFT = "NO_FLYING_MACHINE_LEFT"
    EXPOSED_TO_ARTILLERY = "EXPOSED_TO_ARTILLERY"
    UNCOVERS_FIGURE = "UNCOVERS_FIGURE"
    FORCED_REPLY = "FORCED_REPLY"
    CITADEL_DUTY = "CITADEL_DUTY"
    WAGON_UNDER_COVER = "WAGON_UNDER_COVER"
    CAPTURE_NOT_ALLOWED = "CAPTURE_NOT_ALLOWED"
    RIVER_CROSSING = "RIVER_CROSSING"
    UNKNOWN_UNIT = "UNKNOWN_UNIT"
    NOT_OWN_UNIT = "NOT_OWN_UNIT"
    UNIT_ALREADY_MOVED = "UNIT_ALREADY_MOVED"
    DESTINATION_OFF_BOARD = "DESTINATION_OFF_BOARD"
    HILL_ON_AND_OFF = "HILL_ON_AND_OFF"
    ATTACKER_ALREADY_ASSIGNED = "ATTACKER_ALREADY_ASSIGNED"
    TARGET_NOT_ENEMY = "TARGET_NOT_ENEMY"
    ATTACK_NOT_ADJACENT = "ATTACK_NOT_ADJACENT"
    ATTACK_DIRECTION_NOT_ALLOWED = "ATTACK_DIRECTION_NOT_ALLOWED"
    SUPPORTER_ALREADY_ASSIGNED = "SUPPORTER_ALREADY_ASSIGNED"
    SUPPORTER_UNDER_ATTACK = "SUPPORTER_UNDER_ATTACK"
    SUPPORTED_NOT_UNDER_ATTACK = "SUPPORTED_NOT_UNDER_ATTACK"
    SUPPORT_NOT_FRIENDLY = "SUPPORT_NOT_FRIENDLY"
    SUPPORT_SELF = "SUPPORT_SELF"
    SUPPORT_NOT_ADJACENT = "SUPPORT_NOT_ADJACENT"
    SUPPORT_DIRECTION_NOT_ALLOWED = "SUPPORT_DIRECTION_NOT_ALLOWED"
    ADVANCE_SQUARE_NOT_VACATED = "ADVANCE_SQUARE_NOT_VACATED"
    ADVANCE_DUPLICATE_SQUARE = "ADVANCE_DUPLICATE_SQUARE"
    ADVANCE_NOT_ATTACKER = "ADVANCE_NOT_ATTACKER"
    ADVANCE_AFTER_MOVE_FORBIDDEN = "ADVANCE_AFTER_MOVE_FORBIDDEN"
    ADVANCE_TERRAIN_FORBIDDEN = "ADVANCE_TERRAIN_FORBIDDEN"
    REDOUBT_NOT_ALLOWED = "REDOUBT_NOT_ALLOWED"
    DEPLOYMENT_INVALID = "DEPLOYMENT_INVALID"
    ALREADY_DEPLOYED = "ALREADY_DEPLOYED"
    SUPPORT_ACROSS_OBSTACLE = "SUPPORT_ACROSS_OBSTACLE"
    SEAL_KEY_UNAVAILABLE = "SEAL_KEY_UNAVAILABLE"
    # --- the services (100 and up) ---------------------------------------------------
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    TOO_MANY_ACTIONS = "TOO_MANY_ACTIONS"
    RECORD_TOO_LONG = "RECORD_TOO_LONG"
    MISSING_FIELD = "MISSING_FIELD"
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    DEADLINE_TOO_LONG = "DEADLINE_TOO_LONG"
    TOKEN_MISSING = "TOKEN_MISSING"
    TOKEN_INVALID = "TOKEN_INVALID"
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    NOT_A_PLAYER = "NOT_A_PLAYER"
    SEAT_TAKEN = "SEAT_TAKEN"
    GAME_NOT_OPEN = "GAME_NOT_OPEN"
    GAME_NOT_STARTED = "GAME_NOT_STARTED"
    VERSION_CONFLICT = "VERSION_CONFLICT"
    IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
    ALREADY_QUEUED = "ALREADY_QUEUED"
    RATE_LIMITED = "RATE_LIMITED"
    ENGINE_UNAVAILABLE = "ENGINE_UNAVAILABLE"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    TOO_MANY_GAMES = "TOO_MANY_GAMES"
    GAME_NOT_FINISHED = "GAME_NOT_FINISHED"
    TOO_MANY_WATCHERS = "TOO_MANY_WATCHERS"
    ABORT_TOO_LATE = "ABORT_TOO_LATE"
    UNDO_NOT_ALLOWED = "UNDO_NOT_ALLOWED"
    CHAT_TOO_LONG = "CHAT_TOO_LONG"
    ENGINE_BUSY = "ENGINE_BUSY"
    RESPONSE_TOO_LARGE = "RESPONSE_TOO_LARGE"


class Refusal(Exception):  # noqa: N818 (a refusal is an answer, not a failure)
    """A refused request: status code, reason, a message for people, and where.

    `field` names the one request field at fault (`fields` several, with their own
    descriptions); `metadata` travels in the ErrorInfo; `retry_after` (seconds) becomes a
    google.rpc.RetryInfo. Every text is kept within `MESSAGE_BYTES` (quote client input
    with `quoted`), so the status always fits gRPC's metadata limit.
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
    ) -> None:
        message = bounded(message)
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
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
