"""The engine against the naive reference generator on positions of random playouts.

At every position the two must list the same legal actions and agree on the outcome;
after every action both must reach the same position. Over the option sets below more
than 1,000 positions are compared (each set checks at least MIN_POSITIONS).
"""

from __future__ import annotations

import random

import pytest

from .helpers import (
    RULES,
    neutral,
    options,
    outcome_pair,
    ref_position,
    reference_for,
    same_position,
)

MIN_POSITIONS = 150

OPTION_SETS = {
    "defaults": {},
    "huff": {"compulsion": "huff", "citadel_defence_overrides_compulsion": "true"},
    "en-passant+rear": {"en_passant": "displacement_only", "double_step": "rear_troops_only"},
    "jumps": {
        "backward_jumps": "true",
        "jump_over_non_troops": "true",
        "longest_jump_required": "true",
    },
    "machines": {
        "flying_machine_capturable": "true",
        "flying_machine_blocks_sliders": "false",
        "horse_leaps_flying_machine": "false",
        "placement_first_turn": "false",
    },
    "citadel+pass+draws": {
        "own_men_on_own_citadel": "false",
        "citadel_defence_overrides_compulsion": "true",
        "passing_allowed": "true",
        "repetition_draw": "2",
        "no_progress_limit": "6",
        "no_legal_move": "draw",
    },
    "layout": {
        "first_player": "north",
        "north_layout": "rotate_180",
        "troop_parity": "rear_acegi",
        "back_rank": ".MHCGKCHM.",
    },
}


def _compare(opts: dict[str, str], seeds: range, plies: int) -> int:
    compared = 0
    for seed in seeds:
        rng = random.Random(f"reference-{seed}")
        state = RULES.new_game(options(**opts))
        ref = reference_for(state)
        mirror = ref_position(state)
        for ply in range(plies):
            engine_actions = RULES.legal_actions(state)
            assert {neutral(a) for a in engine_actions} == set(ref.legal(mirror)), (
                seed,
                ply,
                RULES.setup_text(state),
            )
            assert outcome_pair(RULES.outcome(state)) == ref.outcome(mirror)
            compared += 1
            if not engine_actions:
                break
            action = rng.choice(engine_actions)
            state = RULES.play(state, action)
            mirror = ref.apply(mirror, neutral(action))
            assert same_position(mirror, ref_position(state)), (seed, ply)
    return compared


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_engine_matches_reference(name: str) -> None:
    assert _compare(OPTION_SETS[name], range(4), 80) >= MIN_POSITIONS


def test_engine_matches_reference_with_placement_then_move() -> None:
    # Each position here has thousands of actions, so fewer positions.
    opts = {"placement_uses_turn": "false", "compulsion": "huff"}
    assert _compare(opts, range(2), 12) >= 20
