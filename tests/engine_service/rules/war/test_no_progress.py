"""Ruling A25, the no-progress limit (`no_progress_limit`): the game is drawn after N moves
by each side with no capture, Troop move or Flying-Machine placement. Each kind of progress
clears the count (and the repetition history); anything else adds one ply to it."""

from __future__ import annotations

import pytest

from engine_service.rules.base import OutcomeReason
from engine_service.rules.war import WarState

from .helpers import RULES, act, options, position

LIMIT = options(no_progress_limit="3")  # 3 moves by each side: 6 plies


def drawn(state: WarState) -> bool:
    outcome = RULES.outcome(state)
    return outcome is not None and outcome.reason is OutcomeReason.NO_PROGRESS


def test_the_game_is_drawn_at_the_limit_and_not_a_ply_before() -> None:
    state = position("Ka1 kj10 Tb5", opts=LIMIT)
    for ply, text in enumerate(("Ka1-a2", "Kj10-j9", "Ka2-a3", "Kj9-j8", "Ka3-a4"), start=1):
        state = act(state, text)
        assert (state.quiet, drawn(state)) == (ply, False)
        assert RULES.legal_actions(state)
    state = act(state, "Kj8-j7")
    assert (state.quiet, drawn(state)) == (6, True)
    assert not RULES.legal_actions(state)
    outcome = RULES.outcome(state)
    assert outcome is not None and outcome.winner is None
    assert outcome.message == (
        "drawn: 3 moves by each side without a capture, Troop move or Flying-Machine placement"
    )


def test_without_a_limit_the_count_goes_on_and_never_draws() -> None:
    state = position("Ka1 kj10", extra="quiet=5000")
    state = act(state, "Ka1-a2")
    assert state.quiet == 5001 and RULES.outcome(state) is None


@pytest.mark.parametrize(
    ("men", "reserves", "extra_options", "progress"),
    [
        ("Ka1 kj10 Tb5", "-:-", {}, "b5-b6"),  # a Troop move
        ("Ka1 kj10 Md4 td8", "-:-", {}, "Md4xd8"),  # a capture by another man
        ("Ka1 kj10", "F:f", {}, "F@e5"),  # a placement that is the whole turn
        ("Ka1 kj10", "F:f", {"compulsion": "huff"}, "F@e5"),  # ... under the general rules
    ],
)
def test_each_kind_of_progress_clears_the_count_and_the_repetition_history(
    men: str, reserves: str, extra_options: dict[str, str], progress: str
) -> None:
    opts = options(no_progress_limit="3", **extra_options)
    state = position(men, reserves=reserves, extra="quiet=4", opts=opts)
    quiet = act(state, "Ka1-a2")  # not progress: one more ply, one more position
    assert quiet.quiet == 5 and len(quiet.history) == len(state.history) + 1
    quiet = act(quiet, "Kj10-j9")
    assert drawn(quiet)  # the sixth quiet ply, had South not made progress first
    after = act(act(state, progress), "Kj10-j9")
    assert (after.quiet, drawn(after), len(after.history)) == (1, False, 2)


def test_a_huff_is_progress() -> None:
    # A13 (compulsion = huff): South leaves its capture e5:c7, North huffs the offender.
    opts = options(no_progress_limit="3", compulsion="huff")
    state = position("Te5 Ka1 td6 kj10", extra="quiet=4", opts=opts, side="S")
    state = act(state, "Ka1-a2")
    assert state.quiet == 5
    huffed = act(state, "huff e5 Kj10-j9")
    assert (huffed.quiet, drawn(huffed)) == (0, False)
