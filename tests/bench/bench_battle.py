"""The Game of Battle rules core: perft beside python-chess, legal actions and apply.

Figures (BENCHMARKS.md: median of repeated samples with the spread; references measured in
the same run):
- perft(3) nodes per second from the Plate 1 start position (every leaf made with `play`,
  like python-chess's push/pop of every leaf), beside python-chess perft(3) from the chess
  start position, samples taken in turns, wall rate and CPU time per node, with the ratio
  (the speed goal: >= 6x python-chess);
- perft(2) nodes per second from a position where Artillery is in contact (figures in
  check, the Citadel commanded next turn): the costly path of the artillery rules;
- microseconds to list the legal actions of a middlegame position (the section 10
  procedure itself, not the state's cache);
- microseconds per `play` (unchecked) and per `apply` (checked, with events and the
  outcome of the new position) over the positions of random games, caches cleared, so
  every call does the work a stateless engine request does.
"""

from __future__ import annotations

from collections.abc import Callable

from engine_service.rules.battle import BattleRuleset, BattleState, Move
from engine_service.rules.battle.legal import analyse
from tests.bench.harness import (
    Bench,
    Side,
    chess_perft,
    game_positions,
    middlegame,
    per_position,
    timed,
)

RULESET = BattleRuleset()
PERFT_DEPTH = 3
CONTACT = (
    "defender to move; "
    "attacker: W129 A40 A131 C125 C130 I113 I127 I128 I132 I133 L85 L87 L101 L103; "
    "defender: T19 A9 A14 C10 C15 I7 I8 I16 I26 I13 L39 L41 L43 L45"
)


def _fresh(state: BattleState) -> BattleState:
    """The same position without its cached analysis (as a request from the wire)."""
    return BattleState(state.board, state.side, state.options, state.quiet, state.history)


def run(bench: Bench) -> None:
    """Measure and report the Game of Battle figures."""
    options = RULESET.resolve_options({})
    start = RULESET.new_game(options)

    def perft_start() -> int:
        return RULESET.perft(_fresh(start), PERFT_DEPTH)

    chess = Side("python-chess perft(3) start position", timed(chess_perft(3)), "node")
    bench.compare(
        chess,
        Side(f"battle perft({PERFT_DEPTH}) start position", timed(perft_start), "node"),
        goal=">= 6x python-chess",
        repeats=3,
    )
    contact = RULESET.new_game(options, CONTACT)
    bench.compare(
        chess,
        Side("battle perft(2) artillery in contact",
             timed(lambda: RULESET.perft(_fresh(contact), 2)), "node"),
        report_reference=False,
    )  # fmt: skip

    position = middlegame(RULESET, 40, "battle bench middlegame")
    count = len(analyse(position.board, position.side, position.rules).legal)
    bench.report(
        bench.micros(
            f"battle legal actions, middlegame ({count} actions)",
            lambda: analyse(position.board, position.side, position.rules),
            calls=200,
        ),
        higher_is_better=False,
    )

    pairs = [
        (_fresh(state), move) for state, move in game_positions(RULESET, 200, "battle bench game")
    ]

    def stateless() -> None:
        """No cached legal moves: each request stateless."""
        for state, _ in pairs:
            state._analysis = None
            state._quick = None

    def per_call(work: Callable[[BattleState, Move], object]) -> Callable[[], float]:
        return per_position(pairs, work, stateless)

    bench.report(
        bench.sample("battle play (unchecked), game positions", per_call(RULESET.play), "us/call"),
        higher_is_better=False,
    )
    bench.report(
        bench.sample(
            "battle apply (checked, events), game positions, caches cleared",
            per_call(RULESET.apply),
            "us/call",
        ),
        higher_is_better=False,
    )
