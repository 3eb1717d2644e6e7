"""The Game of War's required test scenarios (specification section 13) as positions and
the lines the book plays from them (see tests/engine_service/rules/book.py).

Unless a case says otherwise: only the men listed are on the board, South is to move, the
Citadels are f1 and f10 and no Flying Machine is in reserve. test_scenarios.py tests each
in depth from these positions; the conformance vectors replay them through the engine.
"""

from __future__ import annotations

from engine_service.rules.war import WarState
from tests.engine_service.rules.book import Example

from .helpers import RULES, options, setup_text

EN_PASSANT = {"en_passant": "displacement_only"}

EXAMPLES: dict[str, Example] = {
    "13.1-compulsion": Example(
        setup_text("Tc5 td6 Md1", reserves="F:-"),
        {
            "displacement": (
                "! south c5-c6 CAPTURE_COMPULSORY",
                "! south Md1-d2 CAPTURE_COMPULSORY",
                "! south Md1-a1 CAPTURE_COMPULSORY",
                "! south F@e5 CAPTURE_COMPULSORY",
                "south c5xd6",
            ),
            "jump": ("south c5:e7",),
            "mortar": ("south Md1xd6",),
        },
    ),
    "13.2-a-chain-must-continue": Example(
        setup_text("Ta3 tb4 td6"),
        {
            "chain": ("! south a3:c5 JUMP_CHAIN_INCOMPLETE", "south a3:c5:e7"),
            "displacement": ("south a3xb4",),
        },
    ),
    "13.3-no-maximum-rule": Example(
        setup_text("Te3 td4 tf4 th6"),
        {"one-capture": ("south e3:c5",), "two-captures": ("south e3:g5:i7",)},
    ),
    "13.4-no-backward-jump": Example(
        setup_text("Td5 tc4"),
        {"step": ("! south d5:b3 ILLEGAL_MOVE_GEOMETRY", "south d5-d6")},
    ),
    "13.5-jumps-only-over-enemy-troops": Example(
        setup_text("Td5 he6"),
        {
            "capture": ("! south d5:f7 ILLEGAL_MOVE_GEOMETRY", "south d5xe6"),
            "step": ("south d5-d6",),
        },
    ),
    "13.6a-final-rank-immunity": Example(
        setup_text("tc1 Ma1"),
        {"mortar": ("! south Ma1xc1 TARGET_NOT_CAPTURABLE", "south Ma1-b1")},
    ),
    "13.6b-troop-on-the-south-citadel": Example(
        setup_text("tg2 Kf1 Ma1 kj10", side="N"),
        {
            "not-captured": ("north g2xf1", "south Ma1-a2"),
            "captured": ("north g2xf1", "south Ma1xf1"),
        },
    ),
    "13.7-citadel-win": Example(
        setup_text("Kf1 Ta3 gf5", side="N"),
        {"play": ("north Gf5xf1", "south a3-a4")},
    ),
    "13.8a-no-placement-on-a-citadel-at-the-start": Example(
        "",
        {"place": ("! south F@f1 PLACEMENT_FORBIDDEN", "! south F@f10 PLACEMENT_FORBIDDEN")},
    ),
    "13.8a-no-placement-on-an-empty-citadel": Example(
        setup_text("Ka5 ka6 Tb3", reserves="FF:ff"),
        {
            "place": (
                "! south F@f1 PLACEMENT_FORBIDDEN",
                "! south F@f10 PLACEMENT_FORBIDDEN",
                "south F@e5",
            )
        },
    ),
    "13.8b-flying-machine-blocks-south-to-move": Example(
        setup_text("Fe5 ge8 Hd3 Me1"),
        {
            "mortar": ("! south Me1-e5 DESTINATION_OCCUPIED", "south Me1-e4"),
            "horse": ("! south Hd3-e5 DESTINATION_OCCUPIED", "south Hd3-c5"),
        },
        cells=("e1", "d3"),
    ),
    "13.8b-flying-machine-blocks-north-to-move": Example(
        setup_text("Fe5 ge8 Hd3 Me1", side="N"),
        {
            "general": (
                "! north Ge8-e4 PATH_BLOCKED",
                "! north Ge8xe5 TARGET_NOT_CAPTURABLE",
                "north Ge8-e6",
            )
        },
        cells=("e8",),
    ),
    "13.9-no-en-passant": Example(
        setup_text("Te7 td9", side="N"),
        {"double-step": ("north d9-d7", "! south e7xd8 ILLEGAL_MOVE_GEOMETRY")},
    ),
    "13.9-en-passant-displacement-only": Example(
        setup_text("Te7 td9", side="N"),
        {"double-step": ("north d9-d7", "south e7xd8")},
        options=EN_PASSANT,
    ),
    "13.10a-final-rank-troop-is-immune": Example(
        setup_text("Tc9 ma10"),
        {"step": ("south c9-c10", "! north Ma10xc10 TARGET_NOT_CAPTURABLE", "north Ma10-b10")},
    ),
    "13.10a-final-rank-troop-has-no-moves": Example(
        setup_text("Tc10 ma10 Kj1"),
        {"stuck": ("! south c10-c9 PIECE_IMMOBILE",)},
        cells=("c10",),
    ),
    "13.10b-troop-on-the-north-citadel": Example(
        setup_text("Tf9 ma10 Ka1"),
        {
            "not-captured": ("south f9-f10", "north Ma10-a9"),
            "captured": ("south f9-f10", "north Ma10xf10"),
        },
    ),
}


def start(name: str) -> WarState:
    """The starting position of a book example."""
    example = EXAMPLES[name]
    return RULES.new_game(options(**example.options), example.setup or None)
