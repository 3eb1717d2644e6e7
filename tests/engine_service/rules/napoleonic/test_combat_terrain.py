"""Combat on terrain (spec 10.4), term by term: the worked tests T29-T31 as tallies.

`test_spec_scenarios` checks each case's totals; here each bonus is checked by its source
and each attacker by its value and note, so a bonus granted for the wrong reason (or a
penalty applied to the wrong unit) fails even where the totals happen to agree.
"""

from __future__ import annotations

from engine_service.rules.base import EventKind
from engine_service.rules.napoleonic.actions import Advance, Attack, EndPhase, Support
from engine_service.rules.napoleonic.combat import (
    attack_value,
    legal_attacks,
    legal_supports,
    may_attack,
    may_support,
)
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, apply_batch
from tests.engine_service.rules.napoleonic.test_combat import fight, start

GUARDS = "h1=G#R_G; black: a8=G#B_G"


Terms = tuple[list[tuple[str, int, str]], tuple[tuple[str, int], ...], int, int, bool]


def terms(setup: str, attacks: list[tuple[str, str]], **options: str) -> Terms:
    """(attackers as (id, value, note), bonuses, attack total, defence total, eliminated)."""
    _state, _events, tallies = fight(setup, attacks, (), **options)
    tally = tallies["B_I"]
    return (
        [(a.unit, a.value, a.note) for a in tally.attackers],
        tally.bonuses,
        tally.attack_total,
        tally.defence_total,
        tally.eliminated,
    )


def test_T29a_a_hill_adds_one_to_its_defender() -> None:
    setup = f"board 8x8; red: d4=A#R_A {GUARDS} d5=I#B_I; hills: d5"
    assert terms(setup, [("R_A", "B_I")]) == ([("R_A", 2, "")], (("hill", 1),), 2, 2, False)


def test_T29b_the_hill_bonus_is_lost_when_any_attacker_stands_on_a_hill() -> None:
    setup = f"board 8x8; red: d4=A#R_A c4=C#R_C {GUARDS} d5=I#B_I; hills: d5 c4"
    _attackers, bonuses, attack, defence, eliminated = terms(
        setup, [("R_A", "B_I"), ("R_C", "B_I")]
    )
    assert (bonuses, attack, defence, eliminated) == ((), 3, 1, True)


def test_a_hill_keeps_its_bonus_when_no_attacker_stands_high() -> None:
    setup = f"board 8x8; red: d4=A#R_A c4=C#R_C {GUARDS} d5=I#B_I; hills: d5 a1"
    _a, bonuses, attack, defence, eliminated = terms(setup, [("R_A", "B_I"), ("R_C", "B_I")])
    assert (bonuses, attack, defence, eliminated) == ((("hill", 1),), 3, 2, True)


def test_an_attacker_in_a_redoubt_also_takes_away_the_hill_bonus() -> None:
    # "Functions as for Hills": attacking from a redoubt negates the defender's hill.
    setup = f"board 8x8; red: d4=I#R_I {GUARDS} d5=I#B_I; hills: d5; redoubts: d4=red"
    assert terms(setup, [("R_I", "B_I")]) == ([("R_I", 1, "")], (), 1, 1, False)


def test_T30a_an_obstacle_protects_and_weakens_artillery_firing_across_it() -> None:
    setup = f"board 8x8; red: d4=A#R_A {GUARDS} d5=I#B_I; obstacles: d4|d5"
    assert terms(setup, [("R_A", "B_I")]) == (
        [("R_A", 1, "attacks at 1 across an obstacle")],
        (("obstacle", 1),),
        1,
        2,
        False,
    )


def test_T30b_an_obstacle_outflanked_protects_no_more() -> None:
    setup = f"board 8x8; red: d4=A#R_A c5=I#R_I {GUARDS} d5=I#B_I; obstacles: d4|d5"
    assert terms(setup, [("R_A", "B_I"), ("R_I", "B_I")]) == (
        [("R_A", 1, "attacks at 1 across an obstacle"), ("R_I", 1, "")],
        (),
        2,
        1,
        True,
    )


def test_T30c_a_diagonal_attack_is_across_when_either_corner_edge_is_walled() -> None:
    setup = f"board 8x8; red: e4=C#R_C e6=C#R_C2 {GUARDS} d5=I#B_I; obstacles: d5|e5"
    assert terms(setup, [("R_C", "B_I"), ("R_C2", "B_I")]) == (
        [("R_C", 1, ""), ("R_C2", 1, "")],
        (("obstacle", 1),),
        2,
        2,
        False,
    )


