"""RulesEngine under load (issues #6, #18), every figure beside a same-run reference.

- A mid-game state of each game on the wire, in bytes: as a server keeps and sends it (the
  game and its position text), as the engine answers without the view, and in the
  structured form clients sent before the position existed (the reference).
- One stateless cycle in-process, War: request bytes -> read the state -> validate and
  apply the action -> response bytes, beside python-chess's `Board(fen)` + `is_legal` +
  `push` + `fen()` in the same run; both go round 1000 distinct positions of random games
  (more than any rules cache keeps), so neither answers from memory.
- A no-op RPC (Ping, carrying as many bytes as the request) is the ceiling; then
  ApplyActions with and without the view for drawing (STATE_VIEW_POSITION), and
  ListLegalActions, at 1 and 16 clients in flight: requests per second, p50/p99 latency,
  ratio to the no-op. Each load goes round 600 distinct game positions.
- ApplyActions p99 on 1 worker while a separate process floods it with maximum-budget
  SuggestAction calls (FLOOD_CLIENTS in flight, each re-sent 50 ms after a refusal: the
  search pool stays full and refuses the rest), beside its p99 without the flood.
- The same ApplyActions load against 1 worker and against 2 workers.
- Resident memory per worker after the load.

Load generators are separate processes (`tests.bench.load`), one asyncio client per
connection; the figures name the number of clients.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import duration_pb2

from engine_service.convert import conversions
from engine_service.convert.tags import tag_key
from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.service import RulesEngine
from tests.bench.harness import Bench, Figure, Side, rss_mb, serving_pids, timed
from tests.bench.load import write_requests
from tests.servers import ROOT, engine_command, free_port, wait_healthy
from wargame.runtime.logs import configure_logging
from wargame.v1 import engine_pb2, game_pb2

SECONDS = 2.0
REPEATS = 5
MIDDLEGAME_PLIES = {"war": 24, "battle": 24, "napoleonic": 40}
POSITIONS = 600  # distinct requests per load: more than the rules' caches keep (512)
CYCLE_POSITIONS = 1000
SKIPPED_PLIES = 8  # the openings are left out of the loads' positions
GAMES = ("war", "battle", "napoleonic")
SIZE_GOALS = {"war": 300, "battle": 300, "napoleonic": 600}
FLOOD_CLIENTS = 12
SERVICE = "/wargame.v1.RulesEngine/"
SEAL_KEY = bytes(range(32))  # the served engine's too: the requests carry its tags


def middlegame(game_id: str, seed: int = 7) -> tuple[Game[Any], Any]:
    """A middlegame position reached by seeded random play, and an action legal in it."""
    games = rulesets(SEAL_KEY)
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


def positions(game_id: str, count: int, seed: str) -> list[tuple[Game[Any], Any]]:
    """`count` distinct (game, legal action) pairs along seeded random games, openings left
    out."""
    ruleset = rulesets(SEAL_KEY)[game_id]
    rng = random.Random(seed)
    found: list[tuple[Game[Any], Any]] = []
    seen: set[str] = set()
    converted = conversions(rulesets(SEAL_KEY))
    while len(found) < count:
        game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
        while len(found) < count and game.outcome is None:
            action = ruleset.random_action(game.state, rng)
            if action is None:
                break
            text = converted.game_to_proto(game, view=False).position
            if game.ply >= SKIPPED_PLIES and text not in seen:
                seen.add(text)
                found.append((game, action))
            game, _ = game.apply(ruleset.actor(game.state, action), action)
    return found


def _compact(state: game_pb2.GameState) -> game_pb2.GameState:
    """A state as a server that keeps only positions sends it (with the engine's tag, as
    the matchmaker does)."""
    return game_pb2.GameState(
        game=state.game, position=state.position, position_tag=state.position_tag
    )


def _structured(state: game_pb2.GameState) -> game_pb2.GameState:
    """A state as clients sent it before the position existed."""
    old = game_pb2.GameState()
    old.CopyFrom(state)
    old.ClearField("position")
    return old


# --- sizes and the in-process cycle -------------------------------------------------------


def sizes(bench: Bench) -> None:
    """A mid-game state of each game on the wire, in bytes, beside the structured form."""
    converted = conversions(rulesets(SEAL_KEY))
    for game_id, goal in SIZE_GOALS.items():
        game, _action = middlegame(game_id)
        full = converted.game_to_proto(game)
        answer = len(converted.game_to_proto(game, view=False).SerializeToString())
        sent = len(_compact(full).SerializeToString())
        before = len(_structured(full).SerializeToString())
        reference = Figure(
            f"{game_id} mid-game state on the wire, structured form (before positions)",
            "bytes",
            before,
            before,
            before,
        )
        bench.report(reference)
        for label, size in (("game and position", sent), ("engine's answer without view", answer)):
            bench.report(
                Figure(f"{game_id} mid-game state on the wire, {label}", "bytes", size, size, size),
                reference,
                goal=f"<= {goal} bytes",
            )


class _Context:
    """The servicer context of an in-process call: no deadline, no metadata."""

    def time_remaining(self) -> float | None:
        return None

    def invocation_metadata(self) -> tuple[()]:
        return ()

    def abort_with_status(self, status: Any) -> None:
        raise RuntimeError(status)


def stateless_cycle(bench: Bench) -> None:
    """One War ApplyActions in-process, beside python-chess's equivalent, same run."""
    import chess

    from engine_service.rules.war.ruleset import clear_caches

    configure_logging("json", "warning")  # as the served engine logs (`--log-level warning`)
    games = rulesets(SEAL_KEY)
    converted = conversions(games, tag_key(SEAL_KEY))
    engine = RulesEngine(games, tag_key=tag_key(SEAL_KEY))
    requests = []
    untagged = []  # the same requests with texts from elsewhere: checked in full
    for game, action in positions("war", CYCLE_POSITIONS, "war stateless cycle"):
        request = engine_pb2.ApplyActionsRequest(
            state=_compact(converted.game_to_proto(game, view=False)),
            actions=[converted.action_to_proto(game, action)],
            view=engine_pb2.STATE_VIEW_POSITION,
        )
        requests.append(request.SerializeToString())
        request.state.ClearField("position_tag")
        untagged.append(request.SerializeToString())
    rng = random.Random("chess stateless cycle")
    fens: list[tuple[str, str]] = []
    while len(fens) < CYCLE_POSITIONS:
        board = chess.Board()
        while len(fens) < CYCLE_POSITIONS and not board.is_game_over():
            move = rng.choice(list(board.legal_moves))
            if board.ply() >= SKIPPED_PLIES:
                fens.append((board.fen(), move.uci()))
            board.push(move)
    context = _Context()
    call = engine.ApplyActions
    read = engine_pb2.ApplyActionsRequest.FromString

    def cycles(batch: list[bytes]) -> Callable[[], int]:
        def run() -> int:
            clear_caches()
            for data in batch:
                call(read(data), context).SerializeToString()
            return len(batch)

        return run

    ours = cycles(requests)

    def theirs() -> int:
        for fen, uci in fens:
            board = chess.Board(fen)
            move = chess.Move.from_uci(uci)
            if not board.is_legal(move):
                raise AssertionError(uci)
            board.push(move)
            board.fen()
        return len(fens)

    bench.compare(
        Side(f"python-chess Board(fen) + is_legal + push + fen(), {len(fens)} positions",
             timed(theirs), "cycle"),
        Side("war stateless ApplyActions in-process (request bytes -> response bytes, "
             f"no view), {len(requests)} positions, caches cleared", timed(ours), "cycle"),
        goal="<= 1.0x python-chess",
        cost=True,
    )  # fmt: skip
    bench.compare(
        Side(f"war stateless ApplyActions in-process, texts untagged (checked in full), "
             f"{len(untagged)} positions", timed(cycles(untagged)), "cycle"),
        Side(f"war stateless ApplyActions in-process, texts tagged by the engine, "
             f"{len(requests)} positions", timed(ours), "cycle"),
        cost=True,
    )  # fmt: skip


