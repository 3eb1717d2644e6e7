"""Napoleonic Chess's golden scripts (compared with their transcripts by the conformance
suite, `tests/engine_service/rules/test_conformance.py`)."""

from __future__ import annotations

from tests.engine_service.rules.napoleonic.golden import SCRIPTS


def test_the_three_required_kinds_of_game_are_scripted() -> None:
    assert {"standard", "terrain", "attack_at_dawn"} <= set(SCRIPTS)
