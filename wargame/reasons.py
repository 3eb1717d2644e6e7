"""Every reason a request is refused for: the contract's ErrorReason, written once.

`Reason` is that enum value for value, without the `ERROR_REASON_` prefix
(`tests/wargame/test_refusal.py` keeps the two equal), so a misspelt reason fails the type
check instead of a call in production. The rules' reasons (below 100 in the contract) come
first and are the only ones the rules raise (`engine_service/rules/errors.py`, free of
gRPC); the services' own reasons (100 and up) follow, raised as a `Refusal`
(`wargame/runtime/refusal.py`).
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a request was refused: a `wargame.v1.ErrorReason` name without its prefix."""

    # --- the rules (below 100): any game -------------------------------------------
    UNKNOWN_GAME = "UNKNOWN_GAME"
    ILLEGAL_ACTION = "ILLEGAL_ACTION"  # not legal here; the message names the rule
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    GAME_OVER = "GAME_OVER"
    UNKNOWN_CELL = "UNKNOWN_CELL"
    NOTATION_INVALID = "NOTATION_INVALID"  # text that is no action of this game
    NOTATION_AMBIGUOUS = "NOTATION_AMBIGUOUS"  # text that fits several legal actions
    UNKNOWN_OPTION = "UNKNOWN_OPTION"
    INVALID_OPTION_VALUE = "INVALID_OPTION_VALUE"
    UNKNOWN_PRESET = "UNKNOWN_PRESET"
    INVALID_SETUP = "INVALID_SETUP"
    INVALID_STATE = "INVALID_STATE"  # a state that could not arise in play
    INVALID_RECORD = "INVALID_RECORD"
    DRAW_NOT_OFFERED = "DRAW_NOT_OFFERED"
    DRAW_BY_AGREEMENT_DISABLED = "DRAW_BY_AGREEMENT_DISABLED"
    NO_PIECE = "NO_PIECE"  # no piece of the mover on the named cell
    DESTINATION_OCCUPIED = "DESTINATION_OCCUPIED"
    PATH_BLOCKED = "PATH_BLOCKED"
    ILLEGAL_MOVE_GEOMETRY = "ILLEGAL_MOVE_GEOMETRY"
    TARGET_NOT_CAPTURABLE = "TARGET_NOT_CAPTURABLE"
    PASSING_NOT_ALLOWED = "PASSING_NOT_ALLOWED"

    # --- The Game of War ------------------------------------------------------------
    CAPTURE_COMPULSORY = "CAPTURE_COMPULSORY"  # 7.1: a member of J must be taken
    JUMP_CHAIN_INCOMPLETE = "JUMP_CHAIN_INCOMPLETE"  # 7.5: the chain must go on
    PIECE_IMMOBILE = "PIECE_IMMOBILE"  # 7.8: a Troop on its final rank
    PLACEMENT_FORBIDDEN = "PLACEMENT_FORBIDDEN"  # 8: Citadel, occupied cell, first turn
    NO_FLYING_MACHINE_LEFT = "NO_FLYING_MACHINE_LEFT"

    # --- The Game of Battle ---------------------------------------------------------
    EXPOSED_TO_ARTILLERY = "EXPOSED_TO_ARTILLERY"  # A.1: may not end in enemy range
    UNCOVERS_FIGURE = "UNCOVERS_FIGURE"  # A.2: may not leave a figure exposed
    FORCED_REPLY = "FORCED_REPLY"  # A.3: must relieve an exposed figure
    CITADEL_DUTY = "CITADEL_DUTY"  # 7: must answer a commanded Citadel
    WAGON_UNDER_COVER = "WAGON_UNDER_COVER"  # 8: the Wagon is covered by its battery
    CAPTURE_NOT_ALLOWED = "CAPTURE_NOT_ALLOWED"  # who may capture what (5)
    RIVER_CROSSING = "RIVER_CROSSING"  # 2.3, 2.4: the river cuts the line

    # --- Napoleonic Chess (section 11 of its specification) -------------------------
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
    DEPLOYMENT_INVALID = "DEPLOYMENT_INVALID"  # array breaks composition or rows
    ALREADY_DEPLOYED = "ALREADY_DEPLOYED"
    SUPPORT_ACROSS_OBSTACLE = "SUPPORT_ACROSS_OBSTACLE"  # 10.4: obstacles_block_support
    SEAL_KEY_UNAVAILABLE = "SEAL_KEY_UNAVAILABLE"  # 10.1 mode B: the engine has no seal key

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
