"""RulesEngine under load (issue #6), every figure beside a same-run reference.

- A no-op RPC (Ping, carrying as many bytes as the game's state) is the ceiling; then
  ApplyActions and ListLegalActions with a middlegame state of each game, at 1 and 16
  clients in flight: requests per second, p50/p99 latency, ratio to the no-op.
- The same ApplyActions load against 1 worker and against 2 workers.
- ApplyActions p99 on 1 worker while a separate process floods it with maximum-budget
  SuggestAction calls (FLOOD_CLIENTS in flight, each re-sent 50 ms after a refusal: the
  search pool stays full and refuses the rest), beside its p99 without the flood.
- Resident memory per worker after the load.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from google.protobuf import duration_pb2

from engine_service.convert import conversions
from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from tests.bench.harness import Bench, Figure
from tests.servers import ROOT, free_port, wait_healthy
from wargame.v1 import engine_pb2

SECONDS = 2.0
REPEATS = 5
CONCURRENCY = (1, 16)
FLOOD_CLIENTS = 12
MIDDLEGAME_PLIES = {"war": 24, "battle": 24, "napoleonic": 40}
SERVICE = "/wargame.v1.RulesEngine/"


def middlegame(game_id: str, seed: int = 7) -> tuple[Game[Any], Any]:
    """A middlegame position reached by seeded random play, and an action legal in it."""
    games = rulesets(bytes(32))
    ruleset = games[game_id]
    rng = random.Random(seed)
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    for _ in range(MIDDLEGAME_PLIES[game_id]):
        action = ruleset.random_action(game.state, rng)
        if action is None or game.outcome is not None:
            break
        game, _ = game.apply(ruleset.actor(game.state, action), action)
    action = ruleset.random_action(game.state, rng)
    if action is None or game.outcome is not None:
        return middlegame(game_id, seed + 1)
    return game, action


def _requests(folder: Path) -> dict[str, dict[str, Path]]:
    """Pre-serialized Ping, ApplyActions, ListLegalActions and maximum-budget SuggestAction
    requests for each game."""
    converted = conversions(rulesets(bytes(32)))
    files: dict[str, dict[str, Path]] = {}
    for game_id in ("war", "battle", "napoleonic"):
        game, action = middlegame(game_id)
        state = converted.game_to_proto(game, MIDDLEGAME_PLIES[game_id])
        apply = engine_pb2.ApplyActionsRequest(
            state=state, actions=[converted.action_to_proto(game, action)]
        )
        legal = engine_pb2.ListLegalActionsRequest(state=state)
        ping = engine_pb2.PingRequest(payload=b"x" * len(state.SerializeToString()))
        search = engine_pb2.SuggestActionRequest(
            state=state,
            time_budget=duration_pb2.Duration(seconds=int(Limits().max_suggest_seconds)),
        )
        files[game_id] = {}
        for name, message in (
            ("Ping", ping),
            ("ApplyActions", apply),
            ("ListLegalActions", legal),
            ("SuggestAction", search),
        ):
            path = folder / f"{game_id}-{name}.bin"
            path.write_bytes(message.SerializeToString())
            files[game_id][name] = path
    return files


class _Engine:
    def __init__(self, workers: int, folder: Path) -> None:
        self.address = f"127.0.0.1:{free_port()}"
        log = (folder / f"engine-{workers}.log").open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "engine_service.main",
                "serve",
                "--listen",
                self.address,
                "--workers",
                str(workers),
                "--metrics-listen",
                "off",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "WARGAME_LOG_FORMAT": "json"},
        )
        wait_healthy(self.address, "wargame.v1.RulesEngine", 60)
        # Connections are spread over the workers listening when they are made, and the load
        # keeps its connections: wait until every worker listens, not just the first.
        deadline = time.monotonic() + 60
        while self.listeners() < workers and time.monotonic() < deadline:
            time.sleep(0.1)

    def listeners(self) -> int:
        """How many sockets listen on the engine's port (one per worker)."""
        port = self.address.rpartition(":")[2]
        out = subprocess.run(
            ["ss", "-Htln", f"( sport = :{port} )"], capture_output=True, text=True, check=False
        ).stdout
        return len(out.strip().splitlines())

    def worker_rss_mb(self) -> list[float]:
        """Resident memory of each serving process (the workers, or the single process)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(p) for p in children.read_text().split()] if children.exists() else []
        sizes = []
        for pid in pids or [self.process.pid]:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes.append(int(line.split()[1]) / 1024)
        return sizes

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _load_argv(
    address: str, method: str, request: Path, concurrency: int, seconds: float
) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tests.bench.load",
        address,
        SERVICE + method,
        str(request),
        "--concurrency",
        str(concurrency),
        "--seconds",
        str(seconds),
    ]


def _load(address: str, method: str, request: Path, concurrency: int) -> dict[str, float]:
    out = subprocess.run(
        _load_argv(address, method, request, concurrency, SECONDS),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _measure(
    name: str, address: str, method: str, request: Path, concurrency: int
) -> tuple[Figure, Figure, Figure]:
    runs = [_load(address, method, request, concurrency) for _ in range(REPEATS)]
    made = []
    for key, unit in (("rps", "req/s"), ("p50_ms", "ms"), ("p99_ms", "ms")):
        values = [run[key] for run in runs]
        made.append(
            Figure(
                f"{name} {key.replace('_ms', '')}",
                unit,
                sorted(values)[len(values) // 2],
                min(values),
                max(values),
                values,
            )
        )
    return made[0], made[1], made[2]


def _flood_figures(bench: Bench, engine: _Engine, files: dict[str, Path]) -> None:
    """ApplyActions p99 with and without a flood of maximum-budget searches (issue 15.2)."""
    for clients in CONCURRENCY:
        tag = f"engine 1 worker war {clients} client{'s' if clients > 1 else ''} ApplyActions"
        apply = files["ApplyActions"]
        calm = _measure(f"{tag} (no flood)", engine.address, "ApplyActions", apply, clients)
        flood = subprocess.Popen(
            [
                *_load_argv(
                    engine.address,
                    "SuggestAction",
                    files["SuggestAction"],
                    FLOOD_CLIENTS,
                    REPEATS * SECONDS * 4 + 30,
                ),
                "--pause-after-error",
                "0.05",
                "--no-warm-up",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(2.0)  # the flood connects and fills the search pool
            flooded = _measure(
                f"{tag} under a SuggestAction flood", engine.address, "ApplyActions", apply, clients
            )
        finally:
            flood.send_signal(signal.SIGTERM)
            flood.wait(30)
        bench.report(calm[2], higher_is_better=False)
        # The ratio reads "the flooded p99 is N times the calm one" (goal: at most 2).
        bench.report(flooded[2], calm[2], goal="<= 2x (flooded / calm)")
        bench.report(flooded[0], calm[0])


def run(bench: Bench) -> None:
    """All engine-service figures."""
    with tempfile.TemporaryDirectory(prefix="wargame-bench-") as scratch:
        folder = Path(scratch)
        requests = _requests(folder)
        engine = _Engine(1, folder)
        try:
            for game_id, files in requests.items():
                for clients in CONCURRENCY:
                    tag = f"engine 1 worker {game_id} {clients} client{'s' if clients > 1 else ''}"
                    ping, ping50, ping99 = _measure(
                        f"{tag} Ping (same size)",
                        engine.address,
                        "Ping",
                        files["Ping"],
                        clients,
                    )
                    bench.report(ping)
                    bench.report(ping50, higher_is_better=False)
                    bench.report(ping99, higher_is_better=False)
                    for method in ("ApplyActions", "ListLegalActions"):
                        rps, p50, p99 = _measure(
                            f"{tag} {method}", engine.address, method, files[method], clients
                        )
                        goal = (
                            ">= 0.6 of Ping" if method == "ApplyActions" and clients == 16 else ""
                        )
                        bench.report(rps, ping, goal=goal)
                        bench.report(p50, ping50, higher_is_better=False)
                        bench.report(p99, ping99, higher_is_better=False)
            _flood_figures(bench, engine, requests["war"])
            one = _measure(
                "engine 1 worker war 16 clients ApplyActions",
                engine.address,
                "ApplyActions",
                requests["war"]["ApplyActions"],
                16,
            )[0]
            rss_one = engine.worker_rss_mb()
        finally:
            engine.stop()
        engine = _Engine(2, folder)
        try:
            two = _measure(
                "engine 2 workers war 16 clients ApplyActions",
                engine.address,
                "ApplyActions",
                requests["war"]["ApplyActions"],
                16,
            )[0]
            bench.report(one)
            bench.report(two, one, goal=">= 1.6x 1 worker")
            rss_two = engine.worker_rss_mb()
        finally:
            engine.stop()
        for label, sizes in (("1 worker", rss_one), ("2 workers", rss_two)):
            bench.report(
                Figure(
                    f"engine resident memory per worker after load ({label})",
                    "MB",
                    max(sizes),
                    min(sizes),
                    max(sizes),
                    sizes,
                ),
                goal="< 100 MB",
            )
