"""The web service: a move's way to a spectator through it beside the same over gRPC, and its
CPU per forwarded SubmitActions beside the matchmaker's own.

`run(bench)` starts its own redis-server, engine, matchmaker and web service processes on free
loopback ports, measures, and stops them. Run alone: `python -m tests.bench.bench_web`.

- Rounds alternate between two paths: the web path (moves posted and a spectator stream
  read as the page does: Connect, binary protobuf, over HTTP/1.1 through `wargame-web`, each
  player's calls on one kept-alive connection) and the gRPC
  path (as the CLI: SubmitActions and WatchGame straight to the matchmaker). Each round plays
  `PLIES` actions of a fresh Game of War and times each from its submission until the
  spectator holds its update.
- Figures: p50 and p99 of that time on the web path beside the gRPC path of the same run
  (goal: <= 1.5x), and the web service's CPU per forwarded SubmitActions (its spectator
  stream's share included) beside the matchmaker's CPU per SubmitActions in the same rounds.
"""

from __future__ import annotations

import queue
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc

from tests.bench.bench_matchmaker import figure, legal_sequence, percentile
from tests.bench.harness import REPEATS, Bench, cpu_seconds, process_tree
from tests.servers import ServiceProcess, start_engine, start_redis, start_service
from tests.web.conftest import start_web
from tests.web.connect_client import MATCHMAKER, ConnectClient
from wargame.v1 import game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

PLIES = 30


@contextmanager
def stack(directory: Path) -> Iterator[tuple[ServiceProcess, ServiceProcess, ServiceProcess]]:
    """(engine, matchmaker, web) processes, with redis-server, stopped at the end."""
    redis = start_redis(directory / "redis")
    engine = start_engine(directory)
    matchmaker = start_service(
        "matchmaker.main",
        ["--redis-url", redis.url, "--engine", engine.address, "--metrics-listen", "off",
         "--rate-limit", "0", "--register-peer-rate", "0", "--register-rate", "0",
         "--trusted-proxies", "127.0.0.1/32"],
        log_path=directory / "matchmaker.log",
        service="wargame.v1.Matchmaker",
    )  # fmt: skip
    web = start_web(directory, matchmaker.address, engine.address)
    try:
        yield engine, matchmaker, web
    finally:
        for process in (web, matchmaker, engine):
            process.stop()
        redis.stop()


class Route:
    """One way of playing and watching: through the web service, or gRPC straight."""

    def __init__(self, web: bool, matchmaker: str, web_address: str) -> None:
        self.web = web
        self.matchmaker = matchmaker
        self.web_address = web_address
        self.channel = grpc.insecure_channel(matchmaker)
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(self.channel)
        self.clients: dict[str, ConnectClient] = {}

    def register(self, name: str) -> str:
        return str(self.stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=name)).token)

    def call(self, token: str, method: str, request, answer):
        if self.web:
            if token not in self.clients:
                self.clients[token] = ConnectClient(
                    self.web_address, token, binary=True, keep_alive=True
                )
            return self.clients[token].unary(MATCHMAKER + method, request, answer)
        metadata = (("authorization", f"Bearer {token}"),)
        return getattr(self.stub, method)(request, metadata=metadata, timeout=30)

    def watch(self, game_id: str, after: int, seen: queue.Queue[tuple[int, float]]) -> None:
        """Read the spectator stream in a thread: (version, arrival) for each update."""
        request = mm.WatchGameRequest(game_id=game_id, after_version=after)
        if self.web:
            updates = ConnectClient(self.web_address, binary=True).stream(
                MATCHMAKER + "WatchGame", request, mm.WatchGameResponse, timeout=300
            )
        else:
            updates = self.stub.WatchGame(request, timeout=300)
        for update in updates:
            if not update.HasField("notice"):
                seen.put((update.version, time.perf_counter()))
                if update.game.status == mm.GAME_STATUS_FINISHED:
                    return

    def close(self) -> None:
        self.channel.close()
        for client in self.clients.values():
            client.close()


