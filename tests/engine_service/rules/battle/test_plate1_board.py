"""Specification 12.1: Plate 1 — board, river, crossings and set-up."""

from __future__ import annotations

from collections import Counter

from engine_service.rules.battle.board import (
    BANK,
    COORDS,
    GRAPH,
    NAMES,
    ROT180,
    SQUARES,
    STEP,
    blocked_bank_steps,
)
from engine_service.rules.battle.pieces import SIDE_IDS
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    destinations,
    exposed_squares,
    position,
    sq,
)

ROW_LENGTHS_WITH_RIVER_CELLS = [6, 9, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 9, 6]
OCCUPIABLE_ROW_LENGTHS = [6, 9, 8, 7, 8, 7, 8, 6, 7, 7, 7, 6, 8, 7, 8, 7, 8, 9, 6]
RIVER_CELLS = {(6, 7), (7, 8), (9, 10), (10, 11)}


def _linked(a: int, b: int) -> bool:
    return any(STEP[d][sq(a)] == sq(b) for d in STEP)


def _row(n: int) -> list[int]:
    return sorted(
        (i + 1 for i in range(SQUARES) if COORDS[i][1] == n), key=lambda s: COORDS[s - 1][0]
    )


def test_12_1_1_board_structure() -> None:
    assert SQUARES == 139 and tuple(str(n) for n in range(1, 140)) == NAMES
    assert all((c + r) % 2 == 1 for c, r in COORDS)
    assert _row(1) == list(range(7, 16))  # line of nine
    assert _row(2) == list(range(16, 24))  # first line of eight
    assert _row(3) == list(range(24, 31))  # first row of seven
    assert _row(5) == list(range(39, 46))  # second row of seven
    # 1..90 run left to right, row by row, as the defender sees them
    book = sorted(range(90), key=lambda i: (COORDS[i][1], COORDS[i][0]))
    assert book == list(range(90))
    lengths = Counter(r for _, r in COORDS)
    assert [lengths[r] for r in range(19)] == OCCUPIABLE_ROW_LENGTHS
    with_river = Counter(r for _, r in list(COORDS) + sorted(RIVER_CELLS))
    assert [with_river[r] for r in range(19)] == ROW_LENGTHS_WITH_RIVER_CELLS
    # unchanged by the 180-degree rotation: banks swap, crossings map to crossings
    swap = {"south": "north", "north": "south", "ford": "ford", "bridge": "bridge"}
    for i, (c, r) in enumerate(COORDS):
        j = ROT180[i]
        assert COORDS[j] == (16 - c, 18 - r)
        assert BANK[j] == swap[BANK[i]]
    assert ROT180[sq(47)] == sq(83) and ROT180[sq(70)] == sq(70)
    assert Counter(BANK) == {"south": 68, "north": 68, "ford": 2, "bridge": 1}
    # every step has its way back
    for d, table in STEP.items():
        for a, b in enumerate(table):
            if b >= 0:
                assert GRAPH.step[_back(d)][b] == a


def _back(d: str) -> str:
    return {"N": "S", "S": "N", "E": "W", "W": "E", "NE": "SW", "SW": "NE", "NW": "SE", "SE": "NW"}[
        d
    ]


def test_12_1_2_river_examples() -> None:
    for a, b in [(39, 54), (55, 40), (55, 48)]:
        for piece in ("C", "I", "A"):
            for start, end in [(a, b), (b, a)]:
                board = position(f"attacker to move; attacker: {piece}{start}; defender: -")
                assert end not in destinations(board, start)
                board = position(f"attacker to move; attacker: {piece}{start}; defender: A{end}")
                assert end not in destinations(board, start)
    guns = position("defender to move; attacker: A55; defender: I48 I40")
    assert exposed_squares(guns, "defender") == set()


def test_12_1_3_river_impassable() -> None:
    listed = {(a, b) for a, b, _ in blocked_bank_steps()}
    assert len(listed) == 12
    found = set()
    for a in range(SQUARES):
        for b in range(SQUARES):
            if {BANK[a], BANK[b]} == {"south", "north"}:
                (c0, r0), (c1, r1) = COORDS[a], COORDS[b]
                if (abs(c1 - c0), abs(r1 - r0)) in ((1, 1), (0, 2), (2, 0)):
                    found.add((min(a, b), max(a, b)))
                    assert not any(STEP[d][a] == b for d in STEP)
    assert found == {(min(a, b), max(a, b)) for a, b in listed}


