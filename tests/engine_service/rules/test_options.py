"""Engine options (`engine_service.rules.options`): how a text value is read, checked,
written back and described, and how defaults, presets and a caller's values combine.

Every ruling of the specifications is an option with its documented default (rules README,
"Rulings are engine options"); a bad name or value is refused with a message naming the
option and what it allows. The options are the real games' ones wherever a game has the
case; a few kinds no game declares (an integer without bounds, plain text) are built here.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import OptionKind, Options, OptionSpec, resolve_options

RULESETS = rulesets(bytes(range(32)))
WAR = RULESETS["war"]
BATTLE = RULESETS["battle"]
NAPOLEONIC = RULESETS["napoleonic"]


def spec(ruleset: Any, name: str) -> OptionSpec:
    return next(s for s in ruleset.option_specs if s.name == name)


def refused_value(option: OptionSpec, text: str) -> RuleError:
    with pytest.raises(RuleError) as refused:
        option.parse(text)
    assert refused.value.reason == Reason.INVALID_OPTION_VALUE
    assert refused.value.field == f"options.{option.name}"
    return refused.value


# --- reading a value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("Yes", True),
        ("on", True),
        ("ON", True),
        ("1", True),
        (" true ", True),
        ("false", False),
        ("no", False),
        ("NO", False),
        ("off", False),
        ("Off", False),
        ("0", False),
    ],
)
def test_a_switch_reads_the_usual_words_for_on_and_off(text: str, value: bool) -> None:
    assert spec(WAR, "draw_by_agreement").parse(text) is value


def test_a_switch_refuses_anything_else_naming_true_and_false() -> None:
    refused = refused_value(spec(WAR, "draw_by_agreement"), " maybe ")
    assert refused.message == (
        "option draw_by_agreement: 'maybe' is not a boolean; allowed: true, false"
    )


def test_a_choice_reads_one_of_its_values_exactly() -> None:
    option = spec(WAR, "no_legal_move")
    assert option.parse(" draw ") == "draw"
    refused = refused_value(option, "Draw")
    assert refused.message == (
        "option no_legal_move: 'Draw' is not one of the allowed values; allowed: loss, draw"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [("off", 0), ("OFF", 0), ("0", 0), ("2", 2), ("100", 100), (" 7 ", 7)],
)
def test_a_limit_that_can_be_off_reads_off_or_zero_as_off(text: str, value: int) -> None:
    assert spec(WAR, "repetition_draw").parse(text) == value


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1", "below the minimum 2"),
        ("-3", "below the minimum 2"),
        ("101", "above the maximum 100"),
        ("three", "not an integer"),
        ("2.5", "not an integer"),
    ],
)
def test_a_limit_outside_its_bounds_is_refused_with_the_bound(text: str, problem: str) -> None:
    refused = refused_value(spec(WAR, "repetition_draw"), text)
    assert refused.message == (
        f"option repetition_draw: '{text}' is {problem}; allowed: off (0) or an integer 2..100"
    )


def test_an_integer_that_cannot_be_off_refuses_zero_and_off() -> None:
    option = spec(NAPOLEONIC, "cuirassier_support_value")  # ruling 25: 1 or 2
    assert (option.parse("1"), option.parse("2")) == (1, 2)
    zero = refused_value(option, "0")
    assert zero.message == (
        "option cuirassier_support_value: '0' is below the minimum 1; allowed: an integer 1..2"
    )
    off = refused_value(option, "off")
    assert off.message == (
        "option cuirassier_support_value: 'off' is not an integer; allowed: an integer 1..2"
    )


def test_a_limit_without_a_maximum_takes_any_large_value() -> None:
    option = spec(NAPOLEONIC, "turn_limit")
    assert option.parse("1000000") == 1_000_000
    assert option.parse("off") == 0
    refused = refused_value(option, "-1")
    assert refused.message == (
        "option turn_limit: '-1' is below the minimum 1; allowed: off (0) or an integer 1.."
    )


def test_a_list_reads_its_items_trimmed_and_skips_empty_ones() -> None:
    option = spec(NAPOLEONIC, "commander_types")
    assert option.parse("guards") == ("guards",)
    assert option.parse(" guards , cavalry,,") == ("guards", "cavalry")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("guards,hussars,lancers", "unknown item 'hussars'"),
        ("guards cavalry", "unknown item 'guards cavalry'"),
        ("", "empty list"),
        (" , ", "empty list"),
    ],
)
def test_a_list_refuses_an_unknown_item_or_no_item(text: str, problem: str) -> None:
    refused = refused_value(spec(NAPOLEONIC, "commander_types"), text)
    assert refused.message == (
        f"option commander_types: {text.strip()!r} is {problem}; allowed: a comma-separated "
        "list of infantry, cavalry, artillery, guards, horse_artillery, dragoons, "
        "foot_guards, cuirassiers, heavy_infantry"
    )


def test_a_text_option_is_checked_by_its_rule() -> None:
    option = spec(WAR, "back_rank")  # 3.3 / A1
    assert option.parse(".MHCGKCHM.") == ".MHCGKCHM."
    refused = refused_value(option, "MHC.GK.CH")
    assert refused.message.startswith("option back_rank: 'MHC.GK.CH' is 9 characters long, not 10;")
    assert refused.message.endswith(f"allowed: {option.describe_allowed()}")


def test_a_value_refused_by_its_kind_is_not_checked_further() -> None:
    checked: list[str] = []

    def check(text: str) -> str | None:
        checked.append(text)
        return None

    option = OptionSpec("depth", OptionKind.INT, "1", "a depth", minimum=1, check=check)
    assert option.parse("3") == 3 and checked == ["3"]
    refused_value(option, "x")
    assert checked == ["3"]


def test_a_long_value_is_quoted_short_in_the_refusal() -> None:
    text = "x" * 50
    refused = refused_value(spec(WAR, "no_legal_move"), text)
    assert refused.message.startswith(f"option no_legal_move: {'x' * 40!r}… (50 characters) is ")


# --- describing what an option allows --------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "name", "allowed"),
    [
        (WAR, "draw_by_agreement", "true, false"),
        (BATTLE, "no_legal_move", "draw, loss"),
        (BATTLE, "no_capture_limit", "off (0) or an integer 1..1000"),
        (NAPOLEONIC, "elevation_bonus_max", "an integer 1..2"),
        (NAPOLEONIC, "auto_skip_advance_timeout", "off (0) or an integer 1.."),
        (
            WAR,
            "initial_position",
            "empty (derived from back_rank, troop_parity, north_layout) or a setup string",
        ),
    ],
)
def test_the_allowed_values_are_described_as_a_player_reads_them(
    ruleset: Any, name: str, allowed: str
) -> None:
    assert spec(ruleset, name).describe_allowed() == allowed


@pytest.mark.parametrize(
    ("option", "allowed"),
    [
        (OptionSpec("n", OptionKind.INT, "0", "any integer"), "an integer"),
        (OptionSpec("n", OptionKind.INT, "0", "at most 9", maximum=9), "an integer ..9"),
        (OptionSpec("n", OptionKind.INT, "0", "at least 0", minimum=0), "an integer 0.."),
        (OptionSpec("n", OptionKind.INT, "0", "off", zero_is_off=True), "off (0) or an integer"),
        (OptionSpec("n", OptionKind.TEXT, "", "free text"), "text"),
        (
            OptionSpec("n", OptionKind.LIST, "a", "items", allowed=("a",)),
            "a comma-separated list of a",
        ),
    ],
)
def test_kinds_no_game_declares_are_described_too(option: OptionSpec, allowed: str) -> None:
    assert option.describe_allowed() == allowed


def test_an_unbounded_integer_takes_any_integer() -> None:
    option = OptionSpec("n", OptionKind.INT, "0", "any integer")
    assert (option.parse("-5"), option.parse("0"), option.parse("12345")) == (-5, 0, 12345)


# --- writing a value back ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "name", "value", "text"),
    [
        (WAR, "draw_by_agreement", True, "true"),
        (WAR, "draw_by_agreement", False, "false"),
        (WAR, "repetition_draw", 0, "off"),
        (WAR, "repetition_draw", 3, "3"),
        (NAPOLEONIC, "redoubt_build_turns", 1, "1"),
        (NAPOLEONIC, "cuirassier_support_value", 2, "2"),
        (NAPOLEONIC, "commander_types", ("guards", "cavalry"), "guards,cavalry"),
        (WAR, "compulsion", "huff", "huff"),
    ],
)
def test_a_value_is_written_in_its_canonical_text_which_reads_back(
    ruleset: Any, name: str, value: Any, text: str
) -> None:
    option = spec(ruleset, name)
    assert option.format(value) == text
    assert option.parse(text) == value


# --- the options of a game ---------------------------------------------------------------------


def test_the_defaults_are_the_documented_ones_in_declaration_order() -> None:
    options = WAR.resolve_options({})
    names = [s.name for s in WAR.option_specs]
    assert list(options) == names and len(options) == len(names)
    assert list(options.as_text()) == names
    # Game of War 16: A24, A25.
    assert (options["no_legal_move"], options["repetition_draw"]) == ("loss", 3)
    assert (options["no_progress_limit"], options["draw_by_agreement"]) == (0, True)
    assert options.as_text()["no_progress_limit"] == "off"
    assert options.non_default() == {}


def test_a_caller_s_values_are_read_typed_and_only_they_differ_from_the_defaults() -> None:
    options = resolve_options(
        WAR.option_specs, {"repetition_draw": "off", "compulsion": "huff", "no_legal_move": "loss"}
    )
    assert (options["repetition_draw"], options["compulsion"]) == (0, "huff")
    assert options.non_default() == {"compulsion": "huff", "repetition_draw": "off"}


def test_an_unknown_option_is_refused_naming_every_option_in_order() -> None:
    with pytest.raises(RuleError) as refused:
        resolve_options(BATTLE.option_specs, {"first_player": "defender", "fog": "on"})
    names = ", ".join(s.name for s in BATTLE.option_specs)
    assert refused.value.reason == Reason.UNKNOWN_OPTION
    assert refused.value.message == f"unknown option 'fog'; options: {names}"
    assert refused.value.field == "options.fog"


def test_a_bad_value_among_the_caller_s_is_refused_naming_its_option() -> None:
    with pytest.raises(RuleError) as refused:
        resolve_options(WAR.option_specs, {"compulsion": "huff", "repetition_draw": "1"})
    assert refused.value.reason == Reason.INVALID_OPTION_VALUE
    assert refused.value.field == "options.repetition_draw"


def test_a_preset_overlays_the_defaults_and_the_caller_s_values_overlay_the_preset() -> None:
    huff = resolve_options(WAR.option_specs, {}, presets=WAR.presets, preset="checkers_huff")
    assert huff.non_default() == {"compulsion": "huff"}
    back = resolve_options(
        WAR.option_specs, {"compulsion": "legality"}, presets=WAR.presets, preset="checkers_huff"
    )
    assert back == WAR.resolve_options({})
    assert resolve_options(WAR.option_specs, {}, presets=WAR.presets, preset="") == back


def test_napoleonic_presets_switch_the_termination_options() -> None:
    # Napoleonic Chess 8/10: ranked = agreement + no_elimination_limit 60 + repetition 3 +
    # insufficient force.
    ranked = NAPOLEONIC.resolve_options({}, "ranked")
    assert (
        ranked["draw_by_agreement"],
        ranked["no_elimination_limit"],
        ranked["repetition_draw"],
        ranked["insufficient_force_draw"],
    ) == (True, 60, 3, True)


def test_an_unknown_preset_is_refused_naming_the_presets_in_order() -> None:
    with pytest.raises(RuleError) as refused:
        resolve_options(WAR.option_specs, {}, presets=WAR.presets, preset="blitz")
    assert refused.value.reason == Reason.UNKNOWN_PRESET
    assert refused.value.message == (
        "unknown preset 'blitz'; presets: checkers_huff, rotated_north, savard_en_passant"
    )
    assert refused.value.field == "preset"


@pytest.mark.parametrize("presets", [None, {}])
def test_a_preset_named_where_there_are_none_is_refused_saying_none(
    presets: dict[str, dict[str, str]] | None,
) -> None:
    with pytest.raises(RuleError) as refused:
        resolve_options(WAR.option_specs, {}, presets=presets, preset="ranked")
    assert refused.value.reason == Reason.UNKNOWN_PRESET
    assert refused.value.message == "unknown preset 'ranked'; presets: none"


def test_options_are_equal_by_their_values_whatever_the_text_said() -> None:
    spelt = WAR.resolve_options({"draw_by_agreement": "yes", "repetition_draw": "0"})
    plain = resolve_options(
        WAR.option_specs, {"draw_by_agreement": "true", "repetition_draw": "off"}
    )
    assert spelt == plain and hash(spelt) == hash(plain)
    assert spelt != WAR.resolve_options({})
    assert spelt != dict(spelt)  # a plain mapping of the same values is no Options
    different = {hash(WAR.resolve_options({"repetition_draw": str(n)})) for n in range(2, 12)}
    assert len(different) > 1


def test_a_copy_with_changed_values_keeps_the_rest() -> None:
    options = WAR.resolve_options({"compulsion": "huff"})
    changed = options.replace(repetition_draw=0, no_legal_move="draw")
    assert isinstance(changed, Options)
    assert changed.non_default() == {
        "compulsion": "huff",
        "no_legal_move": "draw",
        "repetition_draw": "off",
    }
    assert options["repetition_draw"] == 3  # the original is unchanged
    assert list(changed) == list(options)


def test_the_text_of_the_options_is_a_fresh_copy_each_time() -> None:
    options = WAR.resolve_options({})
    text = options.as_text()
    text["compulsion"] = "huff"
    assert options.as_text()["compulsion"] == "legality"
    assert repr(options) == f"Options({options.as_text()!r})"
