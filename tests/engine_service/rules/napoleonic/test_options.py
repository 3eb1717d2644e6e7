"""Engine options (spec 14): names, defaults, presets, refusals naming the option and its
allowed values, and a behaviour test for every option."""

from __future__ import annotations

import importlib

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import Place
from engine_service.rules.napoleonic.options import OPTION_SPECS
from engine_service.rules.napoleonic.scenarios import SCENARIOS
from engine_service.rules.options import OptionKind, OptionSpec
from tests.engine_service.rules.napoleonic.helpers import RULESET, spec_data

# Section 14's table: option -> default (as canonical text). redoubt_build_turns is the
# scenario's value ("e.g. 3"); the option's own default is 3 and the standard scenario,
# which has no terrain, turns it off.
SPEC_DEFAULTS = {
    "first_player": "red",
    "setup": "standard_chess_transposed",
    "deployment_rows": "2-3",
    "multi_step_mode": "king_steps",
    "pass_through_friendly": "false",
    "split_two_square_moves": "false",
    "variant_two_square_move": "up_to_two",
    "horse_artillery_is_artillery": "true",
    "heavy_infantry_is_artillery": "false",
    "cuirassier_support_value": "1",
    "commander_types": "guards",
    "advance_requires_unmoved": "false",
    "auto_skip_defence": "true",
    "auto_skip_advance_timeout": "off",
    "hill_bonus_negation": "any_attacker",
    "hill_to_hill_moves": "true",
    "elevation_bonus_max": "1",
    "redoubt_build_turns": "3",
    "redoubt_occupation": "any_own_unit_at_end_of_turn",
    "max_sites_per_side": "unlimited",
    "redoubt_owner": "builder",
    "redoubt_bonus_holder": "any_occupant",
    "diagonal_obstacle_rule": "either",
    "obstacles_block_movement": "false",
    "obstacles_block_support": "false",
    "terrain_bonus_stacking": "true",
    "attack_at_dawn_mode": "commit_reveal",
    "illegal_reveal": "forfeit",
    "placements_per_turn": "1",
    "first_placer": "first_player",
    "turn_order": "alternate_alliances",
    "on_commander_loss": "remove_army",
    "divided_command_turns": "separate_turns",
    "draw_by_agreement": "true",
    "turn_limit": "off",
    "adjudicate_by_material": "false",
    "no_elimination_limit": "off",
    "repetition_draw": "off",
    "insufficient_force_draw": "false",
}
ADDED = {"scenario": "standard", "deployment": "fixed"}

# Where each option's effect is tested (module: test function).
BEHAVIOUR = {
    "scenario": "test_options:test_option_scenario",
    "deployment": "test_deployment:test_commit_then_reveal_lays_out_both_arrays",
    "first_player": "test_turn_protocol:test_turn_starts_in_movement_with_the_first_player",
    "setup": "test_options:test_option_setup",
    "deployment_rows": "test_options:test_option_deployment_rows",
    "multi_step_mode": "test_movement:test_straight_line_mode_excludes_knight_offsets",
    "pass_through_friendly": "test_movement:test_enemies_block_even_when_friends_may_be_passed",
    "split_two_square_moves": (
        "test_movement:test_split_two_square_moves_lets_cavalry_finish_its_move_later"
    ),
    "variant_two_square_move": "test_movement:test_variant_two_square_move_exactly_two",
    "horse_artillery_is_artillery": "test_combat:test_horse_artillery_is_artillery",
    "heavy_infantry_is_artillery": "test_combat:test_heavy_infantry_is_artillery",
    "cuirassier_support_value": "test_combat:test_cuirassier_support_value",
    "commander_types": "test_combat:test_commander_types",
    "advance_requires_unmoved": "test_combat:test_advance_requires_unmoved",
    "auto_skip_defence": (
        "test_turn_protocol:test_auto_skip_defence_resolves_when_no_support_is_possible"
    ),
    "auto_skip_advance_timeout": "test_options:test_option_auto_skip_advance_timeout",
    "hill_bonus_negation": "test_combat:test_hill_bonus_negation",
    "hill_to_hill_moves": "test_movement:test_hill_to_hill_moves",
    "elevation_bonus_max": "test_combat:test_elevation_bonus_max",
    "redoubt_build_turns": "test_redoubts:test_a_redoubt_is_built_by_uninterrupted_occupation",
    "redoubt_occupation": "test_redoubts:test_units_may_be_swapped_on_a_site",
    "max_sites_per_side": "test_redoubts:test_max_sites_per_side",
    "redoubt_owner": "test_redoubts:test_redoubt_owner",
    "redoubt_bonus_holder": "test_combat:test_redoubt_bonus_holder",
    "diagonal_obstacle_rule": "test_combat:test_diagonal_obstacle_both_edges",
    "obstacles_block_movement": "test_movement:test_obstacles_block_movement",
    "obstacles_block_support": "test_combat:test_obstacles_block_support",
    "terrain_bonus_stacking": "test_combat:test_terrain_bonus_stacking",
    "attack_at_dawn_mode": "test_deployment:test_sealed_arrays_stay_secret_until_both_are_in",
    "illegal_reveal": "test_deployment:test_an_honest_but_illegal_reveal",
    "placements_per_turn": "test_deployment:test_placements_per_turn_and_first_placer",
    "first_placer": "test_deployment:test_placements_per_turn_and_first_placer",
    "turn_order": "test_options:test_option_turn_order",
    "on_commander_loss": "test_options:test_multiplayer_options_exist_with_their_defaults",
    "divided_command_turns": "test_options:test_multiplayer_options_exist_with_their_defaults",
    "draw_by_agreement": "test_endings:test_draw_by_agreement",
    "turn_limit": "test_endings:test_turn_limit_draws",
    "adjudicate_by_material": "test_endings:test_adjudicate_by_material",
    "no_elimination_limit": "test_endings:test_no_elimination_limit",
    "repetition_draw": "test_endings:test_repetition_draw",
    "insufficient_force_draw": "test_endings:test_insufficient_force_draw",
}

