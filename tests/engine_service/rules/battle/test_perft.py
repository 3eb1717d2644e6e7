"""perft counts (`perft.json`, run for every game by the conformance suite), cross-checked
live with the reference generator, and divide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine_service.rules.battle import reference
from tests.engine_service.rules.battle.helpers import RULES

DATA: list[dict[str, Any]] = json.loads((Path(__file__).parent / "perft.json").read_text())[
    "positions"
]


def test_divide_sums_to_perft() -> None:
    entry = DATA[2]
    state = RULES.new_game(RULES.resolve_options(entry["options"]), entry["setup"])
    split = RULES.divide(state, 2)
    assert sum(count for _, count in split) == entry["counts"][1]
    assert len(split) == entry["counts"][0]


@pytest.mark.parametrize("entry", DATA[2:5], ids=lambda e: e["name"].split(":")[0])
def test_reference_agrees_at_depth_two(entry: dict[str, Any]) -> None:
    state = RULES.new_game(RULES.resolve_options(entry["options"]), entry["setup"])
    position = {
        cell + 1: ("A" if piece >> 3 == 0 else "D", "-LICAWT"[piece & 7])
        for cell, piece in enumerate(state.board)
        if piece
    }
    side = "A" if state.side == 0 else "D"
    assert (
        reference.perft(position, side, reference.Opts(entry["options"]), 2) == entry["counts"][1]
    )
