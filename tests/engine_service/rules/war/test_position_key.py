"""Reading a position works out its Zobrist key once; `check_state` alone still checks it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from engine_service import hotpath
from engine_service.rules.game import Game
from engine_service.rules.position import read_position, write_position
from engine_service.rules.war import consistency, start
from engine_service.rules.war.state import position_key

from .helpers import RULES, options, playout

# A position some plies into a random game (its history written as steps back).
*_, (STATE, _none) = playout(RULES.new_game(options()), random.Random("position-key"), 24)


def _counting(calls: list[int]) -> Callable[..., int]:
    def counted(*args: Any) -> int:
        calls.append(1)
        return position_key(*args)

    return counted


# Counted by replacing `position_key` where the source calls it: compiled, `start` calls it
# directly, so this runs against the pure-Python form (`make test` runs the War tests there).
@pytest.mark.skipif(hotpath.compiled(start), reason="counts calls in the pure-Python form")
def test_reading_a_position_works_out_its_key_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(start, "position_key", _counting(calls))
    monkeypatch.setattr(consistency, "position_key", _counting(calls))
    game = read_position(RULES, write_position(Game(RULES, STATE)))
    assert game.state == STATE
    assert len(calls) == 1


def test_check_state_still_finds_a_history_that_is_not_the_positions() -> None:
    state = STATE
    wrong = state._replace(history=(*state.history[:-1], state.history[-1] ^ 1))
    assert "the position history does not end with this position's key" in RULES.check_state(wrong)
