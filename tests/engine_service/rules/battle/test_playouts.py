"""Random games to the end: invariants, notation, apply == play, records that replay."""

from __future__ import annotations

import random

import pytest

from engine_service.rules.battle import BattleState, Move
from engine_service.rules.game import Game
from engine_service.rules.record import parse_record, record_of, replay
from tests import seeds
from tests.engine_service.rules.battle.helpers import RULES

OPTION_SETS = [
    {},
    {"forced_reply": "lose_figure", "first_player": "defender"},
    {"artillery_blockers": "figures_only", "capture_onto_commanded_square": "allowed"},
    {
        "repetition_draw": "off",
        "no_capture_limit": "off",
        "uncovering_rule": "artillery_moves_only",
    },
]
MAX_PLIES = 600


def _check(state: BattleState, rng: random.Random) -> list[Move]:
    assert RULES.check_state(state) == []
    actions = RULES.legal_actions(state)
    for action in rng.sample(actions, min(len(actions), 4)):
        text = RULES.format_action(state, action)
        assert RULES.parse_action(state, text) == action
        after, events = RULES.apply(state, action)
        assert after == RULES.play(state, action) and events
        assert RULES.check_state(after) == []
    return actions


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "defaults")
@pytest.mark.usefixtures("playout_seed")
def test_random_games_to_the_end(options: dict[str, str], in_depth: bool) -> None:
    """`make test` plays one game of a rotating seed (`tests/seeds.py`), `-m slow` the
    fixed games, which end within MAX_PLIES unless nothing limits a game without captures
    (a random game may not)."""
    for seed in [0, 1] if in_depth else seeds.sampled(1):
        rng = random.Random(seed)
        initial = Game(RULES, RULES.new_game(RULES.resolve_options(options)))
        game, played = initial, []
        for _ in range(MAX_PLIES):
            actions = _check(game.state, rng)
            if game.outcome is not None:
                assert actions == []
                break
            action = rng.choice(actions)
            side = RULES.actor(game.state, action)
            game, _ = game.apply(side, action)
            played.append((side, action))
        if in_depth:
            assert game.outcome is not None or options.get("no_capture_limit") == "off"
        final, history = replay(RULES, parse_record(record_of(initial, played)))
        assert final.state == game.state and len(history) == len(played) + 1


def test_record_from_a_setup_position_replays() -> None:
    setup = "defender to move; attacker: A60 A40 I127 W134; defender: I16 I26 A1 T19 L45; quiet: 3"
    initial = Game(RULES, RULES.new_game(RULES.resolve_options({"no_capture_limit": "20"}), setup))
    rng = random.Random(7)
    game, played = initial, []
    for _ in range(30):
        actions = RULES.legal_actions(game.state)
        if not actions:
            break
        action = rng.choice(actions)
        side = RULES.actor(game.state, action)
        game, _ = game.apply(side, action)
        played.append((side, action))
    text = record_of(initial, played)
    assert '[Setup "W134A40A60I127t19a1i16i26l45 d quiet=3' in text
    assert '[Option "no_capture_limit=20"]' in text
    final, _ = replay(RULES, parse_record(text))
    assert final.state == game.state