def test_T30d_with_option_both_one_walled_edge_leaves_the_corner_open() -> None:
    setup = f"board 8x8; red: e4=C#R_C e6=C#R_C2 {GUARDS} d5=I#B_I; obstacles: d5|e5"
    _a, bonuses, attack, defence, eliminated = terms(
        setup, [("R_C", "B_I"), ("R_C2", "B_I")], diagonal_obstacle_rule="both"
    )
    assert (bonuses, attack, defence, eliminated) == ((), 2, 1, True)


def test_an_obstacle_weakens_only_artillery() -> None:
    # Cuirassiers attack at 2 and are no artillery: across an obstacle they keep their 2.
    setup = f"board 8x8; red: c4=K#R_K {GUARDS} d5=I#B_I; obstacles: d5|c5"
    assert terms(setup, [("R_K", "B_I")]) == ([("R_K", 2, "")], (("obstacle", 1),), 2, 2, False)


def test_artillery_already_at_one_gets_no_penalty_note() -> None:
    # Horse artillery (artillery trait, attack 1) across an obstacle: still 1, nothing noted.
    setup = f"board 8x8; red: c4=H#R_H {GUARDS} d5=I#B_I; obstacles: d5|c5"
    assert terms(setup, [("R_H", "B_I")]) == ([("R_H", 1, "")], (("obstacle", 1),), 1, 2, False)


def test_T31a_artillery_attacks_a_redoubt_at_one() -> None:
    setup = f"board 8x8; red: d4=A#R_A c5=I#R_I e5=I#R_I2 {GUARDS} d5=I#B_I; redoubts: d5=black"
    assert terms(setup, [("R_A", "B_I"), ("R_I", "B_I"), ("R_I2", "B_I")]) == (
        [("R_A", 1, "attacks at 1 into a redoubt"), ("R_I", 1, ""), ("R_I2", 1, "")],
        (("redoubt", 1),),
        3,
        2,
        True,
    )


def test_artillery_into_a_redoubt_across_an_obstacle_is_halved_once() -> None:
    # No stacking of the two penalties: the minimum is 1.
    setup = f"board 8x8; red: d4=A#R_A {GUARDS} d5=I#B_I; redoubts: d5=black; obstacles: d4|d5"
    assert terms(setup, [("R_A", "B_I")]) == (
        [("R_A", 1, "attacks at 1 into a redoubt and across an obstacle")],
        (("redoubt", 1), ("obstacle", 1)),
        1,
        3,
        False,
    )


def test_a_redoubt_on_a_hill_gives_one_elevation_bonus() -> None:
    setup = f"board 8x8; red: d4=I#R_I {GUARDS} d5=I#B_I; hills: d5; redoubts: d5=black"
    assert terms(setup, [("R_I", "B_I")])[1:] == ((("hill", 1),), 1, 2, False)


def test_an_attack_on_the_corner_square_a1_is_legal() -> None:
    # a1 is cell 0 of the board: the edge of the board must not hide it.
    state = start("board 8x8; red: a2=I#R_I h1=G#R_G; black: a1=I#B_I a8=G#B_G")
    assert Attack("red", "R_I", "B_I") in legal_attacks(state, "red")
    state = start("board 8x8; red: b1=I#R_I h1=G#R_G; black: a1=I#B_I a8=G#B_G")
    assert Attack("red", "R_I", "B_I") in legal_attacks(state, "red")


def test_support_allocated_event_names_the_supporter() -> None:
    setup = "board 8x8; red: d4=I#R_I h1=G#R_G; black: d5=I#B_I e5=I#B_S a8=G#B_G"
    state, _events = apply_batch(
        RULESET, start(setup), [Attack("red", "R_I", "B_I"), EndPhase("red")]
    )
    assert Support("black", "B_S", "B_I") in legal_supports(state, "black")
    _state, events = apply_batch(RULESET, state, [Support("black", "B_S", "B_I")])
    [event] = [e for e in events if e.kind is EventKind.SUPPORT_ALLOCATED]
    assert (event.side, event.cells, event.piece, event.unit) == (
        "black",
        ("e5", "d5"),
        "infantry",
        "B_S",
    )
    assert event.text == "Black infantry on e5 supports infantry on d5 (+1)."


