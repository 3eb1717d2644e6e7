"""How `make bench` measures: repeated timings, median with spread, ratios to a reference.

Every figure with a goal is printed beside a reference measured in the same run
(../shared/design/BENCHMARKS.md): one line per figure,
`name: median unit (min..max) [ratio x reference-name]`, and all figures also go to a JSON
file under the run folder.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine_service.rules.base import AnyRuleset

WARMUP = 1
REPEATS = 5


@dataclass
class Figure:
    """One measured quantity: median and spread over repetitions."""

    name: str
    unit: str
    median: float
    low: float
    high: float
    samples: list[float] = field(default_factory=list)
    reference: str = ""
    ratio: float | None = None
    goal: str = ""

    def line(self) -> str:
        """The printed form of this figure."""
        text = f"{self.name}: {_fmt(self.median)} {self.unit} ({_fmt(self.low)}..{_fmt(self.high)})"
        if self.ratio is not None:
            text += f" [{self.ratio:.2f}x {self.reference}]"
        if self.goal:
            text += f" goal {self.goal}"
        spread = (self.high - self.low) / self.median if self.median else 0.0
        if spread > 0.5:
            text += "  (wide spread: the machine was busy)"
        return text


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.4g}"


class Bench:
    """Collects figures, prints each as it is measured, and saves them as JSON."""

    def __init__(self) -> None:
        self.figures: list[Figure] = []

    def sample(
        self,
        name: str,
        measure: Callable[[], float],
        unit: str,
        *,
        repeats: int = REPEATS,
        warmup: int = WARMUP,
    ) -> Figure:
        """Call `measure` (which returns one sample in `unit`) warmup + repeats times."""
        for _ in range(warmup):
            measure()
        samples = [measure() for _ in range(repeats)]
        figure = Figure(name, unit, statistics.median(samples), min(samples), max(samples), samples)
        return figure

    def rate(
        self, name: str, work: Callable[[], int], unit: str, *, repeats: int = REPEATS
    ) -> Figure:
        """Throughput of `work` (which returns how many items it did): items per second."""

        def once() -> float:
            start = time.perf_counter()
            count = work()
            return count / (time.perf_counter() - start)

        return self.sample(name, once, unit, repeats=repeats)

    def micros(
        self, name: str, work: Callable[[], object], *, calls: int, repeats: int = REPEATS
    ) -> Figure:
        """Microseconds per call of `work`, timed over `calls` calls per sample."""

        def once() -> float:
            start = time.perf_counter()
            for _ in range(calls):
                work()
            return (time.perf_counter() - start) / calls * 1e6

        return self.sample(name, once, "us/call", repeats=repeats)

    def report(
        self,
        figure: Figure,
        reference: Figure | None = None,
        *,
        goal: str = "",
        higher_is_better: bool = True,
    ) -> Figure:
        """Record and print a figure, with its ratio to a reference when given."""
        if reference is not None and reference.median:
            ratio = figure.median / reference.median
            figure.ratio = ratio if higher_is_better else 1 / ratio if ratio else None
            figure.reference = reference.name
        figure.goal = goal
        self.figures.append(figure)
        print(figure.line(), flush=True)
        return figure

    def save(self, path: Path) -> None:
        """Write every figure to a JSON file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        data = {"at": stamp, "figures": [asdict(f) for f in self.figures]}
        path.write_text(json.dumps(data, indent=2) + "\n")


def middlegame(ruleset: AnyRuleset, plies: int, seed: str) -> Any:
    """A position after `plies` seeded random actions from the start, game not over."""
    rng = random.Random(seed)
    options = ruleset.resolve_options({})
    while True:
        state = ruleset.new_game(options)
        for _ in range(plies):
            actions = ruleset.legal_actions(state)
            if not actions:
                break
            state = ruleset.play(state, rng.choice(actions))
        if ruleset.outcome(state) is None:
            return state


def per_position(
    pairs: list[tuple[Any, Any]],
    work: Callable[[Any, Any], object],
    prepare: Callable[[], object] = lambda: None,
) -> Callable[[], float]:
    """A sampler: microseconds per call of `work(state, action)` over the game positions
    `pairs`, after `prepare()` (untimed: emptying caches, for one)."""

    def once() -> float:
        prepare()
        started = time.perf_counter()
        for state, action in pairs:
            work(state, action)
        return (time.perf_counter() - started) / len(pairs) * 1e6

    return once


def game_positions(ruleset: AnyRuleset, count: int, seed: str) -> list[tuple[Any, Any]]:
    """`count` (position, legal action) pairs along seeded random games from the start."""
    rng = random.Random(seed)
    options = ruleset.resolve_options({})
    pairs: list[tuple[Any, Any]] = []
    while len(pairs) < count:
        state = ruleset.new_game(options)
        while len(pairs) < count:
            actions = ruleset.legal_actions(state)
            if not actions:
                break
            action = rng.choice(actions)
            pairs.append((state, action))
            state = ruleset.play(state, action)
    return pairs


def chess_perft_rate(bench: Bench, depth: int = 3) -> Figure:
    """python-chess perft nodes per second on the chess start position (make/unmake every leaf)."""
    import chess

    board = chess.Board()

    def perft(d: int) -> int:
        if d == 0:
            return 1
        nodes = 0
        for move in board.legal_moves:
            board.push(move)
            nodes += perft(d - 1)
            board.pop()
        return nodes

    return bench.rate(
        f"python-chess perft({depth}) start position", lambda: perft(depth), "nodes/s"
    )
