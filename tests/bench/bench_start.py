"""Starts: the CLI's `--help` and an engine's first answer, wall and CPU time.

- `wargame --help` beside `python -c 'import argparse, json, pathlib'` (the least a Python
  command line imports), runs taken in turns: wall time per run and the CPU time of the
  process (user + system, from the children's resource usage), with the ratio (goal:
  <= 2.5x).
- An engine with 2 workers, from its start to its first SuggestAction answered (a War
  start position, 0.1 s budget, retried until a worker answers): wall time and the CPU
  time of its process tree by then. Measured as the first start after setup is (the
  bytecode the installer compiled, none written by the start: PYTHONDONTWRITEBYTECODE=1),
  and without any bytecode (PYTHONPYCACHEPREFIX an empty folder: every module compiled
  from source, as every start was on a machine with PYTHONDONTWRITEBYTECODE set before the
  installer compiled), in turns; the goal (<= 5 s) is on the first start after setup.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from google.protobuf import duration_pb2

from tests.bench.harness import Bench, Sample, Side, cpu_seconds, process_tree
from tests.servers import ROOT, engine_command, free_port
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

START_REPEATS = 3  # an engine start takes seconds (tens, cold, on a busy machine)
START_TIMEOUT = 180.0
# The channel tries the port again every 50 ms until the engine listens: with gRPC's own
# backoff (1 s, then 1.6 times longer each time) the figure counted up to seconds of
# waiting for the client's next try after the engine was ready.
QUICK_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 50),
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(argv: list[str]) -> Side:
    """A side: one run of `argv` to its end, wall time and its CPU time."""
    name = " ".join(argv)

    def once() -> Sample:
        cpu, wall = _children_cpu(), time.perf_counter()
        subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
        return Sample(1, time.perf_counter() - wall, _children_cpu() - cpu)

    return Side(name, once, "run", "ms")


def _wargame() -> list[str]:
    """The installed `wargame` command beside this interpreter, else its module."""
    script = Path(sys.executable).with_name("wargame")
    return [str(script)] if script.exists() else [sys.executable, "-m", "cli_client.main"]


def _first_answer(cold: bool) -> Sample:
    """Start a 2-worker engine; wall and tree CPU time until its first SuggestAction answer."""
    address = f"127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory(prefix="wargame-bench-start-") as scratch:
        env = {**os.environ, "WARGAME_LOG_FORMAT": "json", "PYTHONDONTWRITEBYTECODE": "1"}
        if cold:
            env["PYTHONPYCACHEPREFIX"] = scratch  # empty: nothing compiled yet
        else:
            env.pop("PYTHONPYCACHEPREFIX", None)
        request = engine_pb2.SuggestActionRequest(
            state=_war_start(), time_budget=duration_pb2.Duration(nanos=100_000_000)
        )
        started = time.perf_counter()
        process = subprocess.Popen(
            engine_command(address, "--log-level", "warning", workers=2),
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with grpc.insecure_channel(address, options=QUICK_RECONNECT) as channel:
                stub = engine_pb2_grpc.RulesEngineStub(channel)
                while True:
                    if process.poll() is not None:
                        raise RuntimeError(f"engine exited with {process.returncode}")
                    if time.perf_counter() - started > START_TIMEOUT:
                        raise TimeoutError(f"no SuggestAction answer in {START_TIMEOUT} s")
                    try:
                        stub.SuggestAction(request, timeout=10)
                        break
                    except grpc.RpcError:
                        time.sleep(0.02)
            wall = time.perf_counter() - started
            cpu = cpu_seconds(process_tree(process.pid))
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return Sample(1, wall, cpu)


_START: list[game_pb2.GameState] = []


def _war_start() -> game_pb2.GameState:
    """The Game of War start position, from the rules in this process (made once)."""
    if not _START:
        from engine_service.convert import conversions
        from engine_service.rules import rulesets
        from engine_service.rules.game import Game

        games = rulesets(bytes(32))
        ruleset = games["war"]
        game = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
        _START.append(conversions(games).game_to_proto(game, view=False))
    return _START[0]


def run(bench: Bench) -> None:
    """The start figures."""
    bench.compare(
        _command([sys.executable, "-c", "import argparse, json, pathlib"]),
        _command([*_wargame(), "--help"]),
        goal="<= 2.5x python -c 'import argparse, json, pathlib'",
        cost=True,
    )
    after_setup = Side("engine 2 workers, start to first SuggestAction answered, first start "
                       "after setup", lambda: _first_answer(cold=False), "start", "s")  # fmt: skip
    no_bytecode = Side("engine 2 workers, start to first SuggestAction answered, no bytecode",
                       lambda: _first_answer(cold=True), "start", "s")  # fmt: skip
    bench.compare(after_setup, no_bytecode, cost=True, repeats=START_REPEATS, warmup=0)
    first_start = bench.figures[-4]  # the goal is in seconds, of that start's wall time
    first_start.goal = "<= 5 s"
    print(f"  goal of {first_start.name}: {first_start.goal}", flush=True)


def main() -> int:
    """The start figures alone."""
    run(Bench())
    return 0


if __name__ == "__main__":
    sys.exit(main())
