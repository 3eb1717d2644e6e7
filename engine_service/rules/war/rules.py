"""One game's fixed rules: its options and Citadels, turned into lookup tables once.

Every state of a game points to the same `WarRules`, so the move generator reads plain
attributes and byte tables instead of option strings. Two `WarRules` are equal when their
options and Citadels are.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from engine_service.memo import memo
from engine_service.rules.options import Options
from engine_service.rules.war.board import (
    BACK_RANK,
    BOTH_WAY_JUMPS,
    CELLS,
    FORWARD_JUMPS,
    rank_of,
)
from engine_service.rules.war.pieces import (
    EMPTY,
    FLYING_MACHINE,
    KING,
    NORTH,
    SOUTH,
    TROOP_MOVED,
    kind_of,
    side_of,
)

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

    def may_land(self, side: int, cell: int, piece: int) -> bool:
        """A22: whether `piece` of `side` may end a move (or a jump) on `cell`."""
        return cell != self.no_landing[side] or kind_of(piece) == KING

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
def rules_for(options: Options, citadels: tuple[int, int]) -> WarRules:
    """The shared `WarRules` of these options and Citadels (built once, then reused)."""
    return WarRules(options, citadels)


class Turn(NamedTuple):
    """What the move generator works with: the rules, a board, the side to move and ep."""

    rules: WarRules
    board: bytes
    side: int
    ep: int