BAD_VALUES = {
    OptionKind.BOOL: "maybe",
    OptionKind.ENUM: "not-a-value",
    OptionKind.INT: "many",
    OptionKind.LIST: "generals",
    OptionKind.TEXT: "??",
}


def test_every_option_of_section_14_exists_with_its_default() -> None:
    specs = {spec.name: spec for spec in OPTION_SPECS}
    assert set(specs) == set(SPEC_DEFAULTS) | set(ADDED)
    for name, default in {**SPEC_DEFAULTS, **ADDED}.items():
        assert specs[name].default == default, name
        assert specs[name].description and specs[name].ruling, name
    resolved = RULESET.resolve_options({}).as_text()
    expected = {**SPEC_DEFAULTS, **ADDED, "redoubt_build_turns": "off"}
    assert resolved == expected


def test_the_tests_assume_the_defaults_but_auto_skip_defence() -> None:
    assumed = spec_data()["engine_options_for_tests"]
    for name, value in assumed.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if name == "auto_skip_defence":
            assert SPEC_DEFAULTS[name] == "true" and text == "false"
        else:
            assert SPEC_DEFAULTS[name] == text, name


def test_every_option_has_a_behaviour_test() -> None:
    assert set(BEHAVIOUR) == {spec.name for spec in OPTION_SPECS}
    for where in BEHAVIOUR.values():
        module, function = where.split(":")
        loaded = importlib.import_module(f"tests.engine_service.rules.napoleonic.{module}")
        assert callable(getattr(loaded, function)), where


@pytest.mark.parametrize("spec", OPTION_SPECS, ids=[spec.name for spec in OPTION_SPECS])
def test_a_bad_value_is_refused_naming_the_option_and_its_values(spec: OptionSpec) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.resolve_options({spec.name: BAD_VALUES[spec.kind]})
    assert error.value.reason == "INVALID_OPTION_VALUE"
    assert error.value.field == f"options.{spec.name}"
    assert f"option {spec.name}:" in error.value.message
    assert spec.describe_allowed() in error.value.message
    for value in spec.allowed if spec.kind is OptionKind.ENUM else ():
        assert value in error.value.message


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("cuirassier_support_value", "3"),
        ("elevation_bonus_max", "0"),
        ("placements_per_turn", "0"),
        ("repetition_draw", "1"),
        ("deployment_rows", "3-2"),
        ("max_sites_per_side", "0"),
        ("turn_order", "red,red"),
    ],
)
def test_out_of_range_values_are_refused(name: str, value: str) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.resolve_options({name: value})
    assert error.value.reason == "INVALID_OPTION_VALUE" and name in error.value.message


def test_unknown_options_and_presets_are_refused() -> None:
    with pytest.raises(RuleError) as error:
        RULESET.resolve_options({"fog_of_war": "true"})
    assert error.value.reason == "UNKNOWN_OPTION"
    with pytest.raises(RuleError) as error:
        RULESET.resolve_options({}, "blitz")
    assert error.value.reason == "UNKNOWN_PRESET" and "casual" in error.value.message


