"""The Game of War rules core: perft beside python-chess, legal actions and apply.

Figures (BENCHMARKS.md: median of repeated samples with the spread; references measured in
the same run):
- perft(3) nodes per second from the Game of War start position (every leaf made with
  `play`, like python-chess's push/pop of every leaf), beside python-chess perft(3) from
  the chess start position, samples taken in turns, wall rate and CPU time per node, with
  the ratio (the speed goal: >= 5x python-chess);
- microseconds to list the legal actions of a middlegame position (the generator itself,
  not the ruleset's cache);
- microseconds per `play` (unchecked) and per `apply` (checked, with events and the
  outcome of the new position) over the positions of a random game, caches cleared, so
  every call does the work a stateless engine request does.
"""

from __future__ import annotations

from collections.abc import Callable

from engine_service.rules.war import Action, WarRuleset, WarState
from engine_service.rules.war.legal import legal_actions
from engine_service.rules.war.ruleset import clear_caches
from tests.bench.harness import (
    Bench,
    Side,
    chess_perft,
    game_positions,
    middlegame,
    per_position,
    timed,
)

RULESET = WarRuleset()
PERFT_DEPTH = 3


def run(bench: Bench) -> None:
    """Measure and report the Game of War figures."""
    start = RULESET.new_game(RULESET.resolve_options({}))
    bench.compare(
        Side(f"python-chess perft({PERFT_DEPTH}) start position", timed(chess_perft(PERFT_DEPTH)),
             "node"),
        Side(f"war perft({PERFT_DEPTH}) start position",
             timed(lambda: RULESET.perft(start, PERFT_DEPTH)), "node"),
        goal=">= 5x python-chess",
    )  # fmt: skip

    position = middlegame(RULESET, 24, "war bench middlegame")
    count = len(legal_actions(position))
    bench.report(
        bench.micros(
            f"war legal actions, middlegame ({count} actions)",
            lambda: legal_actions(position),
            calls=200,
        ),
        higher_is_better=False,
    )

    pairs = game_positions(RULESET, 200, "war bench game")

    def per_call(work: Callable[[WarState, Action], object], fresh: bool) -> Callable[[], float]:
        """A sampler: microseconds per call of `work` over the game positions."""
        return per_position(pairs, work, clear_caches if fresh else lambda: None)

    bench.report(
        bench.sample(
            "war play (unchecked), game positions", per_call(RULESET.play, False), "us/call"
        ),
        higher_is_better=False,
    )
    bench.report(
        bench.sample(
            "war apply (checked, events), game positions, caches cleared",
            per_call(RULESET.apply, True),
            "us/call",
        ),
        higher_is_better=False,
    )
