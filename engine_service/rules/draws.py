"""The two draw rules every game has: a repeated position, and too long without progress.

Each game keeps its own option names (part of the contract: `repetition_draw`, and
`no_progress_limit`, `no_capture_limit` or `no_elimination_limit`) and its own idea of
progress (a capture, a Troop move, an elimination); the counting and the wording of the
draw are the same everywhere. A limit of 0 means the rule is off.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine_service.rules.base import Outcome, OutcomeReason


def repeated(history: Sequence[int], times: int) -> bool:
    """Whether the last position key of `history` has occurred `times` times."""
    return bool(times) and bool(history) and history.count(history[-1]) >= times


def repetition_draw(history: Sequence[int], times: int) -> Outcome | None:
    """The draw by repetition, once the current position has occurred `times` times."""
    if not repeated(history, times):
        return None
    return Outcome(
        None,
        OutcomeReason.REPETITION,
        f"drawn by repetition: the same position has occurred {times} times",
    )


def no_progress_draw(count: int, limit: int, what: str) -> Outcome | None:
    """The draw after `limit` turns without progress; `what` says them ("moves by each side
    without a capture")."""
    if not limit or count < limit:
        return None
    return Outcome(None, OutcomeReason.NO_PROGRESS, f"drawn: {what}")