# --- the engine under load ----------------------------------------------------------------


def _requests(folder: Path, games: tuple[str, ...] = GAMES) -> dict[str, dict[str, Path]]:
    """Request files for each game: ApplyActions with and without the view, ListLegalActions
    (position only), and Pings of the same sizes."""
    converted = conversions(rulesets(SEAL_KEY), tag_key(SEAL_KEY))  # the served engine's tags
    files: dict[str, dict[str, Path]] = {}
    for game_id in games:
        made: dict[str, list[bytes]] = {name: [] for name in ("view", "position", "legal")}
        for game, action in positions(game_id, POSITIONS, f"{game_id} engine load"):
            full = converted.game_to_proto(game)
            wire_action = converted.action_to_proto(game, action)
            made["view"].append(
                engine_pb2.ApplyActionsRequest(
                    state=full, actions=[wire_action]
                ).SerializeToString()
            )
            made["position"].append(
                engine_pb2.ApplyActionsRequest(
                    state=_compact(full),
                    actions=[wire_action],
                    view=engine_pb2.STATE_VIEW_POSITION,
                ).SerializeToString()
            )
            made["legal"].append(
                engine_pb2.ListLegalActionsRequest(state=_compact(full)).SerializeToString()
            )
            made.setdefault("search", []).append(
                engine_pb2.SuggestActionRequest(
                    state=_compact(full),
                    time_budget=duration_pb2.Duration(seconds=int(Limits().max_suggest_seconds)),
                ).SerializeToString()
            )
        files[game_id] = {}
        for name, requests in made.items():
            path = folder / f"{game_id}-{name}.bin"
            write_requests(path, requests)
            files[game_id][name] = path
            if name == "search":
                continue
            mean = sum(len(r) for r in requests) // len(requests)
            ping = folder / f"{game_id}-{name}-ping.bin"
            write_requests(ping, [engine_pb2.PingRequest(payload=b"x" * mean).SerializeToString()])
            files[game_id][f"{name}-ping"] = ping
    return files


