"""Every [E] ruling and [O] option of spec section 14, plus the options that choose a battle.

`OPTION_SPECS` declares them with their documented defaults; `Rules` is their typed,
hot-path view, computed once per game and carried (uncompared) by every state.

Options this module adds to section 14:

- `scenario`: which battle of `scenarios.json` (board, armies, arrays, terrain). The
  scenario's own option values become the defaults of that game.
- `deployment`: `fixed` (the `setup` array), `attack_at_dawn` (10.1) or
  `marching_orders` (10.2).

The multiplayer options (10.6, docs/multiplayer.md) change nothing with two players:
`turn_order` (besides fixing who opens), `on_commander_loss`, `divided_command_turns`.
`auto_skip_advance_timeout` is a clock setting read by the matchmaker; the rules carry it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from engine_service.memo import memo
from engine_service.rules.napoleonic.pieces import UNIT_TYPES, UnitStats, stats_for
from engine_service.rules.napoleonic.scenarios import PALETTE, SCENARIOS
from engine_service.rules.options import OptionKind, Options, OptionSpec

_ROWS = re.compile(r"^([0-9]{1,2})-([0-9]{1,2})$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def parse_rows(text: str) -> tuple[int, int] | None:
    """Deployment rows 'N-M' (counted from each side's own edge), or None if malformed."""
    match = _ROWS.match(text.strip())
    if not match:
        return None
    low, high = int(match.group(1)), int(match.group(2))
    return (low, high) if 1 <= low <= high else None


def _check_rows(text: str) -> str | None:
    return None if parse_rows(text) else "not a row range N-M with 1 <= N <= M"


def _check_setup(text: str) -> str | None:
    value = text.strip()
    if _NAME.match(value):
        return None
    if ":" in value:  # a custom array; its squares and composition are checked by new_game
        return None
    return "neither a set-up name nor a custom array"


def _check_positive_or(word: str) -> Callable[[str], str | None]:
    def check(text: str) -> str | None:
        """None when `text` is the word or a positive integer, else the problem."""
        value = text.strip()
        if value == word or (value.isascii() and value.isdigit() and int(value) >= 1):
            return None
        return f"neither {word} nor a positive integer"

    return check


def _check_turn_order(text: str) -> str | None:
    value = text.strip()
    if value == "alternate_alliances":
        return None
    players = [p.strip() for p in value.split(",")]
    if len(set(players)) != len(players) or not set(players) <= set(PALETTE) or len(players) < 2:
        return "not alternate_alliances or a list naming every player once"
    return None


SETUP_NAMES = sorted({name for s in SCENARIOS.values() for name in s.setups})

OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "scenario",
        OptionKind.ENUM,
        "standard",
        "The battle: board, armies, arrays, terrain; its option values become the defaults.",
        ruling="5, 10",
        allowed=tuple(SCENARIOS),
    ),
    OptionSpec(
        "deployment",
        OptionKind.ENUM,
        "fixed",
        "How the armies deploy: the fixed `setup` array, Attack at Dawn (secret, "
        "simultaneous) or Marching Orders (alternate placement).",
        ruling="5.1, 10.1, 10.2",
        allowed=("fixed", "attack_at_dawn", "marching_orders"),
    ),
    OptionSpec(
        "first_player",
        OptionKind.ENUM,
        "red",
        "Who moves first (the text does not say); a player of the scenario.",
        ruling="6; ruling 2",
        allowed=tuple(PALETTE),
    ),
    OptionSpec(
        "setup",
        OptionKind.TEXT,
        "standard_chess_transposed",
        "The fixed array: a set-up name of the scenario, or a custom array "
        "'red: a2=A b2=C ...; black: a7=A ...' of the armies on their deployment rows.",
        ruling="5; ruling 1",
        allowed_text=(
            "a set-up name of the scenario ("
            + ", ".join(SETUP_NAMES)
            + ") or a custom array 'red: <square>=<letter> ...; black: ...'"
        ),
        check=_check_setup,
    ),
    OptionSpec(
        "deployment_rows",
        OptionKind.TEXT,
        "2-3",
        "Each side's deployment rows, counted from its own edge.",
        ruling="10.5",
        allowed_text="a row range N-M counted from each side's edge, e.g. 2-3",
        check=_check_rows,
    ),
    OptionSpec(
        "multi_step_mode",
        OptionKind.ENUM,
        "king_steps",
        "Two-square moves: two king steps through an empty square, or a straight line.",
        ruling="4.6; ruling 5",
        allowed=("king_steps", "straight_line"),
    ),
    OptionSpec(
        "pass_through_friendly",
        OptionKind.BOOL,
        "false",
        "Two-square movers may pass over their own side's units.",
        ruling="4.6; ruling 5",
    ),
    OptionSpec(
        "split_two_square_moves",
        OptionKind.BOOL,
        "false",
        "A two-square allowance may be used as two one-square moves around other moves.",
        ruling="4.3",
    ),
    OptionSpec(
        "variant_two_square_move",
        OptionKind.ENUM,
        "up_to_two",
        "Horse Artillery and Dragoons ('moves 2 squares'): up to two, or exactly two.",
        ruling="3.2; ruling 24",
        allowed=("up_to_two", "exactly_two"),
    ),
    OptionSpec(
        "horse_artillery_is_artillery",
        OptionKind.BOOL,
        "true",
        "Horse Artillery counts as artillery for the terrain rules.",
        ruling="3.2",
    ),
    OptionSpec(
        "heavy_infantry_is_artillery",
        OptionKind.BOOL,
        "false",
        "Heavy Infantry suffers the artillery-only terrain penalties.",
        ruling="3.2",
    ),
    OptionSpec(
        "cuirassier_support_value",
        OptionKind.INT,
        "1",
        "The support value of Cuirassiers / Horse Guards.",
        ruling="3.2; ruling 25",
        minimum=1,
        maximum=2,
    ),
    OptionSpec(
        "commander_types",
        OptionKind.LIST,
        "guards",
        "Unit types with the commander trait: eliminating one wins the game.",
        ruling="8; ruling 23",
        allowed=tuple(UNIT_TYPES),
    ),
    OptionSpec(
        "advance_requires_unmoved",
        OptionKind.BOOL,
        "false",
        "Only units that did not move this turn may advance after combat.",
        ruling="7.4; ruling 19",
    ),
    OptionSpec(
        "auto_skip_defence",
        OptionKind.BOOL,
        "true",
        "Skip the defence phase when the defender has no legal support.",
        ruling="6",
    ),
    OptionSpec(
        "auto_skip_advance_timeout",
        OptionKind.INT,
        "off",
        "Seconds after which the matchmaker's clock skips an unanswered advance phase.",
        ruling="6",
        minimum=1,
        zero_is_off=True,
    ),
    OptionSpec(
        "hill_bonus_negation",
        OptionKind.ENUM,
        "any_attacker",
        "The hill bonus is lost if any (or only if all) attackers stand on a hill or redoubt.",
        ruling="10.4; ruling 26",
        allowed=("any_attacker", "all_attackers"),
    ),
    OptionSpec(
        "hill_to_hill_moves",
        OptionKind.BOOL,
        "true",
        "A unit may move from one hill or redoubt straight onto another.",
        ruling="10.4; ruling 27",
    ),
    OptionSpec(
        "elevation_bonus_max",
        OptionKind.INT,
        "1",
        "The most a hill and a redoubt on one square add together.",
        ruling="10.4",
        minimum=1,
        maximum=2,
    ),
    OptionSpec(
        "redoubt_build_turns",
        OptionKind.INT,
        "3",
        "Builder turns of uninterrupted occupation to complete a redoubt (off: none can be "
        "built); the scenario sets it.",
        ruling="10.4",
        minimum=1,
        maximum=99,
        zero_is_off=True,
    ),
    OptionSpec(
        "redoubt_occupation",
        OptionKind.ENUM,
        "any_own_unit_at_end_of_turn",
        "What keeps a redoubt site going: any own unit on it at the end of each turn, or the "
        "unit that began it.",
        ruling="10.4",
        allowed=("any_own_unit_at_end_of_turn", "same_unit"),
    ),
    OptionSpec(
        "max_sites_per_side",
        OptionKind.TEXT,
        "unlimited",
        "How many redoubt sites a side may have under construction at once.",
        ruling="10.4",
        allowed_text="unlimited or a positive integer",
        check=_check_positive_or("unlimited"),
    ),
    OptionSpec(
        "redoubt_owner",
        OptionKind.ENUM,
        "builder",
        "Who owns a completed redoubt: its builder, or whoever last held it.",
        ruling="10.4",
        allowed=("builder", "last_occupant"),
    ),
    OptionSpec(
        "redoubt_bonus_holder",
        OptionKind.ENUM,
        "any_occupant",
        "Who gets a redoubt's defence bonus: any occupant, or only its owner's units.",
        ruling="10.4",
        allowed=("any_occupant", "builder_only"),
    ),
    OptionSpec(
        "diagonal_obstacle_rule",
        OptionKind.ENUM,
        "either",
        "A diagonal attack is across an obstacle if either (or both) of the defender's edges "
        "at that corner carry one.",
        ruling="10.4; ruling 29",
        allowed=("either", "both"),
    ),
    OptionSpec(
        "obstacles_block_movement",
        OptionKind.BOOL,
        "false",
        "Units may not move (or advance) across a border obstacle.",
        ruling="10.4; ruling 30",
    ),
    OptionSpec(
        "obstacles_block_support",
        OptionKind.BOOL,
        "false",
        "Units may not support across a border obstacle.",
        ruling="10.4; ruling 30",
    ),
    OptionSpec(
        "terrain_bonus_stacking",
        OptionKind.BOOL,
        "true",
        "Elevation and obstacle bonuses add up (up to +2); false: terrain adds at most +1.",
        ruling="10.4",
    ),
    OptionSpec(
        "attack_at_dawn_mode",
        OptionKind.ENUM,
        "commit_reveal",
        "Attack at Dawn secrecy: hash commitments then reveals, or arrays sealed by the "
        "engine's key.",
        ruling="10.1",
        allowed=("commit_reveal", "sealed"),
    ),
    OptionSpec(
        "illegal_reveal",
        OptionKind.ENUM,
        "forfeit",
        "An honestly committed but illegal array forfeits, or restarts the commit phase.",
        ruling="10.1",
        allowed=("forfeit", "redeploy"),
    ),
    OptionSpec(
        "placements_per_turn",
        OptionKind.INT,
        "1",
        "Marching Orders: units placed per placement turn.",
        ruling="10.2",
        minimum=1,
        maximum=99,
    ),
    OptionSpec(
        "first_placer",
        OptionKind.ENUM,
        "first_player",
        "Marching Orders: who places first.",
        ruling="10.2",
        allowed=("first_player", *PALETTE),
    ),
    OptionSpec(
        "turn_order",
        OptionKind.TEXT,
        "alternate_alliances",
        "Player ids in turn order (multiplayer); by default alliances alternate, starting "
        "with first_player.",
        ruling="10.6",
        allowed_text=(
            "alternate_alliances, or the scenario's player ids in order (red,black or "
            "black,red; red,black,blue,green)"
        ),
        check=_check_turn_order,
    ),
    OptionSpec(
        "on_commander_loss",
        OptionKind.ENUM,
        "remove_army",
        "Multiplayer: what happens to a player's army when its commander falls.",
        ruling="10.6",
        allowed=("remove_army", "army_stays_inert", "army_passes_to_ally"),
    ),
    OptionSpec(
        "divided_command_turns",
        OptionKind.ENUM,
        "separate_turns",
        "Multiplayer divided command: a turn per sub-commander, or one merged side-turn.",
        ruling="10.6",
        allowed=("separate_turns", "merged_side_turn"),
    ),
    OptionSpec(
        "draw_by_agreement",
        OptionKind.BOOL,
        "true",
        "Players may offer and accept draws.",
        ruling="8",
    ),
    OptionSpec(
        "turn_limit",
        OptionKind.INT,
        "off",
        "A draw (or material adjudication) after this many player-turns.",
        ruling="8",
        minimum=1,
        zero_is_off=True,
    ),
    OptionSpec(
        "adjudicate_by_material",
        OptionKind.BOOL,
        "false",
        "At the turn limit the side with more material wins (Inf 1, Cav 1, Art 2, Guards 0).",
        ruling="8",
    ),
    OptionSpec(
        "no_elimination_limit",
        OptionKind.INT,
        "off",
        "A draw after this many consecutive player-turns without an elimination.",
        ruling="8",
        minimum=1,
        zero_is_off=True,
    ),
    OptionSpec(
        "repetition_draw",
        OptionKind.INT,
        "off",
        "A draw when the same position (units, terrain, side to move) occurs this many times.",
        ruling="8",
        minimum=2,
        zero_is_off=True,
    ),
    OptionSpec(
        "insufficient_force_draw",
        OptionKind.BOOL,
        "false",
        "A draw when neither side's attack values can ever beat the enemy Guards' defence.",
        ruling="8",
    ),
)

