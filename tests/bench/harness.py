"""How `make bench` measures: repeated timings, median with spread, ratios to a reference.

Every figure with a goal is printed beside a reference measured in the same run
(../shared/design/BENCHMARKS.md): one line per figure,
`name: median unit (min..max) [ratio x reference-name]`, and all figures also go to a JSON
file under the run folder.

A figure and its reference are best measured in turns (`Bench.compare`: reference, subject,
reference, subject, ...), each sample counting wall time and CPU time per operation: load
that comes and goes hits both sides alike, and CPU time (of this thread for in-process work,
of the serving process tree read from /proc for served work) barely moves with the load. The
ratio of such a pair of figures is the median of the ratios of the pairs of samples taken
one after the other, printed with their spread.

Where things are:
- `Figure`, `Bench.report`: one printed line (and a JSON entry) per figure;
- `Bench.sample`, `rate`, `micros`: samples of one side alone;
- `Sample`, `Side`, `timed`, `Bench.compare`: both sides in turns, wall and CPU;
- `process_tree`, `cpu_seconds`, `serving_pids`, `rss_mb`: served processes, from /proc;
- `middlegame`, `game_positions`, `per_position`, `chess_perft`: the work measured.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the load generator imports this module: it stays light
    from engine_service.rules.base import AnyRuleset

WARMUP = 1
REPEATS = 5
TURN_CPU = 0.5  # seconds of CPU per sample of a comparison, made of short turns of each side
MAX_TURNS = 50


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
    # Set when the ratio is the median of the ratios of samples taken in turns: their spread.
    ratio_low: float | None = None
    ratio_high: float | None = None

    def line(self) -> str:
        """The printed form of this figure."""
        text = f"{self.name}: {_fmt(self.median)} {self.unit} ({_fmt(self.low)}..{_fmt(self.high)})"
        if self.ratio is not None:
            text += f" [{self.ratio:.2f}x {self.reference}"
            if self.ratio_low is not None and self.ratio_high is not None:
                share = (self.ratio_high - self.ratio_low) / 2 / self.ratio * 100
                text += f", in turns {self.ratio_low:.2f}..{self.ratio_high:.2f} = +-{share:.1f} %"
            text += "]"
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
        paired: bool = False,
    ) -> Figure:
        """Record and print a figure, with its ratio to a reference when given. `paired`: the
        samples of the figure and of the reference were taken in turns; the ratio is the
        median of the ratios of each pair, with their spread."""
        if reference is not None and reference.median:
            ratio = figure.median / reference.median
            figure.ratio = ratio if higher_is_better else 1 / ratio if ratio else None
            figure.reference = reference.name
            pairs = list(zip(figure.samples, reference.samples, strict=False))
            if paired and pairs and all(a and b for a, b in pairs):
                ratios = [a / b if higher_is_better else b / a for a, b in pairs]
                figure.ratio = statistics.median(ratios)
                figure.ratio_low, figure.ratio_high = min(ratios), max(ratios)
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

    def alternate(
        self,
        measures: list[Callable[[], Sample]],
        *,
        repeats: int = REPEATS,
        warmup: int = WARMUP,
        turn_cpu: float = 0.0,
    ) -> list[list[Sample]]:
        """Samples of each measure taken in turns (a b a b ...) after `warmup` rounds. With
        `turn_cpu`, each sample is made of short turns of each measure (a b a b ... within
        the sample) until the costlier measure used about `turn_cpu` seconds of CPU, and is
        the least disturbed of its turns (per operation, the least wall time and the least
        CPU time: other tenants only ever add to either, by stealing the core or by
        emptying its caches while this process waits)."""
        spent = [0.0 for _ in measures]
        for _ in range(warmup):
            for index, measure in enumerate(measures):
                spent[index] = max(spent[index], measure().cpu)
        turns = 1
        if turn_cpu and max(spent) > 0:
            turns = max(1, min(MAX_TURNS, round(turn_cpu / max(spent))))
        samples: list[list[Sample]] = [[] for _ in measures]
        for _ in range(repeats):
            turns_taken: list[list[Sample]] = [[] for _ in measures]
            for _ in range(turns):
                for measure, taken in zip(measures, turns_taken, strict=True):
                    taken.append(measure())
            for kept, taken in zip(samples, turns_taken, strict=True):
                kept.append(_least_disturbed(taken))
        return samples

    def compare(
        self,
        reference: Side,
        subject: Side,
        *,
        goal: str = "",
        cost: bool = False,
        repeats: int = REPEATS,
        warmup: int = WARMUP,
        turn_cpu: float = TURN_CPU,
        report_reference: bool = True,
    ) -> tuple[Figure, Figure]:
        """Measure `reference` and `subject` in turns; report the wall figure of each and
        the CPU time per operation of each, the subject's with its ratio to the reference
        (the goal is printed there: CPU stays steady on a busy machine). The ratios read as
        costs (subject / reference: microseconds per operation) when `cost`, else as speeds
        (operations per second: reference cost / subject cost). Each sample is made of turns
        of both sides (`alternate`). Returns the two CPU figures."""
        ref, sub = self.alternate([reference.measure, subject.measure], repeats=repeats,
                                  warmup=warmup, turn_cpu=turn_cpu)  # fmt: skip
        walls = [side.wall_figure(samples, cost) for side, samples in ((reference, ref),
                                                                       (subject, sub))]  # fmt: skip
        cpus = [side.cpu_figure(samples) for side, samples in ((reference, ref), (subject, sub))]
        if report_reference:
            self.report(walls[0], higher_is_better=not cost)
            self.report(cpus[0], higher_is_better=False)
        self.report(walls[1], walls[0], higher_is_better=True, paired=True)
        self.report(cpus[1], cpus[0], goal=goal, higher_is_better=cost, paired=True)
        return cpus[0], cpus[1]


@dataclass
class Sample:
    """One sample of some work: how many operations, in how much wall and CPU time."""

    count: float
    wall: float
    cpu: float


@dataclass
class Side:
    """One side of a comparison: a name, a sampler, and what one operation is."""

    name: str
    measure: Callable[[], Sample]
    operation: str = "call"
    time_unit: str = "us"  # of the times per operation: "us", "ms" or "s"

    def wall_figure(self, samples: list[Sample], cost: bool) -> Figure:
        """Wall time per operation when `cost`, else operations per second."""
        if cost:
            scale = _SCALES[self.time_unit]
            values = [s.wall / s.count * scale for s in samples]
            return _figure(self.name, f"{self.time_unit}/{self.operation}", values)
        return _figure(self.name, f"{self.operation}s/s", [s.count / s.wall for s in samples])

    def cpu_figure(self, samples: list[Sample]) -> Figure:
        """CPU time per operation."""
        values = [s.cpu / s.count * _SCALES[self.time_unit] for s in samples]
        return _figure(f"{self.name}, CPU", f"{self.time_unit} CPU/{self.operation}", values)


_SCALES = {"us": 1e6, "ms": 1e3, "s": 1.0}


def _least_disturbed(turns: list[Sample]) -> Sample:
    """One operation's least wall time and least CPU time over `turns`."""
    if len(turns) == 1:
        return turns[0]
    return Sample(1, min(t.wall / t.count for t in turns), min(t.cpu / t.count for t in turns))


