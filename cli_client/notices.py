"""The matchmaker's notices as players read them: who left, who is back, who is about to
lose as abandoned, who offers a rematch.

A notice changes no version of the game (`WatchGameResponse.notice`). A player is not told
of its own comings and goings: a client that receives them is there, and the client says
itself when it loses its connection (see `updates.Updates`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cli_client.session import GameSession
from cli_client.terminal import countdown
from wargame.v1 import matchmaker_pb2


@dataclass(frozen=True)
class Said:
    """A notice's sentence, and whether it is a warning (or only information)."""

    text: str
    warning: bool = False


def clock_time(seconds: float) -> str:
    """A moment as the player's local time of day ("14:05:09")."""
    return time.strftime("%H:%M:%S", time.localtime(seconds))


def words(
    notice: matchmaker_pb2.Notice, session: GameSession, now: float | None = None
) -> Said | None:
    """What to tell the player (or spectator) about a notice; None for nothing."""
    now = time.time() if now is None else now
    if session.your_side and notice.side == session.your_side:
        return None
    who = session.seat_name(notice.side)
    kind = notice.kind
    if kind == matchmaker_pb2.NOTICE_KIND_DISCONNECTED:
        return Said(f"{who} disconnected.", True)
    if kind == matchmaker_pb2.NOTICE_KIND_RECONNECTED:
        return Said(f"{who} reconnected.")
    if kind == matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING:
        deadline = notice.deadline.seconds + notice.deadline.nanos / 1e9
        left = countdown(deadline - now)
        return Said(
            f"{who} has left on their turn: they lose as abandoned in {left} "
            f"(at {clock_time(deadline)}) unless they come back.",
            True,
        )
    if kind == matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED:
        if not session.your_side:
            return Said(f"{who} offers a rematch.")
        return Said(f"{who} offers a rematch, sides swapped: `rematch` accepts, `quit` leaves.")
    return None
