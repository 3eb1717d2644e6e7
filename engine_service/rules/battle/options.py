"""Engine options (section 15): every ruling of section 14 that changes play.

`OPTION_SPECS` is what ListGames shows; `Rules` is the same set of values as plain
attributes with the booleans the inner loops test, made once per set of options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine_service.memo import memo
from engine_service.rules.battle.pieces import ATTACKER, DEFENDER
from engine_service.rules.options import OptionKind, Options, OptionSpec


def _enum(name: str, allowed: tuple[str, ...], ruling: str, description: str) -> OptionSpec:
    return OptionSpec(
        name, OptionKind.ENUM, allowed[0], description, ruling=ruling, allowed=allowed
    )


def _flag(name: str, default: str, ruling: str, description: str) -> OptionSpec:
    return OptionSpec(name, OptionKind.BOOL, default, description, ruling=ruling)


OPTION_SPECS: Final[tuple[OptionSpec, ...]] = (
    _enum(
        "first_player",
        ("attacker", "defender"),
        "ruling 2",
        "Which army moves first from the initial position.",
    ),
    _enum(
        "forced_reply",
        ("relieve_one", "lose_figure"),
        "ruling 3",
        "relieve_one: with figures exposed at the start of the turn, the move must relieve at "
        "least one without exposing another. lose_figure: the move is free, but every figure "
        "(Light Infantry, Infantry of the Line, Cavalry) exposed at the start of the turn and "
        "still exposed after it is lost.",
    ),
    _flag(
        "duty_lapses_when_impossible",
        "true",
        "rulings 3, 10",
        "true: when no move relieves an exposed figure or answers the commanded Citadel, every "
        "legal move is allowed. false: only such moves are legal, possibly none.",
    ),
    _enum(
        "uncovering_rule",
        ("all_moves", "artillery_moves_only"),
        "ruling 4",
        "Which moves may not leave another figure of the mover's side newly exposed (A.2): "
        "every move, or only Artillery moves (the book's literal statement).",
    ),
    _enum(
        "capture_onto_commanded_square",
        ("forbidden", "allowed"),
        "ruling 6",
        "forbidden: a capture ending on a square where the capturer is exposed is illegal, "
        "like any move ending there (A.1). allowed: captures are exempt from A.1.",
    ),
    _enum(
        "wagon_capture_cover",
        ("any_attacking_battery", "ordinary_exposure_test"),
        "ruling 7",
        "any_attacking_battery: the Wagon cannot be taken while its square, after the "
        "capture, is in range of any attacking battery. ordinary_exposure_test: only A.1 "
        "applies to the capturer.",
    ),
    _enum(
        "wagon_occupancy",
        ("as_figures", "literal_text"),
        "ruling 8",
        "as_figures: the Wagon may not end a move exposed, like a figure. literal_text: it "
        "may not end on the 2nd or 3rd square of its own battery's line when that square is "
        "in enemy range, nor on a square next to both an attacking and a defending battery.",
    ),
    _enum(
        "wagon_forced_reply",
        ("any_relieving_move", "capture_battery_first"),
        "ruling 9",
        "any_relieving_move: an exposed Wagon is relieved like any figure. "
        "capture_battery_first: take a checking battery (relieving the Wagon) whenever "
        "possible, otherwise move the Wagon out of danger.",
    ),
    _enum(
        "citadel_duty",
        ("take_block_or_threaten", "take_or_block"),
        "ruling 10",
        "How the defender answers attacking Artillery commanding the Citadel: take a "
        "commanding battery, end the command (interpose or block), or (take_block_or_threaten "
        "only) threaten a legal capture of a commanding battery.",
    ),
    _enum(
        "protection_adjacency",
        ("oblique", "oblique_and_corner"),
        "ruling 11",
        "The 'first square next to' a battery: its four oblique neighbours, or also its four "
        "corner neighbours. Used for protection by one's own battery and for the square "
        "next to the enemy's.",
    ),
    _flag(
        "river_cuts_protection",
        "true",
        "ruling 12",
        "true: a battery across the river is not 'next to' a square (neither protects nor "
        "cancels protection). false: squares touching across the river count as next to it.",
    ),
    _enum(
        "artillery_blockers",
        ("any_piece", "figures_only"),
        "ruling 13",
        "Which pieces stop an artillery line: any piece (the Citadel and the Wagon "
        "included), or every piece but the Citadel and the Wagon.",
    ),
    _enum(
        "no_legal_move",
        ("draw", "loss"),
        "ruling 18",
        "The result when the side to move has no legal move: a draw, or a loss for it.",
    ),
    _flag("draw_by_agreement", "true", "ruling 19", "Whether the players may agree a draw."),
    OptionSpec(
        "repetition_draw",
        OptionKind.INT,
        "3",
        "Draw on the N-th occurrence of the same position with the same side to move; off (0) "
        "disables it.",
        ruling="ruling 19",
        minimum=2,
        maximum=100,
        zero_is_off=True,
    ),
    OptionSpec(
        "no_capture_limit",
        OptionKind.INT,
        "50",
        "Draw after N moves by each side without a capture; off (0) disables it.",
        ruling="ruling 19",
        minimum=1,
        maximum=1000,
        zero_is_off=True,
    ),
    _enum(
        "multiple_duties",
        ("discharge_any_one", "citadel_first"),
        "ruling 24",
        "With figures exposed and the Citadel commanded at once: any move discharging one "
        "duty without adding an exposure, or the commanded Citadel first.",
    ),
    _flag(
        "citadel_capture_ignores_uncovering",
        "true",
        "ruling 25",
        "true: taking the Citadel is legal even if it leaves another of the mover's figures "
        "newly exposed (A.2 does not apply). false: A.2 applies to it too.",
    ),
)
OPTION_NAMES: Final = tuple(spec.name for spec in OPTION_SPECS)

# The book's literal statements where a ruling chose a broader reading.
PRESETS: Final[dict[str, dict[str, str]]] = {
    "book_literal": {
        "uncovering_rule": "artillery_moves_only",
        "wagon_occupancy": "literal_text",
        "wagon_forced_reply": "capture_battery_first",
        "citadel_duty": "take_or_block",
    },
}


@dataclass(frozen=True, slots=True)
class Rules:
    """The options as plain attributes, for the move generator's inner loops."""

    first_player: int
    lose_figure: bool
    duty_lapses: bool
    uncover_all_moves: bool
    capture_onto_commanded: bool
    wagon_cover_any_battery: bool
    wagon_literal: bool
    wagon_capture_first: bool
    citadel_threat_answers: bool
    corner_adjacency: bool
    river_cuts_protection: bool
    citadel_and_wagon_block: bool
    no_legal_move_loses: bool
    repetition_draw: int
    no_capture_limit: int
    citadel_first: bool
    citadel_capture_ignores_uncovering: bool