def _figure(name: str, unit: str, values: list[float]) -> Figure:
    return Figure(name, unit, statistics.median(values), min(values), max(values), values)


def timed(work: Callable[[], float]) -> Callable[[], Sample]:
    """A sampler of in-process work (which returns how many operations it did): wall time
    and this thread's CPU time."""

    def once() -> Sample:
        wall, cpu = time.perf_counter(), time.thread_time()
        count = work()
        return Sample(count, time.perf_counter() - wall, time.thread_time() - cpu)

    return once


# --- served processes, from /proc ------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    """`pid` and every process descended from it (the ones alive now)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                with contextlib.suppress(OSError):
                    todo += [int(c) for c in (task / "children").read_text().split()]
    return found


def cpu_seconds(pids: Iterable[int], *, reaped: bool = False) -> float:
    """User and system CPU time the processes `pids` used so far (utime + stime), seconds,
    with `reaped` that of their children that ended too (cutime + cstime); a process gone
    counts nothing (its parent counts it once reaped)."""
    total = 0
    last = 15 if reaped else 13  # utime, stime, cutime, cstime are fields 14 to 17
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += sum(int(value) for value in fields[11:last])
    return total / _TICKS


def serving_pids(pid: int, port: int) -> list[int]:
    """The processes of `pid`'s tree that hold a socket listening on `port` (the serving
    processes, not the helpers a pool forks)."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                columns = row.split()
                if columns[3] == "0A" and int(columns[1].rpartition(":")[2], 16) == port:
                    sockets.add(f"socket:[{columns[9]}]")
    serving = []
    for owner in process_tree(pid):
        with contextlib.suppress(OSError):
            if any(_link(fd) in sockets for fd in Path(f"/proc/{owner}/fd").iterdir()):
                serving.append(owner)
    return serving


def _link(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def rss_mb(pid: int) -> float:
    """Resident memory of process `pid`, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


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
    return bench.rate(f"python-chess perft({depth}) start position", chess_perft(depth), "nodes/s")


def chess_perft(depth: int = 3) -> Callable[[], int]:
    """python-chess perft on the chess start position (make/unmake every leaf): the nodes."""
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

    return lambda: perft(depth)
