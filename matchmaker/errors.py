"""The matchmaker's refusals: the shared `Refusal` (wargame/runtime/refusal.py) and the
refusals only the matchmaker makes, each written once (seating's among them: seats taken
or kept, games not open or not finished, invite codes unknown).

Code anywhere in the matchmaker raises a `Refusal`; `handling.py` turns it into a rich gRPC
status.
"""

from __future__ import annotations

from collections.abc import Sequence

from wargame.runtime import refusal
from wargame.runtime.refusal import Code, Reason, Refusal

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


def invite_not_found() -> Refusal:
    """No game has the invite code given."""
    return Refusal(
        Code.NOT_FOUND,
        Reason.SESSION_NOT_FOUND,
        "no game has this invite code (unknown or expired)",
        field="invite_code",
    )


def not_open(message: str) -> Refusal:
    """The game takes no (more) players, or no rematch: `message` says why."""
    return Refusal(Code.FAILED_PRECONDITION, Reason.GAME_NOT_OPEN, message)


def seat_taken(message: str, field: str = "") -> Refusal:
    """The seat asked for (or every seat) has a player."""
    return Refusal(Code.FAILED_PRECONDITION, Reason.SEAT_TAKEN, message, field=field)


def seat_kept(side: str) -> Refusal:
    """The seat is kept for the player a rematch was offered to."""
    message = f"the {side} seat is kept for the player offered this rematch"
    return Refusal(Code.PERMISSION_DENIED, Reason.SEAT_TAKEN, message, field="side")


def not_finished(game_id: str, *, closed: bool) -> Refusal:
    """A rematch of a game that has not finished (or was never played)."""
    return Refusal(
        Code.FAILED_PRECONDITION,
        Reason.GAME_NOT_FINISHED,
        f"game {game_id} "
        + ("was never played" if closed else "has not finished: play it out first"),
    )
