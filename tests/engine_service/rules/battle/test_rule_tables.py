"""The rules' tables and the functions that build them at import: the steps of the board
(2.3, 2.4), the move patterns and captures of section 5, the pieces that may be exposed (6).

The plate tests check the tables; these call the builders themselves, so that a fault in a
builder shows even where the tables were already built when the module was first imported.
"""

from __future__ import annotations

from engine_service.rules.battle import artillery, board, movement
from engine_service.rules.battle.board import (
    BANK,
    CROSSINGS,
    DIRECTIONS,
    OBLIQUE,
    SQUARES,
    STEP,
    blocked_bank_steps,
    cell_of,
)
from engine_service.rules.battle.movement import CAN_CAPTURE, MOVE_RAYS, may_capture, reach
from engine_service.rules.battle.pieces import (
    ARMY,
    ARTILLERY,
    ATTACKER,
    CAVALRY,
    CITADEL,
    CODE_COUNT,
    DEFENDER,
    INFANTRY_OF_THE_LINE,
    KINDS,
    LIGHT_INFANTRY,
    WAGON,
    code,
)

FIGURES = (LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY)


def test_2_3_no_step_between_the_banks() -> None:
    steps = blocked_bank_steps()
    assert len(steps) == 12
    for a, b, direction in steps:
        assert {BANK[a], BANK[b]} == {"south", "north"}
        assert not board._linked(a, b, direction)
    # an ordinary step on one bank is open both ways
    assert board._linked(cell_of("40"), cell_of("41"), "E")
    assert board._linked(cell_of("41"), cell_of("40"), "W")


def test_2_4_crossings_open_only_at_their_entrances() -> None:
    ford, west, east, north = cell_of("47"), cell_of("46"), cell_of("48"), cell_of("61")
    assert CROSSINGS[ford] == ("ford", frozenset({"N", "S", "NW", "NE", "SW", "SE"}))
    assert not board._opens(ford, "E") and not board._opens(ford, "W")
    assert board._opens(ford, "N") and board._opens(west, "E")  # 46 is no crossing
    assert not board._linked(west, ford, "E") and not board._linked(ford, east, "E")
    assert board._linked(ford, north, "N") and board._linked(north, ford, "S")


def test_2_the_step_tables_are_built_from_the_steps() -> None:
    for direction in DIRECTIONS:
        assert board._step_table(direction) == STEP[direction]
    assert STEP["E"][cell_of("46")] == -1 and STEP["N"][cell_of("47")] == cell_of("61")


def test_5_reach_of_each_piece() -> None:
    for side, forward in ((ATTACKER, {"S", "SE", "SW"}), (DEFENDER, {"N", "NE", "NW"})):
        assert reach(side, LIGHT_INFANTRY) == {d: 3 if d in forward else 2 for d in DIRECTIONS}
        assert reach(side, INFANTRY_OF_THE_LINE) == dict.fromkeys(DIRECTIONS, 2)
        assert reach(side, CAVALRY) == dict.fromkeys(DIRECTIONS, 3)
        assert reach(side, ARTILLERY) == dict.fromkeys(OBLIQUE, 3)
    assert reach(ATTACKER, WAGON) == dict.fromkeys(OBLIQUE, 2)
    assert reach(DEFENDER, CITADEL) == {}


def test_5_move_rays_are_built_from_the_reach() -> None:
    for piece in range(CODE_COUNT):
        for cell in range(SQUARES):
            assert movement._rays_of(piece, cell) == MOVE_RAYS[piece][cell]
    # the attacking Light Infantry on 85 goes three squares forward (south), two back
    rays = movement._rays_of(code(ATTACKER, LIGHT_INFANTRY), cell_of("85"))
    found = {move.destination + 1 for line in rays for _, move in line}
    assert {move.origin for line in rays for _, move in line} == {cell_of("85")}
    assert found >= {81, 78, 74} and 109 in found and 129 not in found


def test_5_7_8_who_may_take_what() -> None:
    for mover_side in (ATTACKER, DEFENDER):
        enemy = 1 - mover_side
        for kind in KINDS:
            mover = code(mover_side, kind)
            for prey in KINDS:
                expected = kind in FIGURES or (kind == ARTILLERY and prey == ARTILLERY)
                assert may_capture(mover, code(enemy, prey)) is expected, (kind, prey)
                assert may_capture(mover, code(mover_side, prey)) is False
            assert may_capture(mover, 0) is False
    assert all(
        CAN_CAPTURE[a][b] == may_capture(a, b) for a in range(CODE_COUNT) for b in range(CODE_COUNT)
    )


def test_6_figures_and_the_wagon_may_be_exposed() -> None:
    for side in (ATTACKER, DEFENDER):
        army = {code(side, kind) for kind in ARMY[side]}  # the codes that can be on a board
        exposable = {p for p in army if artillery._exposable(side)[p]}
        kinds = (*FIGURES, WAGON) if side == ATTACKER else FIGURES
        assert exposable == {code(side, kind) for kind in kinds}
        assert not any(artillery._exposable(side)[code(1 - side, kind)] for kind in KINDS)
        assert artillery._exposable(side) == artillery.EXPOSABLE[side]
