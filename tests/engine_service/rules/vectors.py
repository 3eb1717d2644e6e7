"""The positions of a game's conformance vectors (`tests/conformance/<game>/*.json`), for the
rules tests that check every one of them (each game's `test_check.py`, through
`compared_over`)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import RuleError
from engine_service.rules.position import read_position
from tests import seeds

CONFORMANCE = Path(__file__).parents[2] / "conformance"
SAMPLED = 5  # `make test` checks one vector position in this many, drawn from the run's seed

Position = TypeVar("Position")


def _positions_in(value: Any, game: str, found: set[str]) -> None:
    """Every position text of `game` in a JSON value, at any depth."""
    if isinstance(value, dict):
        if value.get("game") == game and isinstance(value.get("position"), str):
            found.add(value["position"])
        for item in value.values():
            _positions_in(item, game, found)
    elif isinstance(value, list):
        for item in value:
            _positions_in(item, game, found)


def readable_positions(rules: AnyRuleset) -> list[str]:
    """Every position text of the game's vectors (requests and answers) its rules read,
    sorted; the texts of refused positions left out."""
    texts: set[str] = set()
    for path in sorted((CONFORMANCE / rules.id).glob("*.json")):
        _positions_in(json.loads(path.read_text(encoding="utf-8")), rules.id, texts)
    readable = []
    for text in sorted(texts):
        try:
            read_position(rules, text)
        except RuleError:
            continue  # the vectors of refused positions
        readable.append(text)
    return readable


def compared_over(
    positions: list[Position], check: Callable[[Position, random.Random], int], in_depth: bool
) -> int:
    """How many actions `check` compared over the vectors' positions: every position in
    depth, one in `SAMPLED` (drawn from the run's seed) in the sample; the rng the checks
    draw from is the same run after run."""
    if not in_depth:
        (seed,) = seeds.sampled(1)
        positions = random.Random(seed).sample(positions, len(positions) // SAMPLED)
    rng = random.Random("check-vectors")
    return sum(check(position, rng) for position in positions)
