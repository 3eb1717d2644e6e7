"""Strength with allies: in the two-against-two Grand Battle the AI,
at 50 ms per action, playing one seat with a uniformly random ally against two uniformly
random enemies, brings its alliance to victory in at least 45 of 50 games.

The AI takes each of the four seats in turn (red, black, blue, green: every seat of both
alliances). The random players pick uniformly among their own legal actions. A game not
over after 400 player-turns counts as not won. The tally is recorded on the test's report
and printed (`conftest.py`). Run by `make test-slow`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from engine_service.ai import suggest
from engine_service.rules.game import Game
from engine_service.rules.napoleonic import NapoleonicRuleset

GAMES_PER_RUN = 50
REQUIRED_WINS = 45
BUDGET = 0.05
MAX_TURNS = 400
SEATS = ("red", "black", "blue", "green")

pytestmark = pytest.mark.slow


def play(index: int) -> tuple[str, int]:
    """One game: the AI in seat SEATS[index % 4], everyone else random."""
    ruleset = NapoleonicRuleset()
    ai = SEATS[index % len(SEATS)]
    rng = random.Random(f"multiplayer strength {index}")
    game: Game[Any] = Game(
        ruleset, ruleset.new_game(ruleset.resolve_options({"scenario": "grand_battle_2v2"}))
    )
    while game.outcome is None and game.state.turn_number < MAX_TURNS:
        side = game.to_act()[0]
        if side == ai:
            action = suggest(game, side=side, seconds=BUDGET, seed=index).action
        else:
            own = [a for a in game.legal_actions() if ruleset.actor(game.state, a) == side]
            action = rng.choice(own)
        game, _events = game.apply(side, action)
    outcome = game.outcome
    if outcome is None:
        return "unfinished", game.state.turn_number
    if outcome.winner is None:
        return "draw", game.state.turn_number
    return ("win" if ai in outcome.winning_sides else "loss"), game.state.turn_number


@pytest.mark.timeout(3600)
def test_the_ai_with_a_random_ally_beats_two_random_enemies(
    record_property: Callable[[str, object], None],
) -> None:
    results = Counter[str]()
    turns = 0
    for index in range(GAMES_PER_RUN):
        result, played = play(index)
        results[result] += 1
        turns += played
    tally = (
        f"napoleonic grand_battle_2v2, AI + random ally vs 2 random: {results['win']} wins, "
        f"{results['draw']} draws, {results['loss']} losses, {results['unfinished']} "
        f"unfinished of {GAMES_PER_RUN}; average {turns / GAMES_PER_RUN:.1f} player-turns"
    )
    print(tally)
    record_property("strength", tally)
    assert results["win"] >= REQUIRED_WINS, tally
