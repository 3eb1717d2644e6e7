"""Napoleonic Chess rules core: legal actions, apply, random games, and a whole turn.

Figures (BENCHMARKS.md: median of repeated samples, spread, references from the same run):
- microseconds to list the legal actions and to apply one move in a middlegame position
  of the standard scenario (apply checks everything; play is the unchecked fast path);
- full random games per second (standard scenario, turn limit 60, random legal actions);
- a whole turn of 15 units per side (moves, attacks, supports, resolution, advances),
  every action validated and applied, in ms, beside a no-op loop over the same actions
  (goal: under 2 ms); also in process CPU time, which other tenants do not inflate.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from engine_service.rules.base import Event
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    EndPhase,
    Move,
    NapoleonicAction,
    Support,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.bench.harness import Bench

RULESET = NapoleonicRuleset()
# Two standard armies of 15 in contact: red's front line has gaps its cavalry moves into,
# black's infantry line stands right in front of it.
FACE_OFF = (
    "board 8x8; red: a2=A e2=G h2=A a3=I b3=C c3=I d3=C e3=I f3=C g3=I h3=C a4=I c4=I e4=I "
    "g4=I; black: a5=I b5=I c5=I d5=I e5=I f5=I g5=I h5=I a6=A b6=C c6=C e6=G f6=C g6=C h6=A"
)


def middlegame() -> NapoleonicState:
    """A standard-scenario position after ten random player-turns, in movement."""
    rng = random.Random("napoleonic bench middlegame")
    options = RULESET.resolve_options({})
    while True:
        state = RULESET.new_game(options)
        while RULESET.outcome(state) is None and state.turn_number < 10:
            action = RULESET.random_action(state, rng)
            assert action is not None
            state = RULESET.play(state, action)
        if RULESET.outcome(state) is None and state.phase is Phase.MOVEMENT:
            return state


def _targets(state: NapoleonicState, unit_id: str) -> list[Attack]:
    return [
        a for a in RULESET.legal_actions(state) if isinstance(a, Attack) and a.attacker == unit_id
    ]


def whole_turn() -> tuple[NapoleonicState, list[NapoleonicAction]]:
    """The face-off position and a full red turn chosen by a fixed greedy policy."""
    start = RULESET.new_game(RULESET.resolve_options({"auto_skip_defence": "false"}), FACE_OFF)
    state = start
    script: list[NapoleonicAction] = []

    def play(action: NapoleonicAction) -> None:
        """Apply an action (checked) and add it to the script."""
        nonlocal state
        state, _ = RULESET.apply(state, action)
        script.append(action)

    # Movement: every red unit without a target moves to the first square giving it one.
    for unit in sorted(state.units, key=lambda u: u.id):
        if unit.side != "red" or _targets(state, unit.id):
            continue
        for move in [a for a in RULESET.legal_actions(state) if isinstance(a, Move)]:
            if move.unit != unit.id:
                continue
            trial = RULESET.play(state, move)
            if _targets(trial, unit.id):
                play(move)
                break
    play(EndPhase("red"))
    # Attacks: each unit joins the target that already has the most attackers.
    for unit in sorted(state.units, key=lambda u: u.id):
        options = _targets(state, unit.id) if unit.side == "red" else []
        if options:
            counts = {t: 0 for t in {a.target for a in options}}
            for _a, target in state.turn.attacks:
                if target in counts:
                    counts[target] += 1
            play(max(options, key=lambda a: (counts[a.target], a.target)))
    play(EndPhase("red"))
    # Defence: black gives its first three legal supports (so that some targets fall).
    for _ in range(3):
        supports = [a for a in RULESET.legal_actions(state) if isinstance(a, Support)]
        if not supports:
            break
        play(supports[0])
    play(EndPhase("black"))
    # Advance into every vacated square that can be taken.
    while state.phase is Phase.ADVANCE:
        advances = [a for a in RULESET.legal_actions(state) if isinstance(a, Advance)]
        play(advances[0] if advances else EndPhase("red"))
    return start, script


def run(bench: Bench) -> None:
    """Measure and report the Napoleonic Chess figures."""
    position = middlegame()
    actions = RULESET.legal_actions(position)
    move = next(a for a in actions if isinstance(a, Move))
    listing = bench.micros(
        f"napoleonic legal_actions, middlegame ({len(actions)} actions)",
        lambda: RULESET.legal_actions(position),
        calls=300,
    )
    bench.report(listing)
    applying = bench.micros(
        "napoleonic apply one move (checked), middlegame",
        lambda: RULESET.apply(position, move),
        calls=2000,
    )
    playing = bench.micros(
        "napoleonic play one move (unchecked), middlegame",
        lambda: RULESET.play(position, move),
        calls=2000,
    )
    bench.report(applying, playing, higher_is_better=False)
    bench.report(playing)

    options = RULESET.resolve_options({"turn_limit": "60"})
    seeds = iter(range(10**9))

    def random_games() -> int:
        """Play two random games to the end; return how many."""
        rng = random.Random(next(seeds))
        for _ in range(2):
            state = RULESET.new_game(options)
            while RULESET.outcome(state) is None:
                action = RULESET.random_action(state, rng)
                assert action is not None
                state = RULESET.play(state, action)
        return 2

    bench.report(
        bench.rate("napoleonic random games (standard, turn limit 60)", random_games, "games/s")
    )

    start, script = whole_turn()
    red = sum(1 for u in start.units if u.side == "red")
    black = sum(1 for u in start.units if u.side == "black")
    kinds = {
        kind: sum(1 for a in script if type(a).__name__ == kind)
        for kind in ("Move", "Attack", "Support", "Advance", "EndPhase")
    }
    detail = ", ".join(f"{n} {k.lower()}" for k, n in kinds.items())

    def no_op(
        state: NapoleonicState, action: NapoleonicAction
    ) -> tuple[NapoleonicState, list[Event]]:
        """The reference: what `apply` would cost if it did nothing."""
        return state, []

    def per_turn(
        apply: Callable[[NapoleonicState, NapoleonicAction], tuple[NapoleonicState, list[Event]]],
        clock: Callable[[], float] = time.perf_counter,
    ) -> Callable[[], float]:
        """A sampler: milliseconds by `clock` per whole turn, each action through `apply`."""

        def once() -> float:
            began = clock()
            for _ in range(20):
                state = start
                for action in script:
                    state, _events = apply(state, action)
            return (clock() - began) / 20 * 1e3

        return once

    one_turn = per_turn(RULESET.apply)  # validated and applied
    baseline = per_turn(no_op)  # the same loop over the same actions calling a no-op
    reference = bench.sample(f"no-op loop over the same {len(script)} actions", baseline, "ms")
    bench.report(reference)
    turn = bench.sample(
        f"napoleonic whole turn, {red} v {black} units ({detail}), validated and applied",
        one_turn,
        "ms",
    )
    # The ratio reads "the turn costs N no-op loops"; the goal is on the absolute time.
    bench.report(turn, reference, goal="< 2 ms")

    # CPU time: insensitive to other tenants of the machine.
    one_turn_cpu = per_turn(RULESET.apply, time.process_time)

    bench.report(
        bench.sample("napoleonic whole turn, process CPU time", one_turn_cpu, "ms"),
        goal="< 2 ms",
    )
