"""Section 7: Troops - steps, double steps, diagonal captures, jump chains, final rank."""

from __future__ import annotations

from .helpers import RULES, act, notations, options, position


def _troop(state_notations: set[str], origin: str) -> set[str]:
    return {n for n in state_notations if n.startswith(origin)}


def test_7_1_step_forward_to_an_empty_square_only() -> None:
    assert _troop(notations(position("Tc5 Kj1")), "c5") == {"c5-c6"}
    assert _troop(notations(position("Tc5 tc6 Kj1")), "c5") == set()
    north = position("tc5 kj10", side="N")
    assert _troop(notations(north), "c5") == {"c5-c4"}


def test_7_2_double_step_for_every_unmoved_troop() -> None:
    legal = notations(position("Tb2 Tc3 Kj1"))
    assert {"b2-b3", "b2-b4", "c3-c4", "c3-c5"} <= legal  # Rear and Van alike
    assert "b2-b4" not in notations(position("Tb2 tb3 Kj1"))
    assert "b2-b4" not in notations(position("Tb2 tb4 Kj1"))


def test_7_2_a_moved_troop_no_longer_double_steps() -> None:
    state = position("Tb2 kj10 Kj1")
    after = act(act(state, "b2-b3"), "Kj10-i10")
    assert _troop(notations(after), "b3") == {"b3-b4"}


def test_7_2_a_flying_machine_stops_the_double_step() -> None:
    assert "b2-b4" not in notations(position("Tb2 Fb3 Kj1"))
    assert "b2-b4" not in notations(position("Tb2 fb4 Kj1"))


def test_7_3_diagonal_capture_of_any_enemy_man() -> None:
    for letter in "tkgmch":
        legal = notations(position(f"Td5 {letter}e6 Kj1"))
        assert "d5xe6" in legal, letter
    assert "d5xe6" not in notations(position("Td5 Ge6 Kj1"))  # never a friendly man
    assert "d5xc4" not in notations(position("Td5 tc4 Kj1"))  # never backward


def test_7_3_a_troop_may_take_a_jumpable_troop_by_displacement() -> None:
    assert {"d5xe6", "d5:f7"} <= notations(position("Td5 te6 Kj1"))


def test_7_4_jump_needs_an_empty_landing_square_on_the_board() -> None:
    assert "d5:f7" not in notations(position("Td5 te6 gf7 Kj1"))
    assert "d5:f7" not in notations(position("Td5 te6 Ff7 Kj1"))
    assert not any(":" in n for n in notations(position("Ti8 tj9 Ka1")))


def test_7_4_no_jump_over_friendly_troops_or_flying_machines() -> None:
    assert not any(":" in n for n in notations(position("Td5 Te6 Kj1")))
    assert not any(":" in n for n in notations(position("Td5 fe6 Kj1")))


def test_7_5_jumped_troops_are_removed_and_the_chain_branches() -> None:
    state = position("Tc3 tb4 tb6 td4 Kj1")
    chains = {n for n in notations(state) if ":" in n}
    # Over b4 to a5, then over b6 to c7 (and nothing more); or over d4 to e5 and stop.
    assert chains == {"c3:a5:c7", "c3:e5"}
    after = act(state, "c3:a5:c7")
    assert {v.cell for v in RULES.pieces(after) if v.side == "north"} == {"d4"}


def test_7_5_two_chains_over_different_troops_to_the_same_square_are_two_actions() -> None:
    state = position("Te3 td4 tf4 td6 tf6 Kj1")
    chains = {n for n in notations(state) if ":" in n}
    assert {"e3:c5:e7", "e3:g5:e7"} <= chains


def test_7_8_a_chain_ends_on_the_final_rank() -> None:
    state = position("Tc8 td9 Kj1 ka1")
    after = act(state, "c8:e10")
    landed = next(v for v in RULES.pieces(after) if v.cell == "e10")
    assert "immobile" in landed.tags
    # Even where backward jumps exist, reaching the final rank ends the chain (7.8, 7.9).
    opts = options(backward_jumps="true")
    state = position("Tc8 td9 tf9 Kj1 ka1", opts=opts)
    chains = {n for n in notations(state) if ":" in n}
    assert chains == {"c8:e10"}


def test_7_8_final_rank_troop_is_immobile_but_blocks_lines() -> None:
    state = position("Tc10 ma10 Kj1", side="N")
    legal = notations(state)
    assert "Ma10-b10" in legal and "Ma10-d10" not in legal


def test_7_9_a_chain_may_end_on_the_enemy_citadel() -> None:
    state = position("Td8 te9 Ka1 mj10 ka10")
    after = act(state, "d8:f10")
    assert "Mj10xf10" in notations(after)  # capturable there, and only there (7.8)
    kept = act(after, "Mj10-j9")
    outcome = RULES.outcome(kept)
    assert outcome is not None and outcome.winner == "south"


def test_11_has_moved_is_tracked_per_troop_not_guessed_from_the_square() -> None:
    # A North Troop captures onto d2 (a South Rear square); South's Troop that reaches a
    # starting square by capturing is marked moved and may not double-step.
    state = position("Tc2 td3 kj10 Kj1")
    after = act(state, "c2xd3")
    view = next(v for v in RULES.pieces(after) if v.cell == "d3")
    assert view.moved
    after = act(after, "Kj10-i10")
    assert _troop(notations(after), "d3") == {"d3-d4"}
