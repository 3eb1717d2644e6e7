"""Engine options of The Game of War: every ruling of section 16, with its default.

A corrected reading of the 1910 rulebook becomes a change of default here, not a rewrite.
`back_rank` and `initial_position` are checked as text (their allowed values cannot be
listed); every other option is a boolean, an enum or an integer.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from engine_service.rules.options import OptionKind, OptionSpec
from engine_service.rules.war.setup import SetupError, parse_setup

BACK_RANK_MEN: Final = Counter("KGMMHHCC..")
DEFAULT_BACK_RANK: Final = "MHC.GK.CHM"


def check_back_rank(text: str) -> str | None:
    """Section 3.3 / A1: ten squares holding K, G, M, M, H, H, C, C and two '.', King on e or f."""
    if len(text) != 10:
        return f"{len(text)} characters long, not 10"
    if Counter(text) != BACK_RANK_MEN:
        return "not exactly K, G, M, M, H, H, C, C and two '.'"
    if text.index("K") not in (4, 5):
        return "an order with the King off the central files e and f"
    return None


def check_initial_position(text: str) -> str | None:
    """A setup string in the section 3.2 format that can start a game (both Citadels known)."""
    if not text:
        return None
    try:
        setup = parse_setup(text)
    except SetupError as error:
        return f"not a valid setup string ({error})"
    if setup.citadels is None:
        kings = setup.king_cells()
        if None in kings:
            return "a position without both Kings and without citadels=<south>,<north>"
    return None


OPTION_SPECS: Final = (
    OptionSpec(
        "back_rank",
        OptionKind.TEXT,
        DEFAULT_BACK_RANK,
        "South's back rank from file a to j (North per north_layout); '.' = empty square",
        ruling="A1, 3.2",
        allowed_text=(
            "any 10-character order of K, G, M, M, H, H, C, C and two '.', King on e or f "
            "(e.g. MHC.GK.CHM, .MHCGKCHM., M.HCGKCH.M, MH.CGKC.HM, MHC.KG.CHM)"
        ),
        check=check_back_rank,
    ),
    OptionSpec(
        "troop_parity",
        OptionKind.ENUM,
        "rear_bdfhj",
        "which files the Rear Troops (rank 2) stand on; the Van (rank 3) takes the others",
        ruling="A2",
        allowed=("rear_bdfhj", "rear_acegi"),
    ),
    OptionSpec(
        "north_layout",
        OptionKind.ENUM,
        "mirror",
        "North's set-up: South's mirror image, or South turned through 180 degrees",
        ruling="A3",
        allowed=("mirror", "rotate_180"),
    ),
    OptionSpec(
        "initial_position",
        OptionKind.TEXT,
        "",
        "a setup string (section 3.2 format) overriding back_rank, troop_parity, north_layout",
        ruling="A1-A3",
        allowed_text="empty (derived from back_rank, troop_parity, north_layout) or a setup string",
        check=check_initial_position,
    ),
    OptionSpec(
        "first_player",
        OptionKind.ENUM,
        "south",
        "who moves first",
        ruling="A4",
        allowed=("south", "north"),
    ),
    OptionSpec(
        "flying_machine_capturable",
        OptionKind.BOOL,
        "false",
        "a placed Flying Machine can be captured by displacement by its owner's enemy",
        ruling="A5",
    ),
    OptionSpec(
        "horse_leaps_flying_machine",
        OptionKind.BOOL,
        "true",
        "a Horse may leap over a placed Flying Machine",
        ruling="A6",
    ),
    OptionSpec(
        "flying_machine_blocks_sliders",
        OptionKind.BOOL,
        "true",
        "General, Mortar, Cannon and a Troop's double step cannot pass a Flying Machine",
        ruling="A7",
    ),
    OptionSpec(
        "placement_uses_turn",
        OptionKind.BOOL,
        "true",
        "placing a Flying Machine is the whole turn (false: place, then move)",
        ruling="A8",
    ),
    OptionSpec(
        "placement_first_turn",
        OptionKind.BOOL,
        "true",
        "a Flying Machine may be placed on a side's first turn",
        ruling="A9",
    ),
    OptionSpec(
        "compulsion",
        OptionKind.ENUM,
        "legality",
        "legality: an exposed enemy Troop must be captured; huff: failing lets the enemy remove "
        "the Troop that should have jumped",
        ruling="7.1, A9, A11, A13",
        allowed=("legality", "huff"),
    ),
    OptionSpec(
        "citadel_defence_overrides_compulsion",
        OptionKind.BOOL,
        "false",
        "capturing an enemy man on your own Citadel also satisfies the compulsory capture",
        ruling="A12",
    ),
    OptionSpec(
        "longest_jump_required",
        OptionKind.BOOL,
        "false",
        "a jump chain must capture as many men as the longest chain available",
        ruling="A14",
    ),
    OptionSpec(
        "backward_jumps",
        OptionKind.BOOL,
        "false",
        "Troops may also jump diagonally backward",
        ruling="A15",
    ),
    OptionSpec(
        "jump_over_non_troops",
        OptionKind.BOOL,
        "false",
        "Troops may jump (and capture) any capturable enemy man, not only enemy Troops",
        ruling="A16",
    ),
    OptionSpec(
        "double_step",
        OptionKind.ENUM,
        "any_unmoved_troop",
        "which Troops may step two squares on their first move",
        ruling="A17",
        allowed=("any_unmoved_troop", "rear_troops_only"),
    ),
    OptionSpec(
        "en_passant",
        OptionKind.ENUM,
        "none",
        "capture in passing of a Troop that has just double-stepped",
        ruling="A18",
        allowed=("none", "displacement_only"),
    ),
    OptionSpec(
        "own_men_on_own_citadel",
        OptionKind.BOOL,
        "true",
        "a side's men other than its King may stand on its own Citadel",
        ruling="A22",
    ),
    OptionSpec(
        "passing_allowed",
        OptionKind.BOOL,
        "false",
        "a player may pass instead of moving",
        ruling="section 4",
    ),
    OptionSpec(
        "no_legal_move",
        OptionKind.ENUM,
        "loss",
        "what happens to a side that has no legal move",
        ruling="A24",
        allowed=("loss", "draw"),
    ),
    OptionSpec(
        "repetition_draw",
        OptionKind.INT,
        "3",
        "draw on the N-th occurrence of the same position (off: never)",
        ruling="A25",
        minimum=2,
        maximum=100,
        zero_is_off=True,
    ),
    OptionSpec(
        "no_progress_limit",
        OptionKind.INT,
        "off",
        "draw after N moves by each side with no capture, Troop move or Flying-Machine "
        "placement (suggested 100)",
        ruling="A25",
        minimum=1,
        maximum=10_000,
        zero_is_off=True,
    ),
    OptionSpec(
        "draw_by_agreement",
        OptionKind.BOOL,
        "true",
        "the players may agree a draw",
        ruling="A25",
    ),
)

# Named sets of non-default rulings, for players who want a known variant quickly.
PRESETS: Final = {
    "checkers_huff": {"compulsion": "huff"},
    "savard_en_passant": {"en_passant": "displacement_only"},
    "rotated_north": {"north_layout": "rotate_180"},
}
