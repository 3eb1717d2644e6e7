"""Game records through the shared record module: options + setup + notation replay exactly."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.record import parse_record, record_of, replay

from .helpers import RULES, options, position


def _random_game(opts: dict[str, str], seed: int, setup: str | None = None) -> tuple[Any, Any]:
    rng = random.Random(seed)
    initial: Game[Any] = Game(RULES, RULES.new_game(options(**opts), setup))
    game = initial
    played = []
    for _ in range(300):
        if game.outcome is not None:
            break
        action = rng.choice(game.legal_actions())
        side = game.actor(action)
        game, _ = game.apply(side, action)
        played.append((side, action))
    return initial, (game, played)


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"compulsion": "huff", "en_passant": "displacement_only", "repetition_draw": "off"},
        {"north_layout": "rotate_180", "first_player": "north", "no_progress_limit": "20"},
    ],
)
def test_a_record_replays_to_the_same_final_state(opts: dict[str, str]) -> None:
    for seed in range(3):
        initial, (game, played) = _random_game(opts, seed)
        text = record_of(initial, played)
        record = parse_record(text)
        assert record.setup == RULES.setup_text(initial.state)
        final, history = replay(RULES, record)
        assert final.state == game.state
        assert len(history) == len(played) + 1
        if game.outcome is not None:
            assert final.outcome == game.outcome
            assert record.result == game.outcome.message


def test_a_record_from_a_middlegame_setup_replays() -> None:
    start = position("Ta3 tb4 td6 Kj1 ka10 Mc1 gh8", reserves="F:f", extra="move=7")
    initial, (game, played) = _random_game({}, 5, RULES.setup_text(start))
    text = record_of(initial, played)
    assert "move=7" in text
    final, _ = replay(RULES, parse_record(text))
    assert final.state == game.state


def test_a_record_with_an_illegal_action_names_it() -> None:
    text = (
        '[Game "war"]\n[Setup "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/T1T1T1T1T1/'
        '1T1T1T1T1T/MHC1GK1CHM S FF:ff"]\n\n1. south e3-e5\n2. north e3-e4\n'
    )
    with pytest.raises(RuleError) as error:
        replay(RULES, parse_record(text))
    assert "action 2" in error.value.message and error.value.index == 1
