"""The matchmaker's refusals: the shared `Refusal` (wargame/runtime/refusal.py) and the
refusals only the matchmaker makes, each written once.

Code anywhere in the matchmaker raises a `Refusal`; `handling.py` turns it into a rich gRPC
status.
"""

from __future__ import annotations

from collections.abc import Sequence

from wargame.runtime import refusal
from wargame.runtime.refusal import Code, Reason, Refusal

# The name this module gave the refusal before it was shared (kept for its importers).
ServiceError = Refusal
# Client text in a message: the one quoting both services share (a short prefix).
quoted = refusal.quoted


def game_not_found(game_id: str) -> Refusal:
    """No session has this id (or it has expired)."""
    return Refusal(
        Code.NOT_FOUND,
        Reason.SESSION_NOT_FOUND,
        f"no game {quoted(game_id)} (unknown or expired)",
        field="game_id",
    )


def not_seated(game_id: str) -> Refusal:
    """The caller acts in a game where it holds no seat."""
    return Refusal(
        Code.PERMISSION_DENIED, Reason.NOT_A_PLAYER, f"you hold no seat in game {game_id}"
    )


def version_conflict(expected: int, current: int) -> Refusal:
    """Someone else committed first."""
    return Refusal(
        Code.ABORTED,
        Reason.VERSION_CONFLICT,
        f"the game is at version {current}, not {expected}: fetch it and try again",
        field="expected_version",
        metadata={"current_version": str(current)},
    )


def out_of_time_in_play(fallen: Sequence[str], current: int) -> Refusal:
    """Players ran out of time in a game of more than two, which goes on without them: the
    caller's request was made against the state before, so it fetches the game again."""
    who = " and ".join(fallen)
    return Refusal(
        Code.ABORTED,
        Reason.VERSION_CONFLICT,
        f"{who} ran out of time and {'is' if len(fallen) == 1 else 'are'} out; the game goes "
        f"on at version {current}: fetch it and try again",
        field="expected_version",
        metadata={"current_version": str(current)},
    )


def kept_changing() -> Refusal:
    """A server-made change lost every retry to other commits."""
    return Refusal(Code.ABORTED, Reason.VERSION_CONFLICT, "the game kept changing; try again")
