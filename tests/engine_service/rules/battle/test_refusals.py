"""Why a move is refused: each refusal names the rule it breaks, in words and by section.

The rules engine answers an illegal move with the first rule it breaks (section 10's order:
whose piece, the pattern of 5, the river of 2.3 and 2.4, the path of 2.2, what may be taken
by 5, 7, 8, then the artillery rules of 6 and the duties A.3, 7, 8). A player reads only
that sentence, so the sentences and sections are pinned here in full.
"""

from __future__ import annotations

import pytest

from engine_service.rules.battle import BattleState, Move
from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    exposed_squares,
    legal,
    mv,
    position,
)


def refusal(state: BattleState, move: Move | str) -> tuple[Reason, str, str]:
    """The reason, sentence and section with which `apply` refuses `move`."""
    with pytest.raises(RuleError) as error:
        RULES.apply(state, mv(move) if isinstance(move, str) else move)
    return error.value.reason, error.value.message, error.value.rule


# A live position (both Citadel and Wagon on the board): the defender's pieces near home.
HOME = (
    "defender to move; attacker: W129 A126 C125 I113 L85 L103 L17; "
    "defender: T19 A9 C10 C49 I7 L39 L45"
)


def test_1_squares_are_numbered_1_to_139() -> None:
    state = position(HOME)
    for move in (Move(0, 139), Move(139, 0)):
        assert refusal(state, move) == (
            Reason.UNKNOWN_CELL,
            "there is no square 140 (1..139)",
            "",
        )


def test_7_the_citadel_never_moves() -> None:
    assert refusal(position(HOME), "19-27") == (
        Reason.ILLEGAL_MOVE_GEOMETRY,
        "the Citadel never moves",
        "7",
    )


def test_5_each_piece_moves_by_its_pattern() -> None:
    state = position(HOME)
    assert refusal(state, "9-13") == (
        Reason.ILLEGAL_MOVE_GEOMETRY,
        "Artillery moves 1-3 squares obliquely: 9-13 is no such move",
        "5",
    )
    assert refusal(state, "7-25") == (
        Reason.ILLEGAL_MOVE_GEOMETRY,
        "Infantry of the Line moves 1-2 squares in any of the eight directions: 7-25 is no "
        "such move",
        "5",
    )


def test_2_4_crossings_are_entered_and_left_only_through_their_entrances() -> None:
    # 49-48 is an ordinary step; the next, 48-47, goes through the ford's closed east corner
    assert refusal(position(HOME), "49-47") == (
        Reason.RIVER_CROSSING,
        "Cavalry 49-47: the ford 47 is entered and left only through its marked entrances "
        "(N, NE, NW, S, SE, SW); the step between 48 and 47 crosses the river",
        "2.4",
    )
    # leaving the ford through the same closed corner: the crossing is the first square
    assert refusal(position(HOME.replace("C49", "C47")), "47-48") == (
        Reason.RIVER_CROSSING,
        "Cavalry 47-48: the ford 47 is entered and left only through its marked entrances "
        "(N, NE, NW, S, SE, SW); the step between 47 and 48 crosses the river",
        "2.4",
    )


def test_2_2_nothing_jumps() -> None:
    assert refusal(position(HOME), "10-8") == (
        Reason.PATH_BLOCKED,
        "Cavalry 10-8: the defending Artillery on 9 intervenes, and nothing jumps",
        "2.2",
    )


def test_5_no_piece_takes_its_own_side() -> None:
    assert refusal(position(HOME), "10-9") == (
        Reason.DESTINATION_OCCUPIED,
        "9 holds the defender's own Artillery",
        "",
    )


def test_5_6_artillery_takes_only_artillery() -> None:
    assert refusal(position(HOME), "9x17") == (
        Reason.CAPTURE_NOT_ALLOWED,
        "Artillery takes only enemy Artillery, not attacking Light Infantry; it checks figures "
        "instead",
        "5, 6",
    )


def test_8_the_wagon_takes_nothing() -> None:
    text = "attacker to move; attacker: W113 A126 C125 L103 A118; defender: T19 I7 I105 A120"
    assert refusal(position(text), "113-120") == (
        Reason.CAPTURE_NOT_ALLOWED,
        "the Wagon takes nothing",
        "8",
    )


def test_8_the_wagon_is_not_taken_under_cover_of_its_artillery() -> None:
    text = "defender to move; attacker: W127 A110 I101; defender: I129 A135 T19"
    assert refusal(position(text), "129x127") == (
        Reason.WAGON_UNDER_COVER,
        "the Wagon on 127 cannot be taken while under cover of attacking Artillery on 110: "
        "after the capture its square is in range",
        "8",
    )


# The Wagon's move to 112 ends next to its own battery on 119, but also next to the
# defender's on 108, in whose range (and in that of 102) 112 lies.
BETWEEN_BATTERIES = "attacker to move; attacker: W120 A119 I127; defender: A108 A102 I4 T19"


