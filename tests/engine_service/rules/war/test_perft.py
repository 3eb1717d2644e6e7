"""perft counts (perft.json) cross-checked against the reference generator.

The counts in perft.json were produced by the engine and by `reference.py` independently
before they were written down; the conformance suite's one perft runner makes the engine
keep producing them, and here the reference re-counts the shallow ones live.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .helpers import RULES, START, options, ref_position, reference_for
from .reference import perft as reference_perft

DATA: list[dict[str, Any]] = json.loads((Path(__file__).parent / "perft.json").read_text())[
    "positions"
]


def _state(entry: dict[str, Any]) -> Any:
    return RULES.new_game(options(**entry["options"]), entry["setup"])


@pytest.mark.parametrize("entry", DATA, ids=[e["name"][:40] for e in DATA])
def test_reference_agrees_at_depth_2(entry: dict[str, Any]) -> None:
    state = _state(entry)
    expected = entry["counts"][1]
    assert reference_perft(reference_for(state), ref_position(state), 2) == expected


def test_start_position_is_102_at_depth_1() -> None:
    """Section 11: 38 piece moves and 64 placements from the start position."""
    state = RULES.new_game(options(), START)
    actions = RULES.legal_actions(state)
    placements = [a for a in actions if RULES.format_action(state, a).startswith("F@")]
    assert (len(actions), len(placements)) == (102, 64)


def test_divide_sums_to_perft() -> None:
    state = RULES.new_game(options())
    split = RULES.divide(state, 2)
    assert sum(count for _, count in split) == 10267
    assert len(split) == 102
    # After F@e5 North keeps its 38 moves and has 63 squares left for its own machines.
    assert ("F@e5", 38 + 63) in split
