"""Specification 12.4-12.7: the four artillery examples of Plate 2 (local labels translated
to board squares as in section 11; infantry of unstated type is Infantry of the Line)."""

from __future__ import annotations

from tests.engine_service.rules.battle.book import (
    ANGLE_FIGURE,
    BATTERIES_FIGURE,
    COVER_FIGURE,
    FORCED_REPLY_FIGURE,
)
from tests.engine_service.rules.battle.helpers import (
    analysis,
    exposed_squares,
    is_geometric,
    is_legal,
    legal,
    moved_pieces,
    passes_artillery_tests,
    play,
    position,
)

# --- 12.4 Plate 2 fig. 1: D Art 110, A Art 111 ------------------------------------------


def test_12_4_1_no_figure_may_stand_between_two_batteries() -> None:
    for square in (118, 106):
        for kind in ("L", "I", "C"):
            attacker = position(f"attacker to move; attacker: A111 {kind}{square}; defender: A110")
            assert exposed_squares(attacker, "attacker") == {square}
            defender = position(f"defender to move; attacker: A111; defender: A110 {kind}{square}")
            assert exposed_squares(defender, "defender") == {square}
        wagon = position(f"attacker to move; attacker: A111 W{square}; defender: A110")
        assert exposed_squares(wagon, "attacker") == {square}
    # and no figure may move there: attacking Cavalry on 119 and 98 reach them
    start = position("attacker to move; attacker: A111 C119 C98; defender: A110")
    assert is_geometric(start, "119-118") and is_geometric(start, "98-106")
    assert not is_legal(start, "119-118") and not is_legal(start, "98-106")
    start = position("defender to move; attacker: A111; defender: A110 C117 C105")
    assert is_geometric(start, "117-118") and is_geometric(start, "105-106")
    assert not is_legal(start, "117-118") and not is_legal(start, "105-106")


def test_12_4_2_artillery_on_118_or_106_can_be_taken_by_110() -> None:
    for square in (118, 106):
        board = play(position(f"attacker to move; {BATTERIES_FIGURE}"), f"111-{square}")
        assert is_legal(board, f"110x{square}")


# --- 12.5 Plate 2 fig. 2: cover and mutual protection -----------------------------------


def test_12_5_1_nobody_exposed_as_drawn() -> None:
    board = position("attacker to move" + COVER_FIGURE)
    assert exposed_squares(board, "attacker") == exposed_squares(board, "defender") == set()


def test_12_5_2_figure_may_not_stand_on_the_second_square_of_its_battery() -> None:
    board = position("attacker to move" + COVER_FIGURE)
    assert is_geometric(board, "88-109")
    assert not is_legal(board, "88-109")


def test_12_5_3_after_115_to_114_square_109_is_free() -> None:
    board = play(position("defender to move" + COVER_FIGURE), "115-114")
    # 109 is no longer covered by 122: an attacking figure may stand there (A.1 passes)
    assert passes_artillery_tests(board, "88-109")
    standing = position("attacker to move; attacker: I109 C89 I86 A82; defender: A139 A122 I114")
    assert 109 not in exposed_squares(standing, "attacker")
    # ruling 21: the same move leaves the Cav on 89 in check, which must be answered first
    assert exposed_squares(board, "attacker") == {89}
    assert not is_legal(board, "88-109")
    assert moved_pieces(board) == {89}


def test_12_5_4_batteries_139_and_122_protect_each_other() -> None:
    board = position("attacker to move" + COVER_FIGURE)
    assert is_geometric(board, "89x139")
    assert not is_legal(board, "89x139")
    assert is_geometric(board, "88x122") and not is_legal(board, "88x122")


def test_12_5_5_after_115_to_131_the_batteries_no_longer_cover_each_other() -> None:
    board = play(position("defender to move" + COVER_FIGURE), "115-131")
    assert is_legal(board, "89x139") and is_legal(board, "89x122")
    assert is_legal(board, "88x122")
    retake = play(board, "88x122")
    assert is_legal(retake, "131x122")
    finish = play(retake, "131x122")
    assert is_legal(finish, "89x139")


# --- 12.6 Plate 2 fig. 3: forced reply, one at a time -----------------------------------


def test_12_6_1_artillery_54_to_40_through_the_ford() -> None:
    assert is_legal(position(FORCED_REPLY_FIGURE), "54-40")


def test_12_6_2_both_figures_exposed_and_every_reply_relieves_one() -> None:
    board = play(position(FORCED_REPLY_FIGURE), "54-40")
    assert exposed_squares(board, "defender") == {16, 26}
    replies = analysis(board).legal
    assert replies
    for reply in replies:
        after = play(board, f"{reply.origin + 1}-{reply.destination + 1}")
        left = exposed_squares(after, "defender")
        assert len(left) <= 1 and left <= {16, 26} | {reply.destination + 1}
        assert reply.destination + 1 not in left


def test_12_6_3_then_artillery_1_to_18_supports_the_figure_on_26() -> None:
    board = play(position(FORCED_REPLY_FIGURE), "54-40")
    away = sorted(m for m in legal(board) if m.startswith("16-") and m != "16-18")
    assert away
    for text in away:
        after = play(board, text)
        assert exposed_squares(after, "defender") == {26}
        waiting = play(after, "60-67")  # the attacker moves elsewhere
        assert exposed_squares(waiting, "defender") == {26}
        assert is_legal(waiting, "1-18")
        assert exposed_squares(play(waiting, "1-18"), "defender") == set()


def test_12_6_4_a_battery_on_16_or_26_could_take_the_artillery_on_40() -> None:
    for square in (16, 26):
        other = 26 if square == 16 else 16
        board = play(
            position(f"attacker to move; attacker: A60 A54; defender: A{square} I{other} A1"),
            "54-40",
        )
        assert is_legal(board, f"{square}x40")


# --- 12.7 Plate 2 fig. 4: a battery attacked through its angle --------------------------


def test_12_7_1_infantry_13_protected_by_artillery_5() -> None:
    board = position(ANGLE_FIGURE)
    assert exposed_squares(board, "defender") == set()


def test_12_7_2_cavalry_52_to_51_and_to_36() -> None:
    board = position(ANGLE_FIGURE)
    assert is_legal(board, "52-51") and is_legal(board, "52-36")


def test_12_7_3_cavalry_threatens_artillery_5_through_an_angle() -> None:
    for square in (51, 36):
        board = play(position(ANGLE_FIGURE), f"52-{square}")
        attacker_again = position(f"attacker to move; attacker: C{square} A38; defender: I13 A5")
        assert is_geometric(attacker_again, f"{square}x5")
        assert square not in exposed_squares(attacker_again, "attacker")
        assert is_legal(attacker_again, f"{square}x5")
        assert board


def test_12_7_4_artillery_5_cannot_move_and_13_to_21_blocks() -> None:
    for square in (51, 36):
        board = play(position(ANGLE_FIGURE), f"52-{square}")
        assert 5 not in moved_pieces(board)
        assert is_legal(board, "13-21")
        blocked = play(board, "13-21")
        assert not is_geometric(blocked, f"{square}x5")


def test_12_7_5_cavalry_takes_on_21_and_artillery_5_moves_again() -> None:
    board = play(position(ANGLE_FIGURE), "52-36", "13-21")
    assert is_legal(board, "36x21")
    after = play(board, "36x21")
    assert 5 in moved_pieces(after)
