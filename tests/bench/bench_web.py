"""The web service: a move's way to a spectator through it beside the same over gRPC, and its
CPU per forwarded SubmitActions beside the matchmaker's own.

`run(bench)` starts its own redis-server, engine, matchmaker and web service processes on free
loopback ports, measures, and stops them. Run alone: `python -m tests.bench.bench_web`.

- Two paths: the web path (moves posted and a spectator stream read as the page does:
  Connect, binary protobuf, over HTTP/1.1 through `wargame-web`, each player's calls on one
  kept-alive connection) and the gRPC path (as the CLI: SubmitActions and WatchGame straight
  to the matchmaker). Each path has a Game of War in play at a time, its `PLIES` actions
  fixed, its spectator's stream open (and seen to be) before its first move; a finished
  game is followed by a fresh one.
- Samples: one move's time from its submission until the spectator holds its update. The
  two paths' moves alternate one by one (web, gRPC, web, ...: load that comes and goes hits
  both alike). A repetition is `SAMPLES` moves of each path; the first (`WARMUP_SAMPLES`
  moves of each, connections and caches warming) is thrown away, then `REPEATS` are timed.
- Figures: per repetition the p50 and the p99 of each path's moves (the p99 of 500 moves is
  their fifth slowest), printed as the median over the repetitions with min..max; the web
  path's beside the gRPC path's, its ratio the median of the repetitions' ratios (goal:
  at most 1.5 times). Then the web service's CPU per forwarded SubmitActions (its share of
  the game's other calls and of its spectator stream included) beside the matchmaker's CPU
  per SubmitActions (both paths', the same shares included), per repetition.
- One client process: the players' calls from its main thread, each spectator's stream read
  by a thread of its own (blocked in a read between moves).
"""

from __future__ import annotations

import queue
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc

from tests.bench.bench_matchmaker import figure, legal_sequence, percentile
from tests.bench.harness import REPEATS, Bench, cpu_seconds, process_tree
from tests.servers import ServiceProcess, start_engine, start_redis, start_service
from tests.web.conftest import start_web
from tests.web.connect_client import MATCHMAKER, ConnectClient
from wargame.v1 import game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

PLIES = 30  # actions of a game
# Moves of each path per repetition: of 500, about 5 are beyond the true p99 (give or take
# 2), where of 100 it would be the slowest one, whatever the machine did to it.
SAMPLES = 500
WARMUP_SAMPLES = 100  # moves of each path thrown away first
KINDS = ("web", "grpc")


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
    """One way of playing and watching: through the web service, or gRPC straight; its two
    players are registered once and play every game of the route."""

    def __init__(self, web: bool, matchmaker: str, web_address: str) -> None:
        self.web = web
        self.matchmaker = matchmaker
        self.web_address = web_address
        self.channel = grpc.insecure_channel(matchmaker)
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(self.channel)
        self.clients: dict[str, ConnectClient] = {}
        self.tokens = {side: self.register(side.title()) for side in ("south", "north")}

    def register(self, name: str) -> str:
        return str(self.stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=name)).token)

    def call(self, side: str, method: str, request: Any, answer: Any) -> Any:
        """A unary call as `side`'s player."""
        token = self.tokens[side]
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


class Game:
    """A game of one route in play, watched by a spectator, played a move at a time."""

    def __init__(self, route: Route, actions: list[game_pb2.Action], sides: list[str]) -> None:
        self.route = route
        self.actions = actions
        self.sides = sides
        self.played = 0
        created = route.call(
            "south", "CreateGame", mm.CreateGameRequest(game="war", side="south"),
            mm.CreateGameResponse(),
        )  # fmt: skip
        joined = route.call(
            "north", "JoinGame", mm.JoinGameRequest(invite_code=created.invite_code),
            mm.JoinGameResponse(),
        )  # fmt: skip
        self.id = joined.game.id
        self.version = joined.game.version
        self.seen: queue.Queue[tuple[int, float]] = queue.Queue()
        # From the version before: the stream's first update (the game as it is) says it is open.
        self.watcher = threading.Thread(
            target=route.watch, args=(self.id, self.version - 1, self.seen), daemon=True
        )
        self.watcher.start()
        self._arrival(self.version)

    @property
    def over(self) -> bool:
        """Whether every action of the game has been played."""
        return self.played == len(self.actions)

    def _arrival(self, version: int) -> float:
        while True:
            arrived_version, arrived = self.seen.get(timeout=60)
            if arrived_version == version:
                return arrived

    def move(self) -> float:
        """Play the next action: seconds from its submission to the spectator's copy of it."""
        action, side = self.actions[self.played], self.sides[self.played]
        started = time.perf_counter()
        request = mm.SubmitActionsRequest(
            game_id=self.id, expected_version=self.version, actions=[action]
        )
        reply = self.route.call(side, "SubmitActions", request, mm.SubmitActionsResponse())
        self.version = reply.game.version
        self.played += 1
        return self._arrival(self.version) - started

    def end(self) -> None:
        """Resign, and wait for the spectator's stream to end."""
        self.route.call("south", "Resign", mm.ResignRequest(game_id=self.id), mm.ResignResponse())
        self.watcher.join(60)


def repetition(
    routes: dict[str, Route], games: dict[str, Game], moves: int, fresh: Any
) -> dict[str, list[float]]:
    """`moves` moves of each route in turns (web, gRPC, web, ...): each one's seconds."""
    delays: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(moves):
        for kind in KINDS:
            if games[kind].over:
                games[kind].end()
                games[kind] = fresh(routes[kind])
            delays[kind].append(games[kind].move())
    return delays


def run(bench: Bench) -> None:
    """Measure both paths in turns, and the CPU of the web service and the matchmaker."""
    with tempfile.TemporaryDirectory() as folder, stack(Path(folder)) as (engine, mmp, web):
        actions, sides = legal_sequence(engine.address, PLIES)
        routes = {kind: Route(kind == "web", mmp.address, web.address) for kind in KINDS}

        def fresh(route: Route) -> Game:
            return Game(route, actions, sides)

        games = {kind: fresh(route) for kind, route in routes.items()}
        web_pids, mm_pids = process_tree(web.process.pid), process_tree(mmp.process.pid)
        p50: dict[str, list[float]] = {kind: [] for kind in KINDS}
        p99: dict[str, list[float]] = {kind: [] for kind in KINDS}
        web_cpu, mm_cpu = [], []
        repetition(routes, games, WARMUP_SAMPLES, fresh)
        for _ in range(REPEATS):
            before = cpu_seconds(web_pids), cpu_seconds(mm_pids)
            delays = repetition(routes, games, SAMPLES, fresh)
            web_cpu.append((cpu_seconds(web_pids) - before[0]) / SAMPLES * 1e3)
            mm_cpu.append((cpu_seconds(mm_pids) - before[1]) / (SAMPLES * len(KINDS)) * 1e3)
            for kind in KINDS:
                p50[kind].append(percentile(delays[kind], 0.5) * 1e3)
                p99[kind].append(percentile(delays[kind], 0.99) * 1e3)
        for game in games.values():
            game.end()
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
        for route in routes.values():
            route.close()


if __name__ == "__main__":
    run(Bench())
