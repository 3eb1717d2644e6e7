"""The positions of a game's conformance vectors (`tests/conformance/<game>/*.json`), for the
rules tests that check every one of them (each game's `test_check.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import RuleError
from engine_service.rules.position import read_position

CONFORMANCE = Path(__file__).parents[2] / "conformance"


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