def test_option_scenario() -> None:
    for scenario in SCENARIOS.values():
        options = RULESET.resolve_options({"scenario": scenario.id})
        for name, value in scenario.options.items():
            assert options.as_text()[name] == value
        assert options["scenario"] == scenario.id
    grand = RULESET.new_game(RULESET.resolve_options({"scenario": "grand_battle"}))
    assert (grand.width, grand.height, len(grand.units)) == (12, 10, 50)
    # A caller's explicit value wins over the scenario's.
    explicit = RULESET.resolve_options({"scenario": "hill_and_stream", "redoubt_build_turns": "5"})
    assert explicit["redoubt_build_turns"] == 5


def test_option_setup() -> None:
    data = spec_data()
    for setup in [data["standard_setup"], *data["alternative_setups"]]:
        state = RULESET.new_game(RULESET.resolve_options({"setup": setup["id"]}))
        assert {(u.id, u.side, u.kind, state.geo.names[u.cell]) for u in state.units} == {
            (u["id"], u["side"], u["type"], u["square"]) for u in setup["units"]
        }
    # Any array of the fixed composition on each side's rows is accepted (5.3) ...
    custom = (
        "red: a2=I b2=I c2=I d2=I e2=I f2=I g2=I h2=I a3=C b3=C g3=C h3=C c3=A f3=A d3=G; "
        "black: a7=I b7=I c7=I d7=I e7=I f7=I g7=I h7=I a6=C b6=C g6=C h6=C c6=A f6=A e6=G"
    )
    state = RULESET.new_game(RULESET.resolve_options({"setup": custom}))
    assert state.by_id()["R_G"].cell == state.geo.index["d3"]
    # ... and nothing else: wrong rows, wrong composition, unknown names.
    for bad in (
        custom.replace("d3=G", "d4=G"),
        custom.replace("h3=C", "h3=I"),
        custom.replace("e6=G", "e6=G f5=I"),
        "no_such_array",
    ):
        with pytest.raises(RuleError) as error:
            RULESET.new_game(RULESET.resolve_options({"setup": bad}))
        assert error.value.reason == "INVALID_OPTION_VALUE" and error.value.field == "options.setup"
        assert "standard_chess_transposed" in error.value.message


def test_option_deployment_rows() -> None:
    wide = RULESET.new_game(
        RULESET.resolve_options({"scenario": "marching_orders", "deployment_rows": "1-3"})
    )
    squares = {a.cell for a in RULESET.legal_actions(wide) if isinstance(a, Place)}
    assert {"a1", "h3"} <= squares and "a4" not in squares
    with pytest.raises(RuleError) as error:
        RULESET.new_game(RULESET.resolve_options({"deployment_rows": "2-5"}))
    assert (
        error.value.reason == "INVALID_OPTION_VALUE"
        and error.value.field == "options.deployment_rows"
    )


def test_option_auto_skip_advance_timeout() -> None:
    # A clock setting: the rules carry it for the matchmaker and play is unchanged.
    timed = RULESET.new_game(RULESET.resolve_options({"auto_skip_advance_timeout": "30"}))
    plain = RULESET.new_game(RULESET.resolve_options({}))
    assert RULESET.options_of(timed)["auto_skip_advance_timeout"] == 30
    assert RULESET.legal_actions(timed) == RULESET.legal_actions(plain)


def test_option_turn_order() -> None:
    state = RULESET.new_game(
        RULESET.resolve_options({"turn_order": "black,red", "first_player": "black"})
    )
    assert state.turn_order == ("black", "red") and RULESET.to_act(state) == ("black",)
    with pytest.raises(RuleError) as error:
        RULESET.new_game(RULESET.resolve_options({"turn_order": "black,red"}))
    assert error.value.reason == "INVALID_OPTION_VALUE" and "first_player" in error.value.message


def test_multiplayer_options_exist_with_their_defaults() -> None:
    options = RULESET.resolve_options({})
    assert options["on_commander_loss"] == "remove_army"
    assert options["divided_command_turns"] == "separate_turns"
    # Two players: they change nothing yet, but are carried by every state.
    other = RULESET.resolve_options(
        {"on_commander_loss": "army_stays_inert", "divided_command_turns": "merged_side_turn"}
    )
    assert RULESET.options_of(RULESET.new_game(other))["on_commander_loss"] == "army_stays_inert"


def test_option_deployment_rows_of_a_single_row() -> None:
    """One row holds eight units: armies of eight deploy on it (fifteen could not, 10.5)."""
    options = RULESET.resolve_options({"scenario": "marching_orders", "deployment_rows": "3-3"})
    armies = "army red: 1G 7I; army black: 1G 7I"
    state = RULESET.new_game(options, f"board 8x8; {armies}")
    squares = {a.cell for a in RULESET.legal_actions(state) if isinstance(a, Place)}
    assert {"a3", "h3"} <= squares and not squares & {"a2", "h2", "a4"}
