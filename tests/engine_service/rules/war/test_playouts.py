"""Random games to the end under default and non-default options: no invariant breaks."""

from __future__ import annotations

import random

import pytest

from .support import RULES, options

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


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_random_games_to_the_end(name: str) -> None:
    opts = options(**OPTION_SETS[name])
    finished = 0
    games = 2 if name == "place-then-move" else 3
    for seed in range(games):
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
    assert finished == games  # random games do end (mostly on a Citadel)
