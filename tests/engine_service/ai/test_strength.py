"""Strength: at 50 ms per action the AI beats a uniformly random player.

For each game, 50 games against a seeded random player that picks uniformly among the
legal actions (or the ruleset's `random_action` when they cannot be listed), the AI taking
the two sides in turn. A game unfinished after 400 plies counts as not won. Plies are
actions in the Game of War and the Game of Battle, and player-turns in Napoleonic Chess
(a turn there is many actions: moves, attacks, supports, advances); the AI's budget is 50
ms per action there too, per decision of the planner.

The tally (wins/draws/losses/unfinished, average plies, the slowest suggestion in wall time
and the most CPU time one took, to tell the budget from a busy machine) is recorded on
the test's report and printed at the end of the run (`conftest.py`). Run by
`make test-slow`; each game is one test, so two workers share the three games.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from tests.engine_service.ai.helpers import GAMES, play_random_opponent

GAMES_PER_RUN = 50
REQUIRED_WINS = 48
BUDGET = 0.05
MAX_PLIES = 400

pytestmark = pytest.mark.slow


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("game", GAMES)
def test_the_ai_beats_a_random_player(
    game: str, record_property: Callable[[str, object], None]
) -> None:
    results = Counter[str]()
    plies = 0
    slowest = slowest_cpu = 0.0
    for index in range(GAMES_PER_RUN):
        played = play_random_opponent(game, index, seconds=BUDGET, max_plies=MAX_PLIES)
        results[played.result] += 1
        plies += played.plies
        slowest = max(slowest, played.slowest)
        slowest_cpu = max(slowest_cpu, played.slowest_cpu)
    tally = (
        f"{game}: {results['win']} wins, {results['draw']} draws, {results['loss']} losses, "
        f"{results['unfinished']} unfinished of {GAMES_PER_RUN}; "
        f"average {plies / GAMES_PER_RUN:.1f} plies; slowest suggestion {slowest * 1000:.0f} ms "
        f"(most CPU for one: {slowest_cpu * 1000:.0f} ms)"
    )
    print(tally)
    record_property("strength", tally)
    assert results["win"] >= REQUIRED_WINS, tally
