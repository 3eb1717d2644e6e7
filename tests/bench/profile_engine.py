"""Where the engine's time goes per ApplyActions: in-process, and served beside Ping.

Two measurements, each printable alone:

- `cycle`: one stateless ApplyActions in-process (request bytes -> response bytes, no
  view), as `bench_engine_service` times it, split into its stages (each timed alone over
  the same positions, caches cleared), then profiled with cProfile (the functions with the
  most own time). The profiler makes Python code look dearer than compiled code: the
  stage times are measured without it.
- `served`: the engine as `make bench` serves it (`wargame-engine serve --workers 1`, its own
  process) under a load of 16 clients from a separate process: the engine process's CPU
  time (user + system) per call, for Ping of the request's size and for ApplyActions with
  and without the view. What ApplyActions costs beyond Ping is the servicer's own work.

    python -m tests.bench.profile_engine cycle [--game war] [--top 25]
    python -m tests.bench.profile_engine served [--game war] [--seconds 3] [--clients 16]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine_service.convert import conversions
from engine_service.rules import rulesets
from engine_service.rules.position import read_position, write_position
from engine_service.rules.war.ruleset import clear_caches
from engine_service.service import RulesEngine
from tests.bench import bench_engine_service as bench
from tests.bench.harness import cpu_seconds
from tests.servers import ROOT
from wargame.runtime.logs import configure_logging
from wargame.v1 import engine_pb2

POSITIONS = 1000
ROUNDS = 5


def _timed(work: Callable[[], object], count: int) -> float:
    """Microseconds per item of `work` (which does `count` items): the least of ROUNDS."""
    times = []
    for _ in range(ROUNDS):
        clear_caches()  # War's remembered legal actions and outcomes (the others keep none)
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) / count * 1e6)
    return min(times)


def cycle(game_id: str, top: int) -> None:
    """The in-process cycle's stages, then its profile."""
    configure_logging("json", "warning")
    games = rulesets(bench.SEAL_KEY)
    converted = conversions(games)
    engine = RulesEngine(games)
    found = bench.positions(game_id, POSITIONS, f"{game_id} stateless cycle")
    requests = [
        engine_pb2.ApplyActionsRequest(
            state=bench._compact(converted.game_to_proto(game, view=False)),
            actions=[converted.action_to_proto(game, action)],
            view=engine_pb2.STATE_VIEW_POSITION,
        ).SerializeToString()
        for game, action in found
    ]
    texts = [write_position(game) for game, _ in found]
    ruleset = games[game_id]
    context = bench._Context()
    read = engine_pb2.ApplyActionsRequest.FromString
    decoded = [read(data) for data in requests]

    def whole() -> None:
        for data in requests:
            engine.ApplyActions(read(data), context).SerializeToString()

    def servicer_only() -> None:
        method = RulesEngine.ApplyActions.__wrapped__  # type: ignore[attr-defined]
        for request in decoded:
            method(engine, request, context)

    def formatted_and_applied() -> None:
        for game, action in found:
            game.format(action)
            game.apply(game.actor(action), action)

    stages: list[tuple[str, Callable[[], object]]] = [
        ("the whole cycle (bytes -> bytes)", whole),
        ("the servicer method alone (no rpc wrapper, no bytes)", servicer_only),
        ("read the position text", lambda: [read_position(ruleset, text) for text in texts]),
        ("the rules: format the action, then apply it", formatted_and_applied),
        ("write the position text", lambda: [write_position(game) for game, _ in found]),
        (
            "the answer's GameState (position and summary)",
            lambda: [converted.game_to_proto(game, view=False) for game, _ in found],
        ),
        (
            "the answer's GameState with the view",
            lambda: [converted.game_to_proto(game) for game, _ in found],
        ),
    ]
    print(f"{game_id}: one ApplyActions in-process, {POSITIONS} positions (least of {ROUNDS}):")
    for name, work in stages:
        print(f"  {_timed(work, POSITIONS):7.1f} us  {name}")
    profiler = cProfile.Profile()
    clear_caches()
    profiler.runcall(whole)
    stats = pstats.Stats(profiler)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    print(f"functions with the most own time (share of the profiled {total * 1e3:.0f} ms):")
    for (path, line, function), (_calls, count, own, cumulative, _callers) in rows[:top]:
        where = _short(path)
        print(
            f"  {own / total * 100:5.1f}%  own  {cumulative / total * 100:5.1f}% with callees  "
            f"{count:6d} calls  {where}:{line}({function})"
        )


def _short(path: str) -> str:
    for marker in ("site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    root = str(ROOT) + "/"
    return path.removeprefix(root)


def served(game_id: str, seconds: float, clients: int) -> None:
    """The engine process's CPU time per call: Ping, then ApplyActions without and with
    the view, each under the same load."""
    bench.SECONDS = seconds
    with tempfile.TemporaryDirectory(prefix="wargame-profile-") as scratch:
        folder = Path(scratch)
        files = bench._requests(folder, (game_id,))[game_id]
        engine = bench._Engine(1, folder)
        try:
            loads = (
                ("Ping (size of ApplyActions without view)", "Ping", files["position-ping"]),
                ("ApplyActions without view", "ApplyActions", files["position"]),
                ("Ping (size of ApplyActions with view)", "Ping", files["view-ping"]),
                ("ApplyActions with view", "ApplyActions", files["view"]),
            )
            print(f"{game_id}: the engine process's CPU per call, {clients} clients in flight:")
            for name, method, path in loads:
                per_call, rates = [], []
                for _ in range(ROUNDS):
                    before = cpu_seconds([engine.process.pid])
                    figures = bench._load(engine.address, method, path, clients)
                    used = cpu_seconds([engine.process.pid]) - before
                    per_call.append(used / figures["calls"] * 1e6)
                    rates.append(figures["rps"])
                print(
                    f"  {statistics.median(per_call):6.0f} us CPU/call "
                    f"({min(per_call):.0f}..{max(per_call):.0f}), "
                    f"{statistics.median(rates):6.0f} calls/s  {name}"
                )
        finally:
            engine.stop()


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("what", choices=("cycle", "served"))
    parser.add_argument("--game", default="war", choices=bench.GAMES)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args(argv)
    if args.what == "cycle":
        cycle(args.game, args.top)
    else:
        served(args.game, args.seconds, args.clients)
    return 0


if __name__ == "__main__":
    sys.exit(main())
