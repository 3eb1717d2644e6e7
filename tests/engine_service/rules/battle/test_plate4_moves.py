"""Specification 12.2 (Plate 4 fig. 2: moves on the numbered board) and 12.3 (Plate 4
fig. 1: the artillery duel). Every move list is the book's, square by square."""

from __future__ import annotations

from engine_service.rules.battle.board import RELATIVE, ROT180, ray
from engine_service.rules.battle.pieces import ATTACKER, DEFENDER
from tests.engine_service.rules.battle.book import DUEL_FIGURE, MOVES_FIGURE
from tests.engine_service.rules.battle.helpers import (
    destinations,
    exposed_squares,
    is_legal,
    play,
    position,
    sq,
)

# Plate 4 fig. 2: Art 9, Wagon 11, IL 13, Cav 15, LI 36 (obstacles for the moves tested).


def test_12_2_1_cavalry_15_blocked_by_13() -> None:
    board = position(MOVES_FIGURE)
    reach = destinations(board, 15)
    assert 12 not in reach  # 13 intervenes
    assert {14, 37} <= reach


def test_12_2_2_cavalry_37_with_36_occupied() -> None:
    board = play(position(MOVES_FIGURE), "15-37")
    expected = {29, 21, 12, 22, 6, 30, 23, 15, 38, 45, 53, 52, 65, 76, 44, 51, 57}
    assert destinations(board, 37) == expected
    assert 35 not in expected and 34 not in expected


BOOK_LI_36 = {  # the book's list, by the names it gives the directions
    "forward": (51, 64, 75),
    "forward_left": (43, 50, 56),
    "forward_right": (44, 52, 59),
    "left": (35, 34),
    "rear_left": (28, 20),
    "rear": (21, 5),
    "rear_right": (29, 22),
    "right": (37, 38),
}


def test_12_2_3_defending_light_infantry_36() -> None:
    board = position("defender to move; attacker: -; defender: L36")
    expected = {square for line in BOOK_LI_36.values() for square in line}
    assert len(expected) == 19
    assert destinations(board, 36) == expected
    for name, line in BOOK_LI_36.items():
        assert ray(sq(36), RELATIVE[DEFENDER][name], len(line)) == tuple(sq(s) for s in line)


def test_light_infantry_forward_is_relative_to_its_owner() -> None:
    # The attacker's Light Infantry on the 180-degree image of 36 (107) mirrors the list.
    image = ROT180[sq(36)] + 1
    assert image == 107
    board = position(f"attacker to move; attacker: L{image}; defender: -")
    expected = {ROT180[sq(s)] + 1 for line in BOOK_LI_36.values() for s in line}
    assert destinations(board, image) == expected
    for name, line in BOOK_LI_36.items():
        mirrored = tuple(ROT180[sq(s)] for s in line)
        assert ray(sq(image), RELATIVE[ATTACKER][name], len(line)) == mirrored


def test_12_2_4_infantry_of_the_line_13() -> None:
    board = position("defender to move; attacker: -; defender: I13")
    book = {29, 44, 21, 28, 12, 5, 6, 14, 22, 30}
    assert destinations(board, 13) == book | {11, 15}


def test_12_2_5_artillery_9() -> None:
    board = position("defender to move; attacker: -; defender: A9")
    assert destinations(board, 9) == {1, 2, 17, 24, 31, 18, 26, 34}


def test_12_2_6_artillery_31_over_the_ford() -> None:
    board = position("defender to move; attacker: -; defender: A31")
    assert destinations(board, 31) == {39, 47, 55, 24, 17, 9}


def test_12_2_7_range_of_attacking_artillery_51() -> None:
    commanded = {58, 65, 73, 57, 63, 70, 43, 35, 27, 44, 37, 30}
    for square in range(1, 140):
        if square == 51:
            continue
        board = position(f"defender to move; attacker: A51; defender: I{square}")
        assert (square in exposed_squares(board, "defender")) == (square in commanded), square
    # next to its own battery: protected
    board = position("defender to move; attacker: A51; defender: I65 A72")
    assert exposed_squares(board, "defender") == set()
    # next to the enemy battery as well: still exposed
    board = position("defender to move; attacker: A51; defender: I44 A37")
    assert exposed_squares(board, "defender") == {44}


def test_12_2_8_wagon_11() -> None:
    board = position("attacker to move; attacker: W11; defender: -")
    assert destinations(board, 11) == {3, 4, 20, 28, 19, 26}


# Plate 4 fig. 1: D Cav 127, D Art 119, D Art 106, D infantry 108; A Art 107, A Art 94.


def test_12_3_1_defending_artillery_119_to_111() -> None:
    assert is_legal(position(DUEL_FIGURE), "119-111")


def test_12_3_2_batteries_in_each_others_range() -> None:
    after = play(position(DUEL_FIGURE), "119-111")
    assert is_legal(after, "107x111")
    # ...and if it stays, 111 could take it next move (no compulsion either way, A.4)
    waiting = play(after, "94-98")
    assert is_legal(waiting, "111x107")
    assert is_legal(after, "94-98")  # the attacker need not take or flee


def test_12_3_3_retaking_on_111() -> None:
    after = play(position(DUEL_FIGURE), "119-111", "107x111")
    assert is_legal(after, "127x111")
    assert is_legal(after, "106x111")


def test_12_3_4_artillery_to_102_is_taken_by_106() -> None:
    after = play(position(DUEL_FIGURE), "119-111", "107-102")
    assert is_legal(after, "106x102")


def test_12_3_5_artillery_to_120_112_103_is_taken_by_the_infantry() -> None:
    for square in (120, 112, 103):
        after = play(position(DUEL_FIGURE), "119-111", f"107-{square}")
        assert is_legal(after, f"108x{square}")