TERMINATION_OFF = {
    "draw_by_agreement": "true",
    "turn_limit": "off",
    "adjudicate_by_material": "false",
    "no_elimination_limit": "off",
    "repetition_draw": "off",
    "insufficient_force_draw": "false",
}
PRESETS: Mapping[str, Mapping[str, str]] = {
    # Section 14: casual = all off except agreement; ranked = agreement + 60 + 3 + force.
    "casual": TERMINATION_OFF,
    "ranked": {
        **TERMINATION_OFF,
        "no_elimination_limit": "60",
        "repetition_draw": "3",
        "insufficient_force_draw": "true",
    },
}


@dataclass(frozen=True, eq=False)
class Rules:
    """The options of one game, typed for the rules' inner loops."""

    types: Mapping[str, UnitStats]
    straight_line: bool
    pass_through_friendly: bool
    split_moves: bool
    advance_requires_unmoved: bool
    auto_skip_defence: bool
    hill_negation_any: bool
    hill_to_hill: bool
    elevation_max: int
    redoubt_build_turns: int  # 0: redoubts cannot be built
    redoubt_same_unit: bool
    max_sites: int  # 0: unlimited
    redoubt_owner_last: bool
    redoubt_bonus_builder_only: bool
    diagonal_both: bool
    obstacles_block_movement: bool
    obstacles_block_support: bool
    terrain_stacking: bool
    rows: tuple[int, int]
    turn_limit: int
    adjudicate: bool
    no_elimination_limit: int
    repetition: int
    insufficient_force: bool
    commander_loss: str  # on_commander_loss (10.6)
    merged_side_turn: bool  # divided_command_turns = merged_side_turn (10.6)


