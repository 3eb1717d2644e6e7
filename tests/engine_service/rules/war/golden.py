"""The Game of War's golden scripts (see `tests/engine_service/rules/golden.py`)."""

from __future__ import annotations

from engine_service.rules import rulesets
from tests.engine_service.rules.golden import Script

RULESET = rulesets()["war"]
OPENING = ("south e3-e5", "north d9-d7", "south a3-a4", "north d7-d6")

SCRIPTS: dict[str, Script] = {
    "standard": Script(
        options={},
        notes=(
            "The default set-up: a double step, the compulsory capture (7.1) refused and "
            "then made by a jump, a Flying Machine refused on a Citadel and placed, a "
            "resignation.",
        ),
        lines=(
            *OPENING,
            "! south a4-a5",
            "south e5:c7",
            "! north F@f1",
            "north F@e4",
            "! south c7-c8",
            "south resign",
        ),
    ),
    "huff": Script(
        options={"compulsion": "huff"},
        notes=("compulsion = huff (A13): the capture is left, and the offender is huffed.",),
        lines=(
            *OPENING,
            "south a4-a5",
            "! south e5:c7",
            "north huff e5 d6-d5",
            "south c3-c4",
            "north d5xc4",
        ),
    ),
    "citadel": Script(
        options={},
        setup="k9/10/10/10/10/10/10/10/5M4/5K4 S -:-",
        notes=("Section 9: a Mortar enters North's Citadel and holds it through the reply.",),
        lines=(
            "! south Mf2-g3",
            "south Mf2-f10",
            "! north Ka10-f10",
            "north Ka10-b10",
        ),
    ),
}
