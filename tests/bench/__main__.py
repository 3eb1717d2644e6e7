"""`make bench`: every benchmark module in turn, figures printed and saved as JSON.

python -m tests.bench [--run-dir run] [--only war,engine_service,...]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from tests.bench.harness import Bench

MODULES = (
    "war",
    "battle",
    "napoleonic",
    "engine_service",
    "matchmaker",
    "start",
    "capacity",
    "watch_burst",
    "strangers",
    "web",
)


def main() -> int:
    """Run the benchmarks and save their figures under the run folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="run", type=Path)
    parser.add_argument(
        "--only", default="", help="comma-separated subset of " + ", ".join(MODULES)
    )
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name] or list(MODULES)
    unknown = sorted(set(chosen) - set(MODULES))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}")
    bench = Bench()
    started = time.perf_counter()
    for name in chosen:
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"tests.bench.bench_{name}")
        module.run(bench)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = args.run_dir / "bench"
    bench.save(folder / f"bench-{stamp}.json")
    bench.save(folder / "latest.json")
    took = time.perf_counter() - started
    print(f"== {len(bench.figures)} figures in {took:.0f} s; saved to {folder / 'latest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
