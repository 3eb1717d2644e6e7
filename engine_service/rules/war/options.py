"""Engine options of The Game of War: every ruling of section 16, with its default, and
the tables the rules read from them.

A corrected reading of the 1910 rulebook becomes a change of default here, not a rewrite.
`back_rank` and `initial_position` are checked as text (their allowed values cannot be
listed); every other option is a boolean, an enum or an integer.

Every state of a game points to the same `WarRules` (`rules_of`): the options and the
Citadels turned into lookup tables once, so the move generator reads plain attributes and
byte tables instead of option strings. Two `WarRules` are equal when their options and
Citadels are.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from engine_service.memo import memo
from engine_service.rules.options import OptionKind, Options, OptionSpec
from engine_service.rules.war.board import (
    BACK_RANK,
    BOTH_WAY_JUMPS,
    CELLS,
    FORWARD_JUMPS,
    rank_of,
    relative_rank,
)
from engine_service.rules.war.pieces import (
    EMPTY,
    FLYING_MACHINE,
    NORTH,
    SOUTH,
    TROOP,
    TROOP_MOVED,
    code,
    kind_of,
    side_of,
)
from engine_service.rules.war.setup import (
    TROOP_RANKS,
    SetupError,
    derived_setup_text,
    parse_setup,
)

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
        setup = parse_setup(text, initial=True)
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


CODES: Final = 32  # table stride: index = (cell << 5) | code


class WarRules:
    """The options of one game and what they mean for move generation, as tables."""

    __slots__ = (
        "_hash",
        "backward_jumps",
        "capture",
        "citadel_override",
        "citadels",
        "en_passant",
        "first_player",
        "fm_capturable",
        "horse_leaps_fm",
        "huff",
        "jumpable",
        "jumps",
        "longest_jump",
        "no_landing",
        "no_move_draw",
        "options",
        "passable",
        "passing",
        "placement_cells",
        "placement_first_turn",
        "placement_uses_turn",
        "plain",
        "quiet_limit",
        "rear_only_double_step",
        "repetition",
        "troop_starts",
    )

    def __init__(self, options: Options, citadels: tuple[int, int]) -> None:
        self.options = options
        self.citadels = citadels
        self.first_player = SOUTH if options["first_player"] == "south" else NORTH
        self.fm_capturable: bool = options["flying_machine_capturable"]
        self.horse_leaps_fm: bool = options["horse_leaps_flying_machine"]
        self.placement_uses_turn: bool = options["placement_uses_turn"]
        self.placement_first_turn: bool = options["placement_first_turn"]
        self.huff = options["compulsion"] == "huff"
        self.citadel_override: bool = options["citadel_defence_overrides_compulsion"]
        self.longest_jump: bool = options["longest_jump_required"]
        self.backward_jumps: bool = options["backward_jumps"]
        self.rear_only_double_step = options["double_step"] == "rear_troops_only"
        self.en_passant = options["en_passant"] == "displacement_only"
        self.passing: bool = options["passing_allowed"]
        self.no_move_draw = options["no_legal_move"] == "draw"
        self.repetition: int = options["repetition_draw"]
        self.quiet_limit: int = 2 * options["no_progress_limit"]  # N moves by each side
        # A22: with own_men_on_own_citadel = false, no man but the King may land there.
        own_ok: bool = options["own_men_on_own_citadel"]
        self.no_landing = (-1, -1) if own_ok else citadels
        self.jumps = BOTH_WAY_JUMPS if self.backward_jumps else FORWARD_JUMPS
        self.capture = (self._capture_table(SOUTH), self._capture_table(NORTH))
        jump_any: bool = options["jump_over_non_troops"]
        self.jumpable = (
            self._jumpable_table(SOUTH, jump_any),
            self._jumpable_table(NORTH, jump_any),
        )
        blocks: bool = options["flying_machine_blocks_sliders"]
        self.passable = bytes(
            1 if not blocks and code != EMPTY and kind_of(code) == FLYING_MACHINE else 0
            for code in range(CODES)
        )
        self.placement_cells = tuple(c for c in range(CELLS) if c not in citadels)
        # Section 11: a Troop that has not moved stands where its side's Troops start: on
        # its Troop ranks, or where the options' initial position puts one.
        start = parse_setup(derived_setup_text(options), initial=True).board
        self.troop_starts = tuple(
            frozenset(
                cell
                for cell in range(CELLS)
                if relative_rank(side, cell) in TROOP_RANKS or start[cell] == code(side, TROOP)
            )
            for side in (SOUTH, NORTH)
        )
        # The common case takes the fast paths of `play` and of the move generator.
        self.plain = not self.huff and self.placement_uses_turn
        self._hash = hash((options, citadels))

    def capturable(self, attacker: int, cell: int, target: int) -> bool:
        """Section 5: may `attacker` capture the man coded `target` standing on `cell`?"""
        if target == EMPTY or side_of(target) == attacker or target >= CODES:
            return False
        kind = kind_of(target)
        if kind == FLYING_MACHINE:
            return self.fm_capturable  # A5
        # 5.2 / 7.8: a Troop on its own final rank (the attacker's back rank) is immune,
        # except on the attacker's Citadel.
        return not (
            kind <= TROOP_MOVED
            and rank_of(cell) == BACK_RANK[attacker]
            and cell != self.citadels[attacker]
        )

    def _capture_table(self, attacker: int) -> bytes:
        return bytes(
            1 if self.capturable(attacker, cell, code) else 0
            for cell in range(CELLS)
            for code in range(CODES)
        )

    def _jumpable_table(self, attacker: int, any_man: bool) -> bytes:
        """7.4 / A16: the men a Troop may jump: enemy Troops, or any capturable enemy man."""
        return bytes(
            1
            if self.capturable(attacker, cell, code) and (any_man or kind_of(code) <= TROOP_MOVED)
            else 0
            for cell in range(CELLS)
            for code in range(CODES)
        )

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, WarRules)
            and self.citadels == other.citadels
            and self.options == other.options
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"WarRules({self.options.non_default()!r}, citadels={self.citadels!r})"


@memo(256)
def rules_of(options: Options, citadels: tuple[int, int]) -> WarRules:
    """The shared `WarRules` of these options and Citadels (built once, then reused)."""
    return WarRules(options, citadels)
