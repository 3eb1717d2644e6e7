"""Shared helpers of the AI tests: rulesets, random positions, one game against a random player."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from engine_service.ai import suggest
from engine_service.rules import rulesets
from engine_service.rules.base import AnyRuleset
from engine_service.rules.game import Game
from tests.conftest import TEST_SEAL_KEY

GAMES = ("war", "battle", "napoleonic")
RULES: dict[str, AnyRuleset] = rulesets(TEST_SEAL_KEY)


def new_state(game: str, setup: str | None = None, **options: str) -> Any:
    """A new game's state under the default options (or those given)."""
    ruleset = RULES[game]
    return ruleset.new_game(ruleset.resolve_options(options), setup)


def random_action(ruleset: AnyRuleset, state: Any, rng: random.Random) -> Any:
    """A uniformly random legal action (the ruleset's own choice when none can be listed)."""
    actions = ruleset.legal_actions(state)
    return rng.choice(actions) if actions else ruleset.random_action(state, rng)


def random_position(game: str, plies: int, seed: int, **options: str) -> Any:
    """The position after up to `plies` random actions from the start (still going on)."""
    ruleset = RULES[game]
    rng = random.Random(seed)
    state = new_state(game, **options)
    for _ in range(plies):
        action = random_action(ruleset, state, rng)
        following = ruleset.play(state, action)
        if ruleset.outcome(following) is not None:
            break
        state = following
    return state


def plies_of(game: str, state: Any, actions: int) -> int:
    """The plies a game has lasted: player-turns in Napoleonic Chess, actions elsewhere."""
    return int(state.turn_number) if game == "napoleonic" else actions


@dataclass
class Played:
    """One finished (or abandoned) game of the AI against a random player."""

    result: str  # "win", "draw", "loss" or "unfinished"
    plies: int
    slowest: float  # the longest suggestion, in seconds of wall time
    slowest_cpu: float  # the most CPU time one suggestion took (a busy machine adds waits)
    reason: str


def play_random_opponent(game: str, index: int, *, seconds: float, max_plies: int = 400) -> Played:
    """The AI (sides alternate with `index`) against a seeded uniformly random player.

    A game unfinished after `max_plies` plies (player-turns in Napoleonic Chess) is
    reported as unfinished.
    """
    ruleset = RULES[game]
    state = new_state(game)
    sides = [side.id for side in ruleset.sides]
    ai = sides[index % 2]
    rng = random.Random(7919 * index + 17)
    actions = 0
    slowest = slowest_cpu = 0.0
    while ruleset.outcome(state) is None and plies_of(game, state, actions) < max_plies:
        if ai in ruleset.to_act(state):
            started, cpu = time.perf_counter(), time.process_time()
            action = suggest(Game(ruleset, state), side=ai, seconds=seconds, seed=index).action
            slowest = max(slowest, time.perf_counter() - started)
            slowest_cpu = max(slowest_cpu, time.process_time() - cpu)
        else:
            action = random_action(ruleset, state, rng)
        state = ruleset.play(state, action)
        actions += 1
    outcome = ruleset.outcome(state)
    plies = plies_of(game, state, actions)
    if outcome is None:
        return Played("unfinished", plies, slowest, slowest_cpu, "")
    result = "draw" if outcome.winner is None else "win" if outcome.winner == ai else "loss"
    return Played(result, plies, slowest, slowest_cpu, outcome.reason.value)
