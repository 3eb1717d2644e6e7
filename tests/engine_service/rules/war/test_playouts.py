"""Random games to the end under default and non-default options: no invariant breaks."""

from __future__ import annotations

import random

import pytest

from tests import seeds

from .helpers import RULES, options

OPTION_SETS = {
    "defaults": {},
    "huff+ep": {"compulsion": "huff", "en_passant": "displacement_only"},
    "machines": {
        "flying_machine_capturable": "true",
        "flying_machine_blocks_sliders": "false",
        "horse_leaps_flying_machine": "false",
    },
    "jumps": {
        "backward_jumps": "true",
        "jump_over_non_troops": "true",
        "longest_jump_required": "true",
    },
    "draws": {
        "no_legal_move": "draw",
        "passing_allowed": "true",
        "repetition_draw": "2",
        "no_progress_limit": "10",
        "own_men_on_own_citadel": "false",
    },
    "place-then-move": {"placement_uses_turn": "false", "placement_first_turn": "false"},
}


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("name", list(OPTION_SETS))
@pytest.mark.usefixtures("playout_seed")
def test_random_games_to_the_end(name: str, in_depth: bool) -> None:
    """`make test` plays one game of a rotating seed (`tests/seeds.py`), `-m slow` the
    fixed games, which all end within 500 plies (a random game may not)."""
    opts = options(**OPTION_SETS[name])
    finished = 0
    fixed = [str(seed) for seed in range(2 if name == "place-then-move" else 3)]
    games = fixed if in_depth else seeds.sampled(1)
    for seed in games:
        rng = random.Random(f"playout-{name}-{seed}")
        state = RULES.new_game(opts)
        for _ in range(500):
            assert RULES.check_state(state) == []
            actions = RULES.legal_actions(state)
            outcome = RULES.outcome(state)
            assert (outcome is None) == bool(actions)
            assert (RULES.to_act(state) == ()) == (outcome is not None)
            if outcome is not None:
                finished += 1
                break
            for action in rng.sample(actions, min(5, len(actions))):
                text = RULES.format_action(state, action)
                assert RULES.parse_action(state, text) == action
                after, events = RULES.apply(state, action)
                assert after == RULES.play(state, action)
                assert events and all(event.text for event in events)
                assert RULES.check_state(after) == []
            state = RULES.play(state, rng.choice(actions))
    if in_depth:
        assert finished == len(games)  # random games do end (mostly on a Citadel)