class _Engine:
    def __init__(self, workers: int, folder: Path) -> None:
        self.address = f"127.0.0.1:{free_port()}"
        log = (folder / f"engine-{workers}.log").open("ab")
        key_file = folder / "seal.key"
        key_file.write_text(SEAL_KEY.hex())
        self.process = subprocess.Popen(
            engine_command(
                self.address,
                "--log-level",
                "warning",
                "--seal-key-file",
                str(key_file),
                workers=workers,
            ),
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
        """Resident memory of each serving process: the ones listening on the engine's port
        (the workers, or the single process), not the helpers its search pool forks."""
        port = int(self.address.rpartition(":")[2])
        return [rss_mb(pid) for pid in serving_pids(self.process.pid, port)]

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


def _load(
    address: str, method: str, request: Path, concurrency: int, cpu_of: tuple[int, ...] = ()
) -> dict[str, float]:
    """One timed load (a separate process); with `cpu_of`, also the CPU those processes'
    trees used per call meanwhile."""
    flags = [f"--cpu-of={pid}" for pid in cpu_of]
    out = subprocess.run(
        [*_load_argv(address, method, request, concurrency, SECONDS), *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    if figures["errors"]:
        raise AssertionError(f"{method} load on {request.name}: {figures['errors']} errors")
    return figures


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


def _figures(name: str, runs: list[dict[str, float]]) -> dict[str, Figure]:
    """The figures of repeated loads: rate, p50, p99, and the server's CPU per call."""
    made = {}
    for key, label, unit in (
        ("rps", "", "req/s"),
        ("p50_ms", " p50", "ms"),
        ("p99_ms", " p99", "ms"),
        ("cpu_us_per_call", ", server CPU", "us CPU/call"),
    ):
        values = [run[key] for run in runs]
        made[key] = Figure(
            f"{name}{label}", unit, statistics.median(values), min(values), max(values), values
        )
    return made


def _in_turns(
    engine: _Engine, method: str, request: Path, ping: Path, clients: int, *, names: tuple[str, str]
) -> tuple[dict[str, Figure], dict[str, Figure]]:
    """Pings and `method` calls of the same size, loads taken in turns (Ping, method, Ping,
    ...), each with the engine's CPU per call: the figures of each."""
    pid = (engine.process.pid,)
    pings: list[dict[str, float]] = []
    calls: list[dict[str, float]] = []
    for _ in range(REPEATS):
        pings.append(_load(engine.address, "Ping", ping, clients, pid))
        calls.append(_load(engine.address, method, request, clients, pid))
    return _figures(names[0], pings), _figures(names[1], calls)


# (method, request file, clients, goal of the ratio of CPU per call, Ping's / the method's)
LOADS = (
    ("ApplyActions", "view", 16, ">= 0.5x Ping"),
    ("ApplyActions", "position", 16, ">= 0.7x Ping"),
    ("ListLegalActions", "legal", 16, ">= 0.5x Ping"),
    ("ApplyActions", "position", 1, ""),
    ("ListLegalActions", "legal", 1, ""),
)
LABELS = {"view": "with view", "position": "without view", "legal": "position only"}


def _loads(bench: Bench, engine: _Engine, files: dict[str, dict[str, Path]]) -> None:
    """Each load beside Pings of the same size, taken in turns: rates, latencies, and the
    engine's CPU per call (the steady figure: the goals are on it)."""
    for game_id, paths in files.items():
        for method, name, clients, goal in LOADS:
            tag = f"engine 1 worker {game_id} {clients} client{'s' if clients > 1 else ''}"
            ping, call = _in_turns(
                engine,
                method,
                paths[name],
                paths[f"{name}-ping"],
                clients,
                names=(f"{tag} Ping (same size as {method} {LABELS[name]})",
                 f"{tag} {method} {LABELS[name]}"),
            )  # fmt: skip
            for key in ("rps", "p50_ms", "p99_ms", "cpu_us_per_call"):
                bench.report(ping[key], higher_is_better=key == "rps")
            bench.report(call["rps"], ping["rps"], paired=True)
            bench.report(call["p50_ms"], ping["p50_ms"], higher_is_better=False)
            bench.report(call["p99_ms"], ping["p99_ms"], higher_is_better=False)
            bench.report(
                call["cpu_us_per_call"],
                ping["cpu_us_per_call"],
                goal=goal,
                higher_is_better=False,
                paired=True,
            )


def _flood_figures(bench: Bench, engine: _Engine, files: dict[str, Path]) -> None:
    """ApplyActions p99 with and without a flood of maximum-budget searches."""
    for clients in (1, 16):
        tag = f"engine 1 worker war {clients} client{'s' if clients > 1 else ''} ApplyActions"
        apply = files["position"]
        calm = _measure(f"{tag} (no flood)", engine.address, "ApplyActions", apply, clients)
        flood = subprocess.Popen(
            [
                *_load_argv(
                    engine.address,
                    "SuggestAction",
                    files["search"],
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


PARTS = ("sizes", "cycle", "loads", "flood", "workers")


def run(bench: Bench, parts: tuple[str, ...] = PARTS, games: tuple[str, ...] = GAMES) -> None:
    """The engine-service figures (all of them, or the named `parts` for the named games)."""
    if "sizes" in parts:
        sizes(bench)
    if "cycle" in parts:
        stateless_cycle(bench)
    if not {"loads", "flood", "workers"} & set(parts):
        return
    with tempfile.TemporaryDirectory(prefix="wargame-bench-") as scratch:
        folder = Path(scratch)
        files = _requests(folder, games if "loads" in parts else ("war",))
        engine = _Engine(1, folder)
        try:
            if "loads" in parts:
                _loads(bench, engine, files)
            if "flood" in parts:
                _flood_figures(bench, engine, files["war"])
            if "workers" not in parts:
                return
            one = _measure(
                "engine 1 worker war 16 clients ApplyActions without view",
                engine.address,
                "ApplyActions",
                files["war"]["position"],
                16,
            )[0]
            rss_one = engine.worker_rss_mb()
        finally:
            engine.stop()
        engine = _Engine(2, folder)
        try:
            two = _measure(
                "engine 2 workers war 16 clients ApplyActions without view",
                engine.address,
                "ApplyActions",
                files["war"]["position"],
                16,
            )[0]
            bench.report(one)
            bench.report(two, one, goal=">= 1.6x 1 worker")
            rss_two = engine.worker_rss_mb()
        finally:
            engine.stop()
        for label, sizes_mb in (("1 worker", rss_one), ("2 workers", rss_two)):
            bench.report(
                Figure(
                    f"engine resident memory per worker after load ({label})",
                    "MB",
                    max(sizes_mb),
                    min(sizes_mb),
                    max(sizes_mb),
                    sizes_mb,
                ),
                goal="< 100 MB",
            )


def main() -> int:
    """Some engine-service figures alone: `python -m tests.bench.bench_engine_service --part
    cycle` (the in-process cycle), `--part loads --game war` (the loads of one game), ..."""
    parser = argparse.ArgumentParser(description=(main.__doc__ or "").splitlines()[0])
    parser.add_argument("--part", action="append", choices=PARTS, help="default: every part")
    parser.add_argument("--game", action="append", choices=GAMES, help="loads: default all")
    args = parser.parse_args()
    run(Bench(), tuple(args.part or PARTS), tuple(args.game or GAMES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