def one_round(path: Route, actions: list[game_pb2.Action], sides: list[str]) -> list[float]:
    """Seconds from each submission to the spectator's copy of it, over one game."""
    tokens = {"south": path.register("South"), "north": path.register("North")}
    created = path.call(
        tokens["south"], "CreateGame", mm.CreateGameRequest(game="war", side="south"),
        mm.CreateGameResponse(),
    )  # fmt: skip
    joined = path.call(
        tokens["north"], "JoinGame", mm.JoinGameRequest(invite_code=created.invite_code),
        mm.JoinGameResponse(),
    )  # fmt: skip
    game = joined.game
    seen: queue.Queue[tuple[int, float]] = queue.Queue()
    watcher = threading.Thread(target=path.watch, args=(game.id, game.version, seen), daemon=True)
    watcher.start()
    time.sleep(0.5)  # the stream is open (an update before it would still arrive, later)
    delays = []
    version = game.version
    for action, side in zip(actions, sides, strict=True):
        started = time.perf_counter()
        reply = path.call(
            tokens[side], "SubmitActions",
            mm.SubmitActionsRequest(game_id=game.id, expected_version=version, actions=[action]),
            mm.SubmitActionsResponse(),
        )  # fmt: skip
        version = reply.game.version
        while True:
            arrived_version, arrived = seen.get(timeout=60)
            if arrived_version == version:
                break
        delays.append(arrived - started)
        if reply.game.status == mm.GAME_STATUS_FINISHED:
            break
    path.call(tokens["south"], "Resign", mm.ResignRequest(game_id=game.id), mm.ResignResponse())
    watcher.join(60)
    return delays


def run(bench: Bench) -> None:
    """Measure both paths in turns, and the CPU of the web service and the matchmaker."""
    with tempfile.TemporaryDirectory() as folder, stack(Path(folder)) as (engine, mmp, web):
        actions, sides = legal_sequence(engine.address, PLIES)
        paths = {kind: Route(kind == "web", mmp.address, web.address) for kind in ("web", "grpc")}
        web_pids, mm_pids = process_tree(web.process.pid), process_tree(mmp.process.pid)
        p50: dict[str, list[float]] = {"web": [], "grpc": []}
        p99: dict[str, list[float]] = {"web": [], "grpc": []}
        web_cpu, mm_cpu = [], []
        one_round(paths["web"], actions, sides)  # warm up both
        one_round(paths["grpc"], actions, sides)
        for _ in range(REPEATS):
            for kind in ("web", "grpc"):
                before = cpu_seconds(web_pids), cpu_seconds(mm_pids)
                delays = one_round(paths[kind], actions, sides)
                if kind == "web":
                    web_cpu.append((cpu_seconds(web_pids) - before[0]) / len(delays) * 1e3)
                    mm_cpu.append((cpu_seconds(mm_pids) - before[1]) / len(delays) * 1e3)
                p50[kind].append(percentile(delays, 0.5) * 1e3)
                p99[kind].append(percentile(delays, 0.99) * 1e3)
        for name, values in (("p50", p50), ("p99", p99)):
            grpc_figure = bench.report(
                figure(f"move to spectator over gRPC (as the CLI), {name}", "ms", values["grpc"])
            )
            bench.report(
                figure(f"move to spectator through the web service, {name}", "ms", values["web"]),
                grpc_figure,
                goal=">= 0.67x (at most 1.5 times the CLI's time)",
                higher_is_better=False,
                paired=True,
            )
        reference = bench.report(figure("matchmaker CPU per SubmitActions", "ms", mm_cpu))
        bench.report(
            figure("web service CPU per forwarded SubmitActions", "ms", web_cpu),
            reference,
            higher_is_better=False,
            paired=True,
        )
        for path in paths.values():
            path.close()


if __name__ == "__main__":
    run(Bench())
