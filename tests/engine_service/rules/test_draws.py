"""The draw rules written once: a repeated position and a limit without progress."""

from __future__ import annotations

from engine_service.rules.base import OutcomeReason
from engine_service.rules.draws import no_progress_draw, repeated, repetition_draw


def test_the_nth_occurrence_of_the_current_position_draws() -> None:
    assert not repeated([1, 2, 1], 3)
    assert repeated([1, 2, 1, 2, 1], 3)
    assert not repeated([1, 1, 1, 2], 3)  # only the current position counts
    assert not repeated([1, 1, 1], 0)  # 0: the rule is off
    assert not repeated([], 3)
    drawn = repetition_draw([7, 8, 7, 8, 7], 3)
    assert drawn is not None and drawn.winner is None
    assert drawn.reason is OutcomeReason.REPETITION
    assert drawn.message == "drawn by repetition: the same position has occurred 3 times"
    assert repetition_draw([7, 8, 7], 3) is None


def test_the_limit_without_progress_draws_when_reached() -> None:
    assert no_progress_draw(99, 100, "50 moves by each side without a capture") is None
    assert no_progress_draw(100, 0, "never") is None  # 0: the rule is off
    drawn = no_progress_draw(100, 100, "50 moves by each side without a capture")
    assert drawn is not None and drawn.reason is OutcomeReason.NO_PROGRESS
    assert drawn.message == "drawn: 50 moves by each side without a capture"