def test_12_1_4_crossings_are_straight_two_step_lines() -> None:
    lines = {
        (39, 47, 55): "NE",
        (40, 47, 54): "NW",
        (32, 47, 61): "N",
        (63, 70, 74): "NW",
        (56, 70, 78): "N",
        (71, 70, 69): "W",
        (79, 83, 87): "NE",
        (80, 83, 86): "NW",
        (76, 83, 89): "N",
    }
    for (a, mid, b), d in lines.items():
        assert GRAPH.ray(sq(a), d, 2) == (sq(mid), sq(b))
        assert GRAPH.ray(sq(b), _back(d), 2) == (sq(mid), sq(a))


def test_12_1_5_closed_sides() -> None:
    for a, b in [(46, 47), (47, 48), (82, 83), (83, 84)]:
        assert not _linked(a, b) and not _linked(b, a)
    bridge = {d for d in STEP if STEP[d][sq(70)] >= 0}
    assert bridge == {"N", "S", "E", "W", "NW", "SE"}


def test_12_1_6_bastions_have_two_neighbours() -> None:
    for corner in (7, 15, 125, 133):
        assert sum(1 for d in STEP if STEP[d][sq(corner)] >= 0) == 2


def test_12_1_7_artillery_may_stop_on_a_ford() -> None:
    board = position("attacker to move; attacker: -; defender: A31")
    assert 47 in destinations(board, 31)


def test_12_1_8_setup() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    pieces = {(p.cell, p.side): p.kind for p in RULES.pieces(start)}
    line_of_nine_from_right = ["cavalry", "artillery"] + ["infantry_of_the_line"] * 3
    line_of_nine_from_right += ["cavalry", "artillery"] + ["infantry_of_the_line"] * 2
    assert [pieces[(str(n), "defender")] for n in range(15, 6, -1)] == line_of_nine_from_right
    assert pieces[("19", "defender")] == "citadel"
    assert _row(2)[::-1][4] == 19  # 5th from the right of the first line of eight
    assert [n for n in range(39, 46) if (str(n), "defender") in pieces] == [39, 41, 43, 45]
    assert all(pieces[(str(n), "defender")] == "light_infantry" for n in (39, 41, 43, 45))
    # attacker: from its own right (west): Cav, Art, IL, IL, Wagon, Cav, Art, IL, IL
    attacker = ["cavalry", "artillery", "infantry_of_the_line", "infantry_of_the_line", "wagon"]
    attacker += ["cavalry", "artillery", "infantry_of_the_line", "infantry_of_the_line"]
    assert [pieces[(str(n), "attacker")] for n in range(125, 134)] == attacker
    assert pieces[("113", "attacker")] == "infantry_of_the_line"
    assert COORDS[sq(113)] == (COORDS[sq(129)][0], COORDS[sq(129)][1] - 2)
    # every other attacking figure is the image of a defending one
    for (cell, side), kind in pieces.items():
        if side == "defender" and kind not in ("citadel",):
            image = str(ROT180[sq(int(cell))] + 1)
            if image == "129":
                assert pieces[(image, "attacker")] == "wagon"
            else:
                assert pieces[(image, "attacker")] == kind
    assert ("121", "attacker") not in pieces
    for side in SIDE_IDS:
        counts = Counter(kind for (_, s), kind in pieces.items() if s == side)
        royal = {"citadel": 1} if side == "defender" else {"wagon": 1}
        assert counts == {
            "light_infantry": 4,
            "infantry_of_the_line": 5,
            "cavalry": 2,
            "artillery": 2,
            **royal,
        }


def test_12_1_9_start() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    assert exposed_squares(start, "attacker") == exposed_squares(start, "defender") == set()
    assert analysis(start).citadel_commanders == []
    assert RULES.legal_actions(start)
    defender_first = RULES.new_game(RULES.resolve_options({"first_player": "defender"}))
    assert RULES.legal_actions(defender_first)
    assert RULES.outcome(start) is None and RULES.outcome(defender_first) is None
