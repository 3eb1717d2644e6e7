"""Combat (spec 7): every unit's attack and support geometry and values, the tallies,
advance rules, and the terrain of 10.4 with its options."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engine_service.rules.base import CombatTally, Event, EventKind
from engine_service.rules.board import SQUARE_DIRECTIONS
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    EndPhase,
    Move,
    NapoleonicAction,
    Support,
)
from engine_service.rules.napoleonic.combat import legal_attacks, legal_supports
from engine_service.rules.napoleonic.pieces import DIRECTION_SETS, UNIT_TYPES
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import (
    RULESET,
    STORM_D5,
    STORMING_D5,
    apply_batch,
)

TEST_OPTIONS = {"auto_skip_defence": "false"}


def start(setup: str, **options: str) -> NapoleonicState:
    return RULESET.new_game(RULESET.resolve_options({**TEST_OPTIONS, **options}), setup)


def fight(
    setup: str,
    attacks: Sequence[tuple[str, str]],
    supports: Sequence[tuple[str, str]] = (),
    **options: str,
) -> tuple[NapoleonicState, list[Event], dict[str, CombatTally]]:
    """Red declares `attacks`, black allocates `supports`; the state after resolution."""
    actions: list[NapoleonicAction] = [Attack("red", a, t) for a, t in attacks]
    actions += [EndPhase("red")]
    state, events = apply_batch(RULESET, start(setup, **options), actions)
    if state.phase is Phase.DEFENCE:
        more: list[NapoleonicAction] = [Support("black", s, t) for s, t in supports]
        state, later = apply_batch(RULESET, state, [*more, EndPhase("black")])
        events += later
    tallies = {
        e.combat.target: e.combat
        for e in events
        if e.kind is EventKind.COMBAT_RESOLVED and e.combat is not None
    }
    return state, events, tallies


def refused(state: NapoleonicState, actions: Sequence[NapoleonicAction]) -> RuleError:
    with pytest.raises(RuleError) as error:
        apply_batch(RULESET, state, actions)
    return error.value


def reason_refused(state: NapoleonicState, action: NapoleonicAction) -> str | None:
    """The reason `action` is refused in `state`, None when it is applied."""
    try:
        apply_batch(RULESET, state, [action])
    except RuleError as error:
        return error.reason
    return None


# --- the unit table ------------------------------------------------------------------------


def _neighbour(direction: str) -> str:
    dx, dy = SQUARE_DIRECTIONS[direction]
    return f"{chr(ord('d') + dx)}{4 + dy}"


@pytest.mark.parametrize("type_id", list(UNIT_TYPES))
def test_every_unit_attacks_into_its_own_directions(type_id: str) -> None:
    letter = UNIT_TYPES[type_id].letter
    ring = " ".join(f"{_neighbour(d)}=I#B_{d}" for d in SQUARE_DIRECTIONS)
    state = start(f"board 8x8; red: d4={letter}#R_X h1=G#R_G; black: {ring} a8=G#B_G")
    targets = {a.target for a in legal_attacks(state, "red") if a.attacker == "R_X"}
    assert targets == {f"B_{d}" for d in DIRECTION_SETS[UNIT_TYPES[type_id].attack_dirs]}


@pytest.mark.parametrize("type_id", list(UNIT_TYPES))
def test_every_unit_supports_into_its_own_directions(type_id: str) -> None:
    letter = UNIT_TYPES[type_id].letter
    ring = " ".join(f"{_neighbour(d)}=I#B_{d}" for d in SQUARE_DIRECTIONS)
    setup = f"board 8x8; red: h1=G#R_G; black: d4={letter}#B_X {ring} a8=G#B_G"
    state = start(setup)
    # A defence phase where every neighbour of d4 is under attack (the attackers do not
    # matter to which supports are legal).
    attacks = tuple((f"R{i}", f"B_{d}") for i, d in enumerate(DIRECTION_SETS["all"]))
    state = state.evolve(phase=Phase.DEFENCE, turn=type(state.turn)(attacks=attacks))
    supported = {s.supported for s in legal_supports(state, "black") if s.supporter == "B_X"}
    assert supported == {f"B_{d}" for d in DIRECTION_SETS[UNIT_TYPES[type_id].support_dirs]}


def test_attack_direction_message_names_the_rule() -> None:
    state = start("board 8x8; red: d2=A#R_A h1=G#R_G; black: e3=I#B_I a8=G#B_G")
    error = refused(state, [Attack("red", "R_A", "B_I")])
    assert error.reason == "ATTACK_DIRECTION_NOT_ALLOWED"
    assert error.message == "Artillery on d2 cannot attack e3: it attacks orthogonally only"


# --- the worked example ---------------------------------------------------------------------

COMPLEX = (
    "board 8x8; red: d4=A#R_A e4=C#R_C_A c4=I#R_I f4=C#R_C_F h1=G#R_G; "
    "black: d5=A#B_A c5=I#B_I_W e5=I#B_I_E d6=I#B_I_R a8=G#B_G"
)


def test_the_worked_example_tally_term_by_term() -> None:
    state, events, tallies = fight(
        COMPLEX,
        [("R_A", "B_A"), ("R_C_A", "B_A"), ("R_I", "B_I_W"), ("R_C_F", "B_I_E")],
        [("B_I_R", "B_A")],
    )
    artillery = tallies["B_A"]
    assert [(c.unit, c.kind, c.cell, c.value) for c in artillery.attackers] == [
        ("R_A", "artillery", "d4", 2),
        ("R_C_A", "cavalry", "e4", 1),
    ]
    assert [(c.unit, c.value) for c in artillery.supports] == [("B_I_R", 1)]
    assert (artillery.defence, artillery.bonuses) == (1, ())
    assert (artillery.attack_total, artillery.defence_total, artillery.eliminated) == (3, 2, True)
    resolved = next(e for e in events if e.kind is EventKind.COMBAT_RESOLVED)
    assert resolved.text == (
        "Combat at d5: black artillery attacked by artillery d4 2, cavalry e4 1 = 3 against "
        "defence 1 + support infantry d6 +1 = 2: eliminated."
    )
    assert [e.unit for e in events if e.kind is EventKind.ELIMINATED] == ["B_A"]
    assert state.phase is Phase.ADVANCE
    assert {a.unit for a in RULESET.legal_actions(state) if isinstance(a, Advance)} == {
        "R_A",
        "R_C_A",
    }


# --- supports ---------------------------------------------------------------------------------


def test_support_refusals() -> None:
    setup = (
        "board 8x8; red: d4=A#R_A b2=I#R_I h1=G#R_G; black: d5=I#B_I f6=I#B_I2 d6=I#B_I3 a8=G#B_G"
    )
    state, _ = apply_batch(RULESET, start(setup), [Attack("red", "R_A", "B_I"), EndPhase("red")])
    cases = {
        "SUPPORT_SELF": Support("black", "B_I", "B_I"),
        "SUPPORT_NOT_FRIENDLY": Support("black", "R_I", "B_I"),
        "SUPPORT_NOT_ADJACENT": Support("black", "B_I2", "B_I"),
        "UNKNOWN_UNIT": Support("black", "B_nobody", "B_I"),
        "SUPPORTED_NOT_UNDER_ATTACK": Support("black", "B_I3", "B_I2"),
    }
    for reason, action in cases.items():
        assert refused(state, [action]).reason == reason
    assert refused(state, [Support("black", "B_I", "B_I3")]).reason == "SUPPORTER_UNDER_ATTACK"


@pytest.mark.parametrize(
    ("blocking", "expected"), [("false", None), ("true", "SUPPORT_ACROSS_OBSTACLE")]
)
def test_obstacles_block_support(blocking: str, expected: str | None) -> None:
    setup = (
        "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I d6=I#B_I2 a8=G#B_G; obstacles: d5|d6"
    )
    state, _ = apply_batch(
        RULESET,
        start(setup, obstacles_block_support=blocking),
        [Attack("red", "R_A", "B_I"), EndPhase("red")],
    )
    assert reason_refused(state, Support("black", "B_I2", "B_I")) == expected


@pytest.mark.parametrize(("value", "total"), [("1", 2), ("2", 3)])
def test_cuirassier_support_value(value: str, total: int) -> None:
    setup = "board 8x8; red: d4=A#R_A e5=I#R_I h1=G#R_G; black: d5=I#B_I c6=K#B_K a8=G#B_G"
    _state, _events, tallies = fight(
        setup, [("R_A", "B_I"), ("R_I", "B_I")], [("B_K", "B_I")], cuirassier_support_value=value
    )
    assert tallies["B_I"].supports[0].value == int(value)
    assert tallies["B_I"].defence_total == total
    assert tallies["B_I"].eliminated is (total < 3)


# --- advance ------------------------------------------------------------------------------------


def test_one_unit_per_vacated_square() -> None:
    setup = "board 8x8; red: d4=I#R_I1 c5=I#R_I2 h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    state, _events, _t = fight(setup, [("R_I1", "B_I"), ("R_I2", "B_I")])
    state, _ = RULESET.apply(state, Advance("red", "R_I1", "d5"))
    assert refused(state, [Advance("red", "R_I2", "d5")]).reason == "ADVANCE_DUPLICATE_SQUARE"


@pytest.mark.parametrize(
    ("unmoved", "expected"), [("false", None), ("true", "ADVANCE_AFTER_MOVE_FORBIDDEN")]
)
def test_advance_requires_unmoved(unmoved: str, expected: str | None) -> None:
    setup = "board 8x8; red: d3=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    state, _ = apply_batch(
        RULESET,
        start(setup, advance_requires_unmoved=unmoved),
        [Move("red", "R_A", "d4"), Attack("red", "R_A", "B_I"), EndPhase("red"), EndPhase("black")],
    )
    assert reason_refused(state, Advance("red", "R_A", "d5")) == expected


@pytest.mark.parametrize(
    ("is_artillery", "expected"), [("true", "ADVANCE_TERRAIN_FORBIDDEN"), ("false", None)]
)
def test_horse_artillery_is_artillery(is_artillery: str, expected: str | None) -> None:
    setup = (
        "board 8x8; red: c4=H#R_H d4=I#R_I e5=I#R_I2 h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
        "redoubts: d5=black"
    )
    state, _e, tallies = fight(
        setup,
        [("R_H", "B_I"), ("R_I", "B_I"), ("R_I2", "B_I")],
        horse_artillery_is_artillery=is_artillery,
    )
    assert tallies["B_I"].attack_total == 3  # its attack is 1 either way
    assert tallies["B_I"].eliminated
    assert reason_refused(state, Advance("red", "R_H", "d5")) == expected


@pytest.mark.parametrize(("is_artillery", "value"), [("false", 2), ("true", 1)])
def test_heavy_infantry_is_artillery(is_artillery: str, value: int) -> None:
    setup = "board 8x8; red: d4=Y#R_Y h1=G#R_G; black: d5=I#B_I a8=G#B_G; redoubts: d5=black"
    _s, _e, tallies = fight(setup, [("R_Y", "B_I")], heavy_infantry_is_artillery=is_artillery)
    assert tallies["B_I"].attackers[0].value == value


@pytest.mark.parametrize(
    ("commanders", "winner"), [("guards", None), ("guards,foot_guards", "red")]
)
def test_commander_types(commanders: str, winner: str | None) -> None:
    setup = "board 8x8; red: c4=K#R_K d4=I#R_I h1=G#R_G; black: d5=F#B_F a8=G#B_G"
    state, _e, tallies = fight(setup, [("R_K", "B_F"), ("R_I", "B_F")], commander_types=commanders)
    assert tallies["B_F"].eliminated
    outcome = RULESET.outcome(state)
    assert (outcome.winner if outcome else None) == winner


# --- terrain (10.4) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("negation", "eliminated"), [("any_attacker", True), ("all_attackers", False)]
)
def test_hill_bonus_negation(negation: str, eliminated: bool) -> None:
    setup = "board 8x8; red: d4=I#R_I c4=C#R_C h1=G#R_G; black: d5=I#B_I a8=G#B_G; hills: d5 c4"
    _s, _e, tallies = fight(setup, [("R_I", "B_I"), ("R_C", "B_I")], hill_bonus_negation=negation)
    assert tallies["B_I"].attack_total == 2
    assert tallies["B_I"].eliminated is eliminated


@pytest.mark.parametrize(("maximum", "defence"), [("1", 2), ("2", 3)])
def test_elevation_bonus_max(maximum: str, defence: int) -> None:
    setup = STORMING_D5 + "hills: d5; redoubts: d5=black"
    _s, _e, tallies = fight(setup, STORM_D5, elevation_bonus_max=maximum)
    tally = tallies["B_I"]
    assert tally.attack_total == 3 and tally.attackers[0].note == "attacks at 1 into a redoubt"
    assert tally.defence_total == defence


@pytest.mark.parametrize(("stacking", "defence"), [("true", 3), ("false", 2)])
def test_terrain_bonus_stacking(stacking: str, defence: int) -> None:
    setup = (
        "board 8x8; red: c4=C#R_C e4=C#R_C2 d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
        "hills: d5; obstacles: d4|d5"
    )
    _s, _e, tallies = fight(
        setup, [("R_C", "B_I"), ("R_C2", "B_I"), ("R_A", "B_I")], terrain_bonus_stacking=stacking
    )
    tally = tallies["B_I"]
    assert tally.attack_total == 3 and tally.attackers[2].note == "attacks at 1 across an obstacle"
    assert tally.defence_total == defence
    assert tally.eliminated is (defence < 3)


@pytest.mark.parametrize(("holder", "defence"), [("any_occupant", 2), ("builder_only", 1)])
def test_redoubt_bonus_holder(holder: str, defence: int) -> None:
    # Red infantry holds a redoubt black built; black attacks it.
    setup = "board 8x8; red: d5=I#R_I h1=G#R_G; black: d6=I#B_I a8=G#B_G; redoubts: d5=black"
    state = RULESET.new_game(
        RULESET.resolve_options(
            {**TEST_OPTIONS, "first_player": "black", "redoubt_bonus_holder": holder}
        ),
        setup,
    )
    state, events = apply_batch(
        RULESET, state, [Attack("black", "B_I", "R_I"), EndPhase("black"), EndPhase("red")]
    )
    tally = next(e.combat for e in events if e.combat is not None)
    assert tally.defence_total == defence


def test_diagonal_obstacle_both_edges() -> None:
    setup = (
        "board 8x8; red: e4=C#R_C e6=C#R_C2 h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
        "obstacles: d5|e5 d5|d4"
    )
    # With both of d5's SE edges (east and south) walled, the attack from e4 is across;
    # the one from e6 (NE corner: north edge open) is not, so no obstacle bonus.
    _s, _e, tallies = fight(setup, [("R_C", "B_I"), ("R_C2", "B_I")], diagonal_obstacle_rule="both")
    assert tallies["B_I"].bonuses == ()
    _s, _e, tallies = fight(setup, [("R_C", "B_I")], diagonal_obstacle_rule="both")
    assert tallies["B_I"].bonuses == (("obstacle", 1),)