@memo(256)  # keyed by the options of a game: every request of the game asks again
def rules_of(options: Options) -> Rules:
    """The typed view of a game's options."""
    sites = str(options["max_sites_per_side"])
    rows = parse_rows(str(options["deployment_rows"]))
    assert rows is not None  # checked by the option spec
    return Rules(
        types=stats_for(
            bool(options["horse_artillery_is_artillery"]),
            bool(options["heavy_infantry_is_artillery"]),
            int(options["cuirassier_support_value"]),
            tuple(options["commander_types"]),
            options["variant_two_square_move"] == "exactly_two",
        ),
        straight_line=options["multi_step_mode"] == "straight_line",
        pass_through_friendly=bool(options["pass_through_friendly"]),
        split_moves=bool(options["split_two_square_moves"]),
        advance_requires_unmoved=bool(options["advance_requires_unmoved"]),
        auto_skip_defence=bool(options["auto_skip_defence"]),
        hill_negation_any=options["hill_bonus_negation"] == "any_attacker",
        hill_to_hill=bool(options["hill_to_hill_moves"]),
        elevation_max=int(options["elevation_bonus_max"]),
        redoubt_build_turns=int(options["redoubt_build_turns"]),
        redoubt_same_unit=options["redoubt_occupation"] == "same_unit",
        max_sites=0 if sites == "unlimited" else int(sites),
        redoubt_owner_last=options["redoubt_owner"] == "last_occupant",
        redoubt_bonus_builder_only=options["redoubt_bonus_holder"] == "builder_only",
        diagonal_both=options["diagonal_obstacle_rule"] == "both",
        obstacles_block_movement=bool(options["obstacles_block_movement"]),
        obstacles_block_support=bool(options["obstacles_block_support"]),
        terrain_stacking=bool(options["terrain_bonus_stacking"]),
        rows=rows,
        turn_limit=int(options["turn_limit"]),
        adjudicate=bool(options["adjudicate_by_material"]),
        no_elimination_limit=int(options["no_elimination_limit"]),
        repetition=int(options["repetition_draw"]),
        insufficient_force=bool(options["insufficient_force_draw"]),
        commander_loss=str(options["on_commander_loss"]),
        merged_side_turn=options["divided_command_turns"] == "merged_side_turn",
    )
