"""Random playouts to the end: every legal action applies, invariants hold, nothing throws.

Invariants after every action: the state is consistent (`check_state`), one unit per
square, no unit moves, attacks or supports twice in a turn, every combat tally adds up and
agrees with the eliminations, notation reads back, and `apply` equals the fast `play`.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from engine_service.rules.base import Event, EventKind
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.actions import Move
from engine_service.rules.napoleonic.state import NapoleonicState
from tests import seeds
from tests.engine_service.rules.napoleonic.helpers import SEALED_RULESET

CONFIGS = {
    "standard": {"turn_limit": "60"},
    "standard_tests": {"turn_limit": "60", "auto_skip_defence": "false"},
    "hill_and_stream": {"scenario": "hill_and_stream", "turn_limit": "60"},
    "attack_at_dawn": {"scenario": "attack_at_dawn", "turn_limit": "60"},
    "attack_at_dawn_sealed": {
        "scenario": "attack_at_dawn",
        "attack_at_dawn_mode": "sealed",
        "turn_limit": "60",
    },
    "marching_orders": {"scenario": "marching_orders", "turn_limit": "60"},
    "grand_battle": {"scenario": "grand_battle", "turn_limit": "30"},
    "variant_corps": {"scenario": "variant_corps", "turn_limit": "60"},
    "ranked": {"preset": "ranked"},
    # 10.6: more players, alliances and divided command.
    "grand_battle_2v2": {"scenario": "grand_battle_2v2", "turn_limit": "40"},
    "three_way": {"scenario": "three_way", "turn_limit": "40"},
    "three_way_sealed": {
        "scenario": "three_way",
        "deployment": "attack_at_dawn",
        "attack_at_dawn_mode": "sealed",
        "turn_limit": "30",
    },
    "divided_command": {"scenario": "divided_command", "turn_limit": "40"},
    "divided_command_merged": {
        "scenario": "divided_command",
        "divided_command_turns": "merged_side_turn",
        "on_commander_loss": "army_passes_to_ally",
        "turn_limit": "40",
    },
}
GAMES = 2


def _check_invariants(
    ruleset: NapoleonicRuleset,
    before: NapoleonicState,
    after: NapoleonicState,
    events: list[Event],
) -> None:
    assert ruleset.check_state(after) == []
    cells = [u.cell for u in after.units]
    assert len(cells) == len(set(cells)), "two units on a square"
    turn = after.turn
    assert len({a for a, _t in turn.attacks}) == len(turn.attacks), "a unit attacked twice"
    assert len({s for s, _t in turn.supports}) == len(turn.supports), "a unit supported twice"
    eliminated = {e.unit for e in events if e.kind is EventKind.ELIMINATED}
    fell = set()
    for event in events:
        tally = event.combat
        if tally is None:
            continue
        assert tally.attack_total == sum(c.value for c in tally.attackers)
        assert tally.defence_total == (
            tally.defence + sum(v for _s, v in tally.bonuses) + sum(c.value for c in tally.supports)
        )
        assert tally.eliminated is (tally.attack_total > tally.defence_total)
        if tally.eliminated:
            fell.add(tally.target)
    assert fell == eliminated
    gone = {u.id for u in before.units} - {u.id for u in after.units}
    # 10.6: a player put out by its Guards' fall takes its army off the field with it
    # (on_commander_loss = remove_army), and its Guards fall in combat.
    left = {
        u.id
        for u in before.units
        if before.in_game(u.side) and not after.in_game(u.side) and u.id not in eliminated
    }
    assert gone - left == eliminated


def comparable(state: NapoleonicState) -> NapoleonicState:
    """The state with its sealed arrays blanked: sealing takes a random nonce (10.1), so the
    same Seal gives another ciphertext of the same length each time."""
    if state.deployment is None or not state.deployment.sealed:
        return state
    sealed = tuple((side, bytes(len(data))) for side, data in state.deployment.sealed)
    return state.evolve(deployment=replace(state.deployment, sealed=sealed))


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.usefixtures("playout_seed")
def test_random_playouts_to_the_end(config: str, in_depth: bool) -> None:
    """`make test` plays one game of a rotating seed (`tests/seeds.py`), `-m slow` the
    fixed GAMES (and `test_many_random_playouts` more)."""
    given = dict(CONFIGS[config])
    preset = given.pop("preset", None)
    ruleset = SEALED_RULESET
    options = ruleset.resolve_options(given, preset)
    endings: Counter[str] = Counter()
    games = [str(seed) for seed in range(GAMES)] if in_depth else seeds.sampled(1)
    for seed in games:
        rng = random.Random(f"{config}-{seed}")
        state = ruleset.new_game(options)
        moves_this_turn: Counter[str] = Counter()
        turn_key = (state.active, state.turn_number)
        for _ply in range(20_000):
            if ruleset.outcome(state) is not None:
                break
            action = ruleset.random_action(state, rng)
            assert action is not None
            text = ruleset.format_action(state, action)
            assert ruleset.parse_action(state, text, action.side) == action, text
            after, events = ruleset.apply(state, action)
            assert comparable(ruleset.play(state, action)) == comparable(after), text
            _check_invariants(ruleset, state, after, events)
            if (after.active, after.turn_number) != turn_key:
                moves_this_turn.clear()
                turn_key = (after.active, after.turn_number)
            if isinstance(action, Move):
                moves_this_turn[action.unit] += 1
                assert moves_this_turn[action.unit] == 1, f"{action.unit} moved twice"
            state = after
        outcome = ruleset.outcome(state)
        assert outcome is not None, "the game did not end"
        assert ruleset.legal_actions(state) == [] and ruleset.to_act(state) == ()
        endings[outcome.reason] += 1
    assert sum(endings.values()) == len(games)


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
def test_many_random_playouts(config: str) -> None:
    """The soak version: many more games per configuration (make test-slow)."""
    given = dict(CONFIGS[config])
    preset = given.pop("preset", None)
    ruleset = SEALED_RULESET
    options = ruleset.resolve_options(given, preset)
    for seed in range(25):
        rng = random.Random(f"soak-{config}-{seed}")
        state = ruleset.new_game(options)
        while ruleset.outcome(state) is None:
            action = ruleset.random_action(state, rng)
            assert action is not None
            after, events = ruleset.apply(state, action)
            assert comparable(ruleset.play(state, action)) == comparable(after)
            _check_invariants(ruleset, state, after, events)
            state = after
