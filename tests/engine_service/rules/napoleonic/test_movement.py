"""Movement (spec 4) and its options: two-square paths, passing friends, split moves,
variant two-square moves, hills (10.4) and obstacles (ruling 30)."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import EndPhase, Move
from engine_service.rules.napoleonic.movement import destinations
from engine_service.rules.napoleonic.state import NapoleonicState
from tests.engine_service.rules.napoleonic.helpers import RULESET, apply_batch

GUARDS = "h1=G#R_G"
BLACK_GUARDS = "black: a8=G#B_G"


def start(red: str, black: str = BLACK_GUARDS, extra: str = "", **options: str) -> NapoleonicState:
    setup = f"board 8x8; red: {red} {GUARDS}; {black}" + (f"; {extra}" if extra else "")
    return RULESET.new_game(RULESET.resolve_options(options), setup)


def reachable(state: NapoleonicState, unit_id: str) -> set[str]:
    unit = state.unit(unit_id)
    assert unit is not None
    return {state.geo.names[c] for c in destinations(state, unit)}


def refused(state: NapoleonicState, move: Move) -> RuleError:
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, move)
    return error.value


def ring(center: str, radius: int) -> set[str]:
    x, y = ord(center[0]) - 97, int(center[1:]) - 1
    return {
        f"{chr(97 + x + dx)}{y + dy + 1}"
        for dx in range(-radius, radius + 1)
        for dy in range(-radius, radius + 1)
        if (dx or dy) and 0 <= x + dx < 8 and 0 <= y + dy < 8
    }


def test_one_square_movers() -> None:
    state = start("d4=I#R_I e2=A#R_A")
    assert reachable(state, "R_I") == ring("d4", 1)
    assert reachable(state, "R_A") == {"e1", "e3", "d2", "f2"}  # orthogonal only
    assert reachable(start("d4=G#R_G2"), "R_G2") == ring("d4", 1)


def test_cavalry_reaches_every_square_within_two_king_steps() -> None:
    assert reachable(start("d4=C#R_C"), "R_C") == ring("d4", 2)


def test_straight_line_mode_excludes_knight_offsets() -> None:
    state = start("d4=C#R_C", multi_step_mode="straight_line")
    straight = {"b2", "b4", "b6", "d2", "d6", "f2", "f4", "f6"}
    assert reachable(state, "R_C") == ring("d4", 1) | straight


def test_a_move_never_ends_on_a_unit() -> None:
    state = start("d4=C#R_C d5=I#R_I", black="black: e5=I#B_I a8=G#B_G")
    assert "d5" not in reachable(state, "R_C") and "e5" not in reachable(state, "R_C")
    assert refused(state, Move("red", "R_C", "e5")).reason == "DESTINATION_OCCUPIED"


def test_enemies_block_even_when_friends_may_be_passed() -> None:
    state = start(
        "a1=C#R_C a2=I#R_I",
        black="black: b2=I#B_I b1=I#B_I2 a8=G#B_G",
        pass_through_friendly="true",
    )
    state, _ = RULESET.apply(state, Move("red", "R_C", "a3"))  # over its own infantry on a2
    blocked = start(
        "a1=C#R_C",
        black="black: a2=I#B_I3 b2=I#B_I b1=I#B_I2 a8=G#B_G",
        pass_through_friendly="true",
    )
    error = refused(blocked, Move("red", "R_C", "a3"))
    assert error.reason == "PATH_BLOCKED" and "a2 is occupied" in error.message


def test_moves_apply_in_order_so_a_step_can_open_a_lane() -> None:
    # Order matters (4.4): the infantry steps aside, then the cavalry uses the lane.
    state = start("a1=C#R_C a2=I#R_I b2=I#R_I2 b1=I#R_I3")
    assert refused(state, Move("red", "R_C", "a3")).reason == "PATH_BLOCKED"
    state, _ = apply_batch(RULESET, state, [Move("red", "R_I2", "c3"), Move("red", "R_C", "a3")])
    assert state.geo.names[state.by_id()["R_C"].cell] == "a3"


def test_each_unit_moves_once() -> None:
    state, _ = RULESET.apply(start("d4=C#R_C"), Move("red", "R_C", "d5"))
    error = refused(state, Move("red", "R_C", "d6"))
    assert error.reason == "UNIT_ALREADY_MOVED" and "already moved" in error.message
    assert "R_C" not in {m.unit for m in RULESET.legal_actions(state) if isinstance(m, Move)}


def test_split_two_square_moves_lets_cavalry_finish_its_move_later() -> None:
    state = start("d4=C#R_C a2=I#R_I", split_two_square_moves="true")
    state, _ = apply_batch(
        RULESET,
        state,
        [Move("red", "R_C", "d5"), Move("red", "R_I", "a3"), Move("red", "R_C", "e6")],
    )
    assert state.geo.names[state.by_id()["R_C"].cell] == "e6"
    # A third step is beyond the allowance; infantry never splits.
    assert refused(state, Move("red", "R_C", "e7")).reason == "UNIT_ALREADY_MOVED"
    assert refused(state, Move("red", "R_I", "a4")).reason == "UNIT_ALREADY_MOVED"


def test_split_moves_keep_a_straight_line_in_straight_line_mode() -> None:
    state = start("d4=C#R_C", split_two_square_moves="true", multi_step_mode="straight_line")
    state, _ = RULESET.apply(state, Move("red", "R_C", "d5"))
    assert reachable(state, "R_C") == {"d6"}
    assert refused(state, Move("red", "R_C", "e6")).reason == "ILLEGAL_MOVE_GEOMETRY"


def test_a_two_square_move_is_not_split_by_default() -> None:
    state, _ = RULESET.apply(start("d4=C#R_C"), Move("red", "R_C", "d5"))
    assert reachable(state, "R_C") == set()


def test_variant_two_square_move_exactly_two() -> None:
    loose = start("d4=D#R_D a1=C#R_C")
    assert reachable(loose, "R_D") == ring("d4", 2)
    strict = start("d4=D#R_D a1=C#R_C", variant_two_square_move="exactly_two")
    assert reachable(strict, "R_D") == ring("d4", 2) - ring("d4", 1)
    error = refused(strict, Move("red", "R_D", "d5"))
    assert error.reason == "ILLEGAL_MOVE_GEOMETRY" and "exactly two" in error.message
    assert "a2" in reachable(strict, "R_C")  # cavalry is not a variant unit


def test_horse_artillery_moves_like_cavalry() -> None:
    assert reachable(start("d4=H#R_H"), "R_H") == ring("d4", 2)


def test_artillery_diagonal_move_message_names_the_rule() -> None:
    error = refused(start("d4=A#R_A"), Move("red", "R_A", "e5"))
    assert error.reason == "ILLEGAL_MOVE_GEOMETRY"
    assert (
        error.message == "Artillery on d4 cannot move to e5: it moves one square orthogonally only"
    )


def test_off_board_unknown_and_enemy_units() -> None:
    state = start("d8=I#R_I", black="black: d6=I#B_I a8=G#B_G")
    assert refused(state, Move("red", "R_I", "d9")).reason == "DESTINATION_OFF_BOARD"
    assert refused(state, Move("red", "R_X", "d7")).reason == "UNKNOWN_UNIT"
    assert refused(state, Move("red", "B_I", "d5")).reason == "NOT_OWN_UNIT"
    assert refused(state, Move("red", "R_I", "d8")).reason == "ILLEGAL_MOVE_GEOMETRY"


def test_a_unit_that_entered_a_hill_may_not_leave_it() -> None:
    state = start("d2=C#R_C", extra="hills: d3", split_two_square_moves="true")
    state, _ = RULESET.apply(state, Move("red", "R_C", "d3"))
    assert refused(state, Move("red", "R_C", "d4")).reason == "HILL_ON_AND_OFF"
    # Starting on a hill, a unit leaves freely.
    free = start("d3=C#R_C", extra="hills: d3")
    assert "d5" in reachable(free, "R_C")


def test_two_step_moves_cannot_pass_over_a_redoubt() -> None:
    state = start("c2=C#R_C b3=I#R_I d3=I#R_I2", extra="redoubts: c3=black")
    error = refused(state, Move("red", "R_C", "c4"))
    assert error.reason == "PATH_BLOCKED" and "c3 is a redoubt" in error.message


@pytest.mark.parametrize(("allowed", "expected"), [("true", None), ("false", "HILL_ON_AND_OFF")])
def test_hill_to_hill_moves(allowed: str, expected: str | None) -> None:
    state = start("c3=I#R_I", extra="hills: c3 c4", hill_to_hill_moves=allowed)
    if expected is None:
        after, _ = RULESET.apply(state, Move("red", "R_I", "c4"))
        assert "R_I" in after.turn.entered_elevation
    else:
        assert refused(state, Move("red", "R_I", "c4")).reason == expected
        assert "c4" not in reachable(state, "R_I")


@pytest.mark.parametrize("blocking", ["false", "true"])
def test_obstacles_block_movement(blocking: str) -> None:
    state = start("d4=I#R_I", extra="obstacles: d4|d5", obstacles_block_movement=blocking)
    if blocking == "false":
        assert {"d5", "c5", "e5"} <= reachable(state, "R_I")
        return
    # Straight across the edge, and diagonally past its ends (rule 'either'), are barred.
    assert reachable(state, "R_I") == ring("d4", 1) - {"d5", "c5", "e5"}
    error = refused(state, Move("red", "R_I", "d5"))
    assert error.reason == "PATH_BLOCKED" and "obstacle" in error.message


def test_moves_after_movement_are_in_the_wrong_phase() -> None:
    state, _ = RULESET.apply(start("d4=I#R_I"), EndPhase("red"))
    assert refused(state, Move("red", "R_I", "d5")).reason == "WRONG_PHASE"
