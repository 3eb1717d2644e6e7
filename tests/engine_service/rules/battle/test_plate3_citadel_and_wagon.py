"""Specification 12.8 (Plate 3 fig. 1: taking the Wagon), 12.9 (Plate 3 fig. 2: taking the
Citadel) and 12.10 (constructed cases)."""

from __future__ import annotations

import pytest

from engine_service.rules.base import OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.book import CITADEL_FIGURE, CITADEL_TAKERS, WAGON_FIGURE
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    exposed_squares,
    is_geometric,
    is_legal,
    moved_pieces,
    mv,
    play,
    position,
)

# --- 12.8 Plate 3 fig. 1 -----------------------------------------------------------------


def test_12_8_1_nobody_exposed_as_drawn() -> None:
    board = position(WAGON_FIGURE)
    assert exposed_squares(board, "attacker") == exposed_squares(board, "defender") == set()


def test_12_8_2_wagon_under_cover_of_artillery_two_squares_away() -> None:
    board = position(WAGON_FIGURE)
    assert is_geometric(board, "129x127")
    assert not is_legal(board, "129x127")


def test_12_8_3_artillery_95_to_99_checks_the_cavalry_on_102() -> None:
    board = play(position(WAGON_FIGURE), "95-99")
    assert exposed_squares(board, "attacker") == {102}  # next to both batteries
    assert moved_pieces(board) == {102}


def test_12_8_4_cavalry_to_111_then_99x106_and_the_retakes() -> None:
    board = play(position(WAGON_FIGURE), "95-99", "102-111")
    assert is_legal(board, "99x106")
    after = play(board, "99x106")
    for retake in ("111x106", "101x106", "110x106"):
        assert is_legal(after, retake)


def test_12_8_5_line_played_ends_with_the_wagon_taken() -> None:
    # The Citadel is added far away (19) so that the game is live (9.1).
    full = WAGON_FIGURE.replace("defender: ", "defender: T19 ")
    board = play(position(full), "95-99", "102-111", "99x106", "111x106", "113x110")
    assert is_legal(board, "106x110") and is_legal(board, "101x110")
    board = play(board, "106x110")
    assert is_legal(board, "129x127")
    state, events = RULES.apply(board, mv("129x127"))
    outcome = RULES.outcome(state)
    assert outcome is not None and outcome.winner == "defender"
    assert outcome.reason is OutcomeReason.WAGON_CAPTURED
    assert events[-1].kind.value == "GAME_OVER"


# --- 12.9 Plate 3 fig. 2 -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("square", "may", "may_not"),
    [(square, may, may_not) for square, (may, may_not) in CITADEL_TAKERS.items()],
)
def test_12_9_1_who_may_take_the_citadel(square: int, may: str, may_not: str) -> None:
    for kind in may:
        board = position(f"attacker to move; attacker: {kind}{square}; {CITADEL_FIGURE}")
        assert square not in exposed_squares(board, "attacker")
        assert is_legal(board, f"{square}x19"), kind
    for kind in may_not:
        board = position(f"attacker to move; attacker: {kind}{square}; {CITADEL_FIGURE}")
        assert not is_geometric(board, f"{square}x19"), kind


def test_12_9_1_commanded_squares_around_the_citadel() -> None:
    for square in (3, 20, 10, 27, 26):
        board = position(f"attacker to move; attacker: C{square}; {CITADEL_FIGURE}")
        assert exposed_squares(board, "attacker") == {square}


@pytest.mark.parametrize("battery", [18, 34])
@pytest.mark.parametrize("cavalry", [40, 33])
def test_12_9_2_battery_to_26_checks_the_cavalry(battery: int, cavalry: int) -> None:
    board = position(f"defender to move; attacker: C{cavalry} I127; {CITADEL_FIGURE}")
    assert is_legal(board, f"{battery}-26")
    after = play(board, f"{battery}-26")
    assert exposed_squares(after, "attacker") == {cavalry}
    assert not is_legal(after, f"{cavalry}x19")
    assert not is_geometric(after, f"{cavalry}x19")  # 26 now blocks its line
    assert moved_pieces(after) == {cavalry}
    for move in analysis(after).legal:
        assert (
            exposed_squares(play(after, f"{cavalry}-{move.destination + 1}"), "attacker") == set()
        )


def test_12_9_3_passing_the_commanded_square_34() -> None:
    board = play(position(f"defender to move; attacker: I33; {CITADEL_FIGURE}"), "34-26")
    assert is_legal(board, "33-35")
    board = play(board, "33-35", "18-9")
    assert is_legal(board, "35x19")


def test_12_9_4_passing_18_and_taking_the_covered_citadel() -> None:
    board = play(position(f"defender to move; attacker: I33; {CITADEL_FIGURE}"), "18-26")
    assert is_legal(board, "33-2")
    board = play(board, "33-2", "34-42")
    assert 19 in exposed_squares(
        position("attacker to move; attacker: I19; defender: A26"), "attacker"
    )
    assert is_legal(board, "2x19")
    covered = position("attacker to move; attacker: I2; defender: T19 A26")
    assert is_legal(covered, "2x19")


# --- 12.10 constructed cases ---------------------------------------------------------------
def test_12_10_1_every_legal_move_discharges_the_citadel_duty() -> None:
    board = position("defender to move; attacker: A33 I125; defender: T19 C38 I7")
    found = analysis(board)
    assert found.citadel_commanders == [32]  # cell of square 33
    assert found.legal and not found.lapsed
    assert is_legal(board, "38-35")
    assert not is_legal(board, "38-37")  # a move that does not answer
    assert not is_legal(board, "7-8")
    live = position("defender to move; attacker: A33 I125 W134; defender: T19 C38 I7")
    with pytest.raises(RuleError) as error:
        RULES.apply(live, mv("7-16"))
    assert error.value.reason is Reason.CITADEL_DUTY


def test_12_10_2_a_side_with_only_artillery_has_lost() -> None:
    board = position("defender to move; attacker: I18 W17 A27; defender: A9 T19")
    assert not is_geometric(board, "9x18") and not is_geometric(board, "9x17")
    attacker = position("attacker to move; attacker: I18 W17 A27; defender: A9 T19")
    assert not is_geometric(attacker, "27x19")
    for state in (board, attacker):
        outcome = RULES.outcome(state)
        assert outcome is not None and outcome.winner == "attacker"
        assert outcome.reason is OutcomeReason.ONLY_ARTILLERY_LEFT
        assert RULES.legal_actions(state) == []


def test_12_10_3_the_starting_position_has_no_winner() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    assert RULES.outcome(start) is None
    assert RULES.to_act(start) == ("attacker",)
