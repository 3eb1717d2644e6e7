"""Section 9: how the game is won and drawn, and the events `apply` reports."""

from __future__ import annotations

import pytest

from engine_service.rules.base import Event, EventKind, OutcomeReason
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.state import BattleState
from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.helpers import RULES, mv, position


def attacker_wins_by(
    setup: str, move: str, reason: OutcomeReason
) -> tuple[BattleState, list[Event]]:
    """Play `move` from `setup`: the attacker must have won at once, by `reason`. The
    position and the events after."""
    after, events = RULES.apply(position(setup), mv(move))
    outcome = RULES.outcome(after)
    assert outcome is not None and outcome.winner == "attacker"
    assert outcome.reason is reason
    return after, events


def test_taking_the_citadel_wins_at_once() -> None:
    after, events = attacker_wins_by(
        "attacker to move; attacker: C22 W134; defender: T19 A18 A34 L45",
        "22x19",
        OutcomeReason.CITADEL_CAPTURED,
    )
    assert [e.kind for e in events] == [EventKind.CAPTURED, EventKind.GAME_OVER]
    assert "takes the Citadel on 19" in events[0].text
    assert RULES.legal_actions(after) == [] and RULES.to_act(after) == ()


def test_a_side_reduced_to_artillery_loses() -> None:
    _after, events = attacker_wins_by(
        "attacker to move; attacker: C52 W134 I127; defender: T19 A5 L45",
        "52x45",
        OutcomeReason.ONLY_ARTILLERY_LEFT,
    )
    assert events[-1].kind is EventKind.GAME_OVER and "Artillery" in events[-1].text


def test_both_sides_without_figures_the_side_to_move_loses() -> None:
    # forced_reply=lose_figure only: the mover took the last enemy figure first.
    board = position("defender to move; attacker: A5 W134; defender: T19 A9")
    outcome = RULES.outcome(board)
    assert outcome is not None and outcome.winner == "attacker"


def test_events_report_exposure_and_the_commanded_citadel() -> None:
    board = position("attacker to move; attacker: A60 A54 I127 W134; defender: I16 I26 A1 T19 L45")
    _, events = RULES.apply(board, mv("54-40"))
    kinds = [e.kind for e in events]
    assert kinds == [EventKind.MOVED, EventKind.EXPOSED, EventKind.EXPOSED]
    assert events[0].text == "Attacking Artillery moves from 54 to 40."
    assert {e.cells[0] for e in events[1:]} == {"16", "26"}
    assert "exposed to the attacker's Artillery on 40" in events[1].text
    board = position("attacker to move; attacker: A41 I127 W134; defender: T19 C38 L45")
    _, events = RULES.apply(board, mv("41-33"))
    assert EventKind.CITADEL_COMMANDED in [e.kind for e in events]
    assert "commands the Citadel on 19" in events[-1].text


def test_pieces_carry_exposed_and_commanded_tags() -> None:
    board = position("defender to move; attacker: A33 A40 I127 W134; defender: T19 I16 L45")
    tags = {p.cell: p.tags for p in RULES.pieces(board)}
    assert tags["16"] == ("exposed",) and tags["19"] == ("commanded",) and tags["45"] == ()


def test_a_finished_game_refuses_moves() -> None:
    board = position("attacker to move; attacker: C22 W134; defender: T19 L45")
    after, _ = RULES.apply(board, mv("22x19"))
    with pytest.raises(RuleError) as error:
        RULES.apply(after, Move(0, 1))
    assert error.value.reason is Reason.GAME_OVER