@memo(256)
def rules_of(options: Options) -> Rules:
    """The `Rules` of a set of resolved options (cached: options are few and immutable)."""
    return Rules(
        first_player=ATTACKER if options["first_player"] == "attacker" else DEFENDER,
        lose_figure=options["forced_reply"] == "lose_figure",
        duty_lapses=bool(options["duty_lapses_when_impossible"]),
        uncover_all_moves=options["uncovering_rule"] == "all_moves",
        capture_onto_commanded=options["capture_onto_commanded_square"] == "allowed",
        wagon_cover_any_battery=options["wagon_capture_cover"] == "any_attacking_battery",
        wagon_literal=options["wagon_occupancy"] == "literal_text",
        wagon_capture_first=options["wagon_forced_reply"] == "capture_battery_first",
        citadel_threat_answers=options["citadel_duty"] == "take_block_or_threaten",
        corner_adjacency=options["protection_adjacency"] == "oblique_and_corner",
        river_cuts_protection=bool(options["river_cuts_protection"]),
        citadel_and_wagon_block=options["artillery_blockers"] == "any_piece",
        no_legal_move_loses=options["no_legal_move"] == "loss",
        repetition_draw=int(options["repetition_draw"]),
        no_capture_limit=int(options["no_capture_limit"]),
        citadel_first=options["multiple_duties"] == "citadel_first",
        citadel_capture_ignores_uncovering=bool(options["citadel_capture_ignores_uncovering"]),
    )