def test_a_1_next_to_both_sides_batteries_is_not_protected() -> None:
    assert refusal(position(BETWEEN_BATTERIES), "120-112") == (
        Reason.EXPOSED_TO_ARTILLERY,
        "Wagon may not end on 112: in range of enemy Artillery on 102 and 108; next to its own "
        "Artillery on 119 but also next to the enemy's on 108, so not protected",
        "A.1",
    )
    cavalry = position(BETWEEN_BATTERIES.replace("W120", "W133 C120"))
    assert refusal(cavalry, "120-112") == (
        Reason.EXPOSED_TO_ARTILLERY,
        "Cavalry may not end on 112: in range of enemy Artillery on 102 and 108; next to its "
        "own Artillery on 119 but also next to the enemy's on 108, so not protected",
        "A.1",
    )


def test_8_wagon_occupancy_literal_text_refusals() -> None:
    literal = {"wagon_occupancy": "literal_text"}
    assert refusal(position(BETWEEN_BATTERIES, **literal), "120-112") == (
        Reason.EXPOSED_TO_ARTILLERY,
        "the Wagon may not end on 112: it is next to its own Artillery on 119 and to enemy "
        "Artillery on 108",
        "8",
    )
    own_line = "attacker to move; attacker: W128 A135 I127; defender: A107 I4 T19"
    assert refusal(position(own_line, **literal), "128-120") == (
        Reason.EXPOSED_TO_ARTILLERY,
        "the Wagon may not end on 120: the 2nd or 3rd square of its own battery's line, in "
        "range of enemy Artillery on 107",
        "8",
    )
    # the literal reading is about the Wagon: a figure is still refused by A.1
    figure = "attacker to move; attacker: W129 I127; defender: A104 I4 T19"
    assert refusal(position(figure, **literal), "127-119") == (
        Reason.EXPOSED_TO_ARTILLERY,
        "Infantry of the Line may not end on 119: in range of enemy Artillery on 104 and not "
        "protected",
        "A.1",
    )


def test_a_2_the_refusal_names_the_figure_newly_uncovered() -> None:
    # the Light Infantry on 7 stands exposed to 24 already; 26-27 uncovers the Cavalry on 19
    text = "defender to move; attacker: A40 A24 I127 W134; defender: T23 I26 A18 C19 L7"
    state = position(text)
    assert exposed_squares(state, "defender") == {7}
    assert refusal(state, "26-27") == (
        Reason.UNCOVERS_FIGURE,
        "Infantry of the Line 26-27 would leave the Cavalry on 19 exposed to enemy Artillery "
        "on 40: no move may uncover a figure",
        "A.2",
    )


def test_a_3_relieve_an_exposed_figure_or_answer_the_citadel() -> None:
    text = "defender to move; attacker: A33 I125 W134; defender: T19 C38 I7 L8 I18"
    state = position(text, citadel_duty="take_or_block")
    assert legal(state) == {"18x33", "8-1", "8-10", "8-16", "8-24", "8-39", "8-9", "8x33"}
    assert analysis(state).lapsed is False  # moves discharge the duty
    assert refusal(state, "38-37") == (
        Reason.FORCED_REPLY,
        "the Light Infantry on 8 is exposed to enemy Artillery: the move must relieve one "
        "without exposing another; or answer the Citadel commanded by Artillery on 33",
        "A.3",
    )
    two = "defender to move; attacker: A60 A40 I127 W134; defender: I16 I26 A1 T19 L45"
    assert refusal(position(two), "1-9") == (
        Reason.FORCED_REPLY,
        "the Infantry of the Line on 16, the Infantry of the Line on 26 are exposed to enemy "
        "Artillery: the move must relieve one without exposing another",
        "A.3",
    )


def test_7_citadel_duty_answers_by_option() -> None:
    text = "defender to move; attacker: A33 I125 W134; defender: T19 C38 I7"
    assert refusal(position(text), "7-16") == (
        Reason.CITADEL_DUTY,
        "attacking Artillery on 33 commands the Citadel: take that battery, block its line or "
        "threaten to take it before moving otherwise",
        "7",
    )
    # the Infantry of the Line on 18 can take 33, so the narrower duty does not lapse
    blocker = position(text + " I18", citadel_duty="take_or_block")
    assert refusal(blocker, "7-16") == (
        Reason.CITADEL_DUTY,
        "attacking Artillery on 33 commands the Citadel: take that battery or block its line "
        "before moving otherwise",
        "7",
    )


def test_8_ruling_9_the_exposed_wagon_must_answer() -> None:
    text = "attacker to move; attacker: W129 C110 I133; defender: A112 I4 T19"
    state = position(text, wagon_forced_reply="capture_battery_first")
    assert refusal(state, "129-136") == (
        Reason.FORCED_REPLY,
        "the Wagon is exposed to defending Artillery: take the checking battery if you can, "
        "otherwise move the Wagon out of danger",
        "8, ruling 9",
    )


def test_only_moves_are_actions_of_the_game() -> None:
    state = position(HOME)
    with pytest.raises(RuleError) as error:
        RULES.apply(state, "10-9")  # type: ignore[arg-type]
    assert error.value.reason is Reason.ILLEGAL_ACTION
    assert error.value.message == "'10-9' is not a Game of Battle move"
