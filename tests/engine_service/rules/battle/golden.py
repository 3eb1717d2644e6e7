"""The Game of Battle's golden scripts (see `tests/engine_service/rules/golden.py`)."""

from __future__ import annotations

from engine_service.rules import rulesets
from tests.engine_service.rules.golden import Script

RULESET = rulesets()["battle"]

SCRIPTS: dict[str, Script] = {
    "standard": Script(
        options={},
        notes=(
            "Plate 1's set-up: Light Infantry marches, a draw offered and declined, a resignation.",
        ),
        lines=(
            "attacker 101-67",
            "! defender 39-60",
            "defender 43-58",
            "attacker offer draw",
            "! attacker accept draw",
            "defender decline draw",
            "attacker 103-69",
            "defender 41-56",
            "! defender 56x58",
            "attacker 67-61",
            "defender resign",
        ),
    ),
    "wagon": Script(
        options={},
        setup=(
            "defender to move; attacker: W127 A110 I119 A106 I101 C102; "
            "defender: T19 I129 I94 C113 I108 A95 A92"
        ),
        notes=(
            "Plate 3 fig. 1 (12.8): the Wagon under cover, a check and the forced reply, "
            "the exchanges, and the Wagon taken.",
        ),
        lines=(
            "! defender 129x127",
            "defender 95-99",
            "! attacker 119-118",
            "attacker 102-111",
            "defender 99x106",
            "attacker 111x106",
            "defender 113x110",
            "attacker 106x110",
            "defender 129x127",
        ),
    ),
}