def test_an_advance_onto_a_hill_counts_as_entering_it_this_turn() -> None:
    # 10.4 "not on and off in one turn" covers the post-combat advance: the unit that
    # advanced onto the hill is recorded as having entered it, one that did not is not.
    setup = (
        "board 8x8; red: d4=I#R_I c5=I#R_I2 e5=I#R_I3 h1=G#R_G; black: d5=I#B_I a8=G#B_G; hills: d5"
    )
    state, _events, tallies = fight(setup, [("R_I", "B_I"), ("R_I2", "B_I"), ("R_I3", "B_I")])
    assert tallies["B_I"].eliminated and state.phase is Phase.ADVANCE
    assert "R_I" not in state.turn.entered_elevation
    state, _ = RULESET.apply(state, Advance("red", "R_I", "d5"))
    assert state.turn.entered_elevation == frozenset({"R_I"})


def test_with_all_attackers_negation_every_attacker_on_high_ground_takes_the_hill() -> None:
    # hill_bonus_negation = all_attackers: the bonus goes only when every attacker stands
    # on a hill or redoubt (here both do; test_combat covers one of two).
    setup = f"board 8x8; red: d4=A#R_A c4=C#R_C {GUARDS} d5=I#B_I; hills: d5 c4 d4"
    _a, bonuses, attack, defence, eliminated = terms(
        setup, [("R_A", "B_I"), ("R_C", "B_I")], hill_bonus_negation="all_attackers"
    )
    assert (bonuses, attack, defence, eliminated) == ((), 3, 1, True)


def test_supports_cross_obstacles_unless_the_option_blocks_them() -> None:
    # 10.4: "movement and support are unaffected" by obstacles, by default.
    setup = "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I d6=I#B_S a8=G#B_G; obstacles: d5|d6"
    for blocking, listed in (("false", True), ("true", False)):
        state, _ = apply_batch(
            RULESET,
            start(setup, obstacles_block_support=blocking),
            [Attack("red", "R_A", "B_I"), EndPhase("red")],
        )
        assert (Support("black", "B_S", "B_I") in legal_supports(state, "black")) is listed


# -- the rule questions the AI asks (combat.may_attack, attack_value, may_support) --------


def stats_of(state: NapoleonicState, unit_id: str) -> UnitStats:
    unit = state.unit(unit_id)
    assert unit is not None
    return state.stats(unit)


def test_may_attack_is_adjacency_in_the_units_attack_directions() -> None:
    state = start("board 8x8; red: d4=A#R_A e4=C#R_C h1=G#R_G; black: a8=G#B_G")
    geo = state.geo
    artillery, cavalry = stats_of(state, "R_A"), stats_of(state, "R_C")
    d4, d5, e5, d6 = (geo.index[c] for c in ("d4", "d5", "e5", "d6"))
    assert may_attack(state, artillery, d4, d5)  # orthogonal: yes
    assert not may_attack(state, artillery, d4, e5)  # diagonal: artillery attacks orthogonally
    assert not may_attack(state, artillery, d4, d6)  # two squares away: never
    assert may_attack(state, cavalry, d4, e5) and not may_attack(state, cavalry, d4, d5)


def test_attack_value_is_the_units_own_unless_artillery_is_limited() -> None:
    setup = (
        "board 8x8; red: d4=A#R_A c4=K#R_K h1=G#R_G; black: a8=G#B_G; "
        "redoubts: d5=black; obstacles: c4|c5"
    )
    state = start(setup)
    geo = state.geo
    artillery, cuirassiers = stats_of(state, "R_A"), stats_of(state, "R_K")
    d4, d5, c4, c5, e4, e5 = (geo.index[c] for c in ("d4", "d5", "c4", "c5", "e4", "e5"))
    assert attack_value(state, artillery, d4, d5) == 1  # into a redoubt
    assert attack_value(state, artillery, c4, c5) == 1  # across an obstacle
    assert attack_value(state, artillery, e4, e5) == 2  # in full
    assert attack_value(state, cuirassiers, c4, c5) == 2  # only artillery is limited


def test_may_support_is_adjacency_in_the_support_directions_and_obstacles_by_option() -> None:
    setup = "board 8x8; red: d4=I#R_I h1=G#R_G; black: a8=G#B_G; obstacles: d4|d5"
    for blocking, across in (("false", True), ("true", False)):
        state = start(setup, obstacles_block_support=blocking)
        infantry = state.unit("R_I")
        assert infantry is not None
        geo = state.geo
        assert may_support(state, infantry, geo.index["c4"])  # orthogonal, open
        assert not may_support(state, infantry, geo.index["e5"])  # diagonal: not infantry's
        assert not may_support(state, infantry, geo.index["d6"])  # not adjacent
        assert may_support(state, infantry, geo.index["d5"]) is across
