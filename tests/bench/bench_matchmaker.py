"""Matchmaker benchmarks: submit-to-commit latency and throughput beside the no-op Echo of
the same stack, the same on a Redis Cluster beside a standalone Redis, watchers held by one
replica and the Redis connections they take, time to pair 10,000 queued players, Redis
memory per finished game.

`run(bench)` starts its own redis-server, engine and matchmaker processes on free loopback
ports, measures, and stops them. Run alone: `python -m tests.bench.bench_matchmaker
[--part cluster]...`.

- Throughput: scripted clients replay one engine-legal action sequence (chosen once, up
  front, from the engine's legal actions) in 1, 16 and 64 concurrent games, each action a
  SubmitActions by the side to act with the version it saw; the reference is Echo called
  by the same number of concurrent callers on the same server, in the same run.
- Cluster: SubmitActions at 16 concurrent games, rounds alternating between a matchmaker on
  a local 3-primary Redis Cluster and one on the standalone Redis (same engine, same
  clients, same run); the standalone figure is the reference, the ratio the median of the
  rounds' pairs (goal: >= 0.9x, docs/throughput.md). Beside it each matchmaker's CPU time
  per submission (its process tree, the same rounds), steadier than the rates on a busy
  machine.
- Watchers: 5,000 WatchGame streams (250 games x 20) held by one matchmaker process with
  `--redis-connections 16`, on each store: the streams held, the matchmaker's Redis
  connections on the busiest node meanwhile (CLIENT LIST), the time to deliver one update
  of every game to every watcher. Clients: this process, asyncio, 10 connections.
- Pairing: 10,000 tickets of one queue (ratings ~ N(1500, 200)) paired by the pairing
  script until none can be; the reference is pairing the same ratings in plain Python
  (sort, pair neighbours) in this process.
- Memory: MEMORY USAGE of every key of finished games (the hash with both states, the
  actions list, the update stream, the idempotency records) beside the size of the game's
  record text: what a finished game keeps for its life, and in the hour after its end.
- Record: where the matchmaker's CPU goes per SubmitActions (`profile_submit`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import redis

from matchmaker import keys
from matchmaker.engine import Engine
from matchmaker.players import Players
from matchmaker.queue import Queues, QueueSpec
from matchmaker.redis_client import connect
from matchmaker.scripts import Scripts
from matchmaker.seating import Seating, TimeControl
from matchmaker.settings import Settings
from matchmaker.store import Store
from tests.bench.harness import REPEATS, Bench, Figure, cpu_seconds, process_tree
from tests.bench.profile_submit import profile_submits
from tests.matchmaker.crowd import hold
from tests.servers import (
    ServiceProcess,
    start_engine,
    start_redis,
    start_redis_cluster,
    start_service,
)
from wargame.v1 import (
    engine_pb2,
    engine_pb2_grpc,
    game_pb2,
    matchmaker_pb2_grpc,
)
from wargame.v1 import (
    matchmaker_pb2 as mm,
)

CONCURRENCY = (1, 16, 64)
ROUND_SECONDS = 2.0  # each timed round plays for this long (or until the games end)
SEQUENCE_PLIES = 60
QUEUE_PLAYERS = 10_000
WATCHED_GAMES = 250
WATCHERS_PER_GAME = 20


@dataclass
class Stack:
    """The processes under test."""

    redis_url: str
    engine: str
    matchmaker: str
    cluster_url: str
    cluster_matchmaker: str  # a matchmaker on the Redis Cluster
    matchmaker_pid: int = 0  # the process of `matchmaker`, for its CPU time (0: unknown)
    cluster_matchmaker_pid: int = 0  # the process of `cluster_matchmaker` (0: unknown)


# This file's matchmakers: no metrics, a pool for many callers, every watcher from loopback.
SERVING = ("--metrics-listen", "off", "--redis-connections", "16",
           "--max-watchers-per-address", "10000")  # fmt: skip


def matchmaker(
    directory: Path,
    name: str,
    redis_url: str,
    engine: str,
    *flags: str,
    env: dict[str, str] | None = None,
) -> ServiceProcess:
    """A matchmaker process for the benchmarks (no rate limit, quiet logs), with `flags`."""
    return start_service(
        "matchmaker.main",
        ["--redis-url", redis_url, "--engine", engine, "--rate-limit", "0",
         "--register-peer-rate", "0", "--register-rate", "0", "--log-level", "warning", *flags],
        log_path=directory / f"{name}.log",
        service="wargame.v1.Matchmaker",
        env=env,
    )  # fmt: skip


@contextmanager
def stack(directory: Path) -> Iterator[Stack]:
    """redis-server, a 3-primary Redis Cluster, one engine process, a matchmaker process on
    each store, all on free ports."""
    redis_server = start_redis(directory / "redis")
    cluster = start_redis_cluster(directory / "cluster", primaries=3)
    key_file = directory / "seal.key"
    key_file.write_text(bytes(range(32)).hex())
    processes: list[ServiceProcess] = []
    try:
        engine = start_engine(directory, "--seal-key-file", str(key_file), "--log-level", "warning")
        processes.append(engine)
        standalone = matchmaker(directory, "matchmaker", redis_server.url, engine.address, *SERVING)
        processes.append(standalone)
        clustered = matchmaker(
            directory, "matchmaker-cluster", cluster.url, engine.address, *SERVING
        )
        processes.append(clustered)
        yield Stack(
            redis_server.url,
            engine.address,
            standalone.address,
            cluster.url,
            clustered.address,
            standalone.process.pid,
            clustered.process.pid,
        )
    finally:
        for process in reversed(processes):
            process.stop()
        redis_server.stop()
        cluster.stop()


def legal_sequence(engine: str, plies: int) -> tuple[list[game_pb2.Action], list[str]]:
    """An engine-legal Game of War line of `plies` actions (the sides that play them)."""
    rng = random.Random(2016)
    with grpc.insecure_channel(engine) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        actions: list[game_pb2.Action] = []
        sides: list[str] = []
        while len(actions) < plies:
            legal = stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions
            candidates = []
            for choice in rng.sample(list(legal), len(legal)):
                after = stub.ApplyActions(
                    engine_pb2.ApplyActionsRequest(state=state, actions=[choice.action])
                )
                if not after.state.HasField("outcome"):
                    candidates.append((choice, after.state))
                    break
            if not candidates:
                break
            choice, next_state = candidates[0]
            sides.append(state.to_act[0])
            actions.append(choice.action)
            state = next_state
    return actions, sides


class Player:
    """A registered player's token, as metadata."""

    def __init__(self, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)


async def register(stub: Any, name: str) -> Player:
    reply = await stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=name))
    return Player(reply.token)


async def submit(
    stub: Any, game_id: str, version: int, action: game_pb2.Action, metadata: Any
) -> mm.SubmitActionsResponse:
    """One action sent as the player of `metadata` at the game's `version`, under a fresh
    idempotency key."""
    request = mm.SubmitActionsRequest(
        game_id=game_id,
        expected_version=version,
        idempotency_key=uuid.uuid4().hex,
        actions=[action],
    )
    reply: mm.SubmitActionsResponse = await stub.SubmitActions(request, metadata=metadata)
    return reply


async def new_games(stub: Any, count: int) -> list[tuple[str, dict[str, Player]]]:
    """`count` running Game of War games, each between two fresh players."""

    async def one(index: int) -> tuple[str, dict[str, Player]]:
        south, north = await register(stub, f"s{index}"), await register(stub, f"n{index}")
        created = await stub.CreateGame(
            mm.CreateGameRequest(game="war", side="south"), metadata=south.metadata
        )
        await stub.JoinGame(mm.JoinGameRequest(game_id=created.game.id), metadata=north.metadata)
        return created.game.id, {"south": south, "north": north}

    return list(await asyncio.gather(*(one(i) for i in range(count))))


async def play_round(
    address: str,
    games: int,
    actions: list[game_pb2.Action],
    sides: list[str],
    *,
    seconds: float,
    finish: bool = False,
    made_hook: Callable[[], Awaitable[None]] | None = None,
) -> tuple[int, float, list[float], list[str]]:
    """Play `games` games concurrently for up to `seconds`: (actions committed, elapsed,
    latencies in ms, game ids). `made_hook` is awaited once the games are made, before
    the first action."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        made = await new_games(stub, games)
        if made_hook is not None:
            await made_hook()
        latencies: list[float] = []
        committed = 0
        started = time.perf_counter()
        stop_at = started + seconds

        async def play(game_id: str, players: dict[str, Player]) -> None:
            nonlocal committed
            version = 2
            for action, side in zip(actions, sides, strict=True):
                if not finish and time.perf_counter() > stop_at:
                    return
                sent = time.perf_counter()
                reply = await submit(stub, game_id, version, action, players[side].metadata)
                latencies.append((time.perf_counter() - sent) * 1000)
                version = reply.game.version
                committed += 1
            if finish:
                await stub.Resign(
                    mm.ResignRequest(game_id=game_id), metadata=players[sides[-1]].metadata
                )

        await asyncio.gather(*(play(game_id, players) for game_id, players in made))
        elapsed = time.perf_counter() - started
    return committed, elapsed, latencies, [game_id for game_id, _ in made]


async def echo_round(address: str, callers: int, seconds: float) -> float:
    """Echo calls per second by `callers` concurrent callers."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        await stub.Echo(mm.EchoRequest(payload=b"x"))
        calls = 0
        started = time.perf_counter()
        stop_at = started + seconds

        async def call() -> None:
            nonlocal calls
            while time.perf_counter() < stop_at:
                await stub.Echo(mm.EchoRequest(payload=b"x" * 64))
                calls += 1

        await asyncio.gather(*(call() for _ in range(callers)))
        return calls / (time.perf_counter() - started)


def figure(name: str, unit: str, samples: list[float]) -> Figure:
    """A harness figure from samples taken here."""
    return Figure(name, unit, statistics.median(samples), min(samples), max(samples), samples)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def bench_submit(bench: Bench, setup: Stack) -> list[str]:
    """Submit throughput and latency at each concurrency beside Echo, and at 64 games beside
    16, every round in turns (Echo and SubmitActions at 1, 16, 64, again, ...), with the
    matchmaker's CPU time per call; returns finished game ids."""
    actions, sides = legal_sequence(setup.engine, SEQUENCE_PLIES)
    tree = process_tree(setup.matchmaker_pid) if setup.matchmaker_pid else []

    def echo(games: int, seconds: float) -> tuple[float, float]:
        """Echo calls per second, and the matchmaker's CPU per call (us)."""
        before = cpu_seconds(tree)
        calls_per_s = asyncio.run(echo_round(setup.matchmaker, games, seconds))
        return calls_per_s, (cpu_seconds(tree) - before) / (calls_per_s * seconds) * 1e6

    def submit(games: int, seconds: float) -> tuple[float, float, float, float]:
        """Actions committed per second, p50, p99 (ms), the matchmaker's CPU per action (us)."""
        at: list[float] = []

        async def started() -> None:
            at.append(cpu_seconds(tree))

        committed, elapsed, latencies, _ = asyncio.run(
            play_round(setup.matchmaker, games, actions, sides, seconds=seconds,
                       made_hook=started)
        )  # fmt: skip
        cpu = (cpu_seconds(tree) - at[0]) / committed * 1e6
        return committed / elapsed, percentile(latencies, 0.5), percentile(latencies, 0.99), cpu

    for games in CONCURRENCY:  # warm-up
        echo(games, 0.5)
        submit(games, 0.5)
    echoes: dict[int, list[tuple[float, float]]] = {games: [] for games in CONCURRENCY}
    rounds: dict[int, list[tuple[float, float, float, float]]] = {g: [] for g in CONCURRENCY}
    for _ in range(REPEATS):
        for games in CONCURRENCY:
            echoes[games].append(echo(games, ROUND_SECONDS))
            rounds[games].append(submit(games, ROUND_SECONDS))
    made: dict[int, tuple[Figure, Figure]] = {}
    for games in CONCURRENCY:
        reference = bench.report(
            figure(f"matchmaker Echo, {games} concurrent callers", "calls/s",
                   [rate for rate, _ in echoes[games]])
        )  # fmt: skip
        echo_cpu = bench.report(
            figure(f"matchmaker Echo, {games} concurrent callers, matchmaker CPU",
                   "us CPU/call", [cpu for _, cpu in echoes[games]]),
            higher_is_better=False,
        )  # fmt: skip
        rates, p50s, p99s, cpus = (list(column) for column in zip(*rounds[games], strict=True))
        goal = ">= 0.3x Echo" if games == 16 else ""
        rate = figure(f"matchmaker SubmitActions, {games} concurrent games", "actions/s", rates)
        bench.report(rate, reference, goal=goal, paired=True)
        bench.report(figure(f"matchmaker submit-to-commit p50, {games} games", "ms", p50s))
        bench.report(figure(f"matchmaker submit-to-commit p99, {games} games", "ms", p99s))
        tails = [p99 / p50 for p50, p99 in zip(p50s, p99s, strict=True) if p50]
        bench.report(
            figure(f"matchmaker submit-to-commit p99 / p50, {games} games", "x", tails),
            goal="<= 4" if games == 64 else "",
        )
        cpu = figure(
            f"matchmaker SubmitActions, {games} concurrent games, matchmaker CPU",
            "us CPU/action",
            cpus,
        )
        bench.report(cpu, echo_cpu, higher_is_better=False, paired=True)
        made[games] = rate, cpu
    if 16 in made and 64 in made:  # the speed goal: throughput never falls as games grow
        for at_64, at_16, goal, higher in (
            (made[64][0], made[16][0], ">= 1.0x 16 games", True),
            (made[64][1], made[16][1], "", False),
        ):
            copy = dataclasses.replace(at_64, name=f"{at_64.name} (beside 16 games)")
            bench.report(copy, at_16, goal=goal, higher_is_better=higher, paired=True)
    _, _, _, finished = asyncio.run(
        play_round(setup.matchmaker, 8, actions, sides, seconds=0, finish=True)
    )
    return finished


def bench_pairing(bench: Bench, setup: Stack) -> None:
    """Time to pair 10,000 queued players (the pairing scripts), beside plain Python."""

    spec = QueueSpec("war", {}, "", TimeControl(), True)
    rng = random.Random(10)
    ratings = [rng.gauss(1500, 200) for _ in range(QUEUE_PLAYERS)]

    async def fill(queues: Queues) -> None:
        async def join(index: int, rating: float) -> None:
            seat = f'{{"p":"p{index}","n":"p{index}","r":{rating:.3f},"rt":""}}'
            await queues.scripts.run(
                "queue_join",
                keys.queue_keys(spec.queue_id),
                [f"t{index}", rating, seat, spec.config(), 600_000, 3600],
            )

        for start in range(0, len(ratings), 1000):
            chunk = list(enumerate(ratings))[start : start + 1000]
            await asyncio.gather(*(join(index, rating) for index, rating in chunk))

    async def once() -> float:

        settings = Settings(redis_url=setup.redis_url)
        client = await connect(setup.redis_url, socket_timeout=10.0, connections=64)
        await client.flushall()
        scripts = Scripts(client)
        await scripts.load()
        engine = Engine(setup.engine, settings)
        players = Players(client, scripts, settings)
        seating = Seating(Store(client, scripts, settings), engine, players, settings)
        queues = Queues(
            redis=client,
            scripts=scripts,
            engine=engine,
            players=players,
            seating=seating,
            settings=settings,
        )
        await fill(queues)
        started = time.perf_counter()
        matches = await queues.pair(spec.queue_id)
        seconds = time.perf_counter() - started
        left = await client.zcard(keys.queue_joined(spec.queue_id))
        assert len(matches) * 2 + left == QUEUE_PLAYERS and left < 10, (len(matches), left)
        await client.aclose()
        await engine.close()
        return seconds

    def plain_python() -> float:
        started = time.perf_counter()
        ordered = sorted(range(QUEUE_PLAYERS), key=ratings.__getitem__)
        pairs = [
            (a, b)
            for a, b in zip(ordered[::2], ordered[1::2], strict=False)
            if abs(ratings[a] - ratings[b]) <= 100
        ]
        assert pairs
        return time.perf_counter() - started

    reference = bench.sample(
        "pair 10,000 ratings in plain Python (sort, neighbours)", plain_python, "s"
    )
    bench.report(reference)
    measured = bench.sample(
        f"pair {QUEUE_PLAYERS:,} queued players (queue_pair.lua)",
        lambda: asyncio.run(once()),
        "s",
        repeats=3,
    )
    bench.report(measured, reference, goal="< 2 s", higher_is_better=False)


def bench_memory(bench: Bench, setup: Stack, game_ids: list[str]) -> None:
    """Redis memory of every key of each finished game (its hash tag), beside its record
    text's size: what it keeps for its life (the keys that outlive the hour after the end:
    hash and actions, the record), and in that first hour (with its last updates and the
    idempotency records of its submissions)."""
    client = redis.Redis.from_url(setup.redis_url)
    kept: list[float] = []
    first_hour: list[float] = []
    records: list[float] = []
    hour = Settings().idempotency_ttl
    with grpc.insecure_channel(setup.matchmaker) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        for game_id in game_ids:
            status = client.hget(keys.game(game_id), "status")
            assert status == b"finished", status
            names = list(client.scan_iter(match=f"{keys.PREFIX}:game:{{{game_id}}}*", count=1000))
            assert {key.encode() for key in keys.game_keys(game_id)[:2]} <= set(names)
            sizes = {name: client.memory_usage(name, samples=0) or 0 for name in names}
            kept.append(sum(size for name, size in sizes.items() if client.ttl(name) > hour) / 1024)
            first_hour.append(sum(sizes.values()) / 1024)
            records.append(
                len(stub.GetRecord(mm.GetRecordRequest(game_id=game_id)).record.encode()) / 1024
            )
    client.close()
    reference = bench.report(
        figure(f"record text of a finished {SEQUENCE_PLIES + 1}-action game", "KB", records)
    )
    bench.report(
        figure("Redis memory per finished game, kept for its life (hash, actions)", "KB", kept),
        reference,
        goal="<= 4 KB",
        higher_is_better=False,
    )
    bench.report(
        figure(
            "Redis memory per finished game in the hour after its end (every key of its hash "
            "tag: also its last updates and its submissions' idempotency records)",
            "KB",
            first_hour,
        ),
        reference,
        higher_is_better=False,
    )


def bench_record(bench: Bench) -> None:
    """Where the matchmaker's CPU goes per SubmitActions (`profile_submit`): the servicer in
    this process, 16 games played by a client process, one engine worker."""
    breakdown = profile_submits(games=16, seconds=ROUND_SECONDS, top=15)
    for line in breakdown.lines():
        print(f"  {line}", flush=True)
    bench.report(
        figure("matchmaker CPU per SubmitActions (in-process servicer, 16 games)", "us",
               [breakdown.cpu_us])
    )  # fmt: skip
    for name, micros in sorted(breakdown.parts.items(), key=lambda item: -item[1]):
        bench.report(figure(f"  of which {name}", "us", [micros]))


def bench_cluster(bench: Bench, setup: Stack) -> None:
    """SubmitActions at 16 games on a Redis Cluster beside a standalone Redis, rounds
    alternating between the two, with each matchmaker's CPU time per submission."""
    actions, sides = legal_sequence(setup.engine, SEQUENCE_PLIES)
    games = 16
    rates: dict[str, list[float]] = {setup.matchmaker: [], setup.cluster_matchmaker: []}
    cpu: dict[str, list[float]] = {setup.matchmaker: [], setup.cluster_matchmaker: []}
    pids = {
        setup.matchmaker: setup.matchmaker_pid,
        setup.cluster_matchmaker: setup.cluster_matchmaker_pid,
    }
    for address in rates:  # warm-up
        asyncio.run(play_round(address, games, actions, sides, seconds=0.5))
    for _ in range(REPEATS):
        for address, samples in rates.items():
            tree = process_tree(pids[address]) if pids[address] else []
            before = cpu_seconds(tree)
            committed, elapsed, _, _ = asyncio.run(
                play_round(address, games, actions, sides, seconds=ROUND_SECONDS)
            )
            samples.append(committed / elapsed)
            if tree:
                cpu[address].append((cpu_seconds(tree) - before) / max(1, committed) * 1e6)
    reference = bench.report(
        figure(
            f"matchmaker SubmitActions, {games} games, standalone Redis",
            "actions/s",
            rates[setup.matchmaker],
        )
    )
    bench.report(
        figure(
            f"matchmaker SubmitActions, {games} games, 3-primary Redis Cluster",
            "actions/s",
            rates[setup.cluster_matchmaker],
        ),
        reference,
        goal=">= 0.9x standalone",
        paired=True,
    )
    if cpu[setup.matchmaker] and cpu[setup.cluster_matchmaker]:
        reference = bench.report(
            figure("matchmaker CPU per SubmitActions, standalone Redis", "us",
                   cpu[setup.matchmaker])
        )  # fmt: skip
        bench.report(
            figure("matchmaker CPU per SubmitActions, 3-primary Redis Cluster", "us",
                   cpu[setup.cluster_matchmaker]),
            reference,
            higher_is_better=False,  # the ratio: standalone's CPU / the cluster's
            paired=True,
        )  # fmt: skip


def bench_watchers(bench: Bench, setup: Stack) -> None:
    """Watchers held by one replica, its Redis connections meanwhile, and the time to hand
    one update of every game to all of them, on each store (one run each: a capacity)."""
    for store, address, url in (
        ("standalone Redis", setup.matchmaker, setup.redis_url),
        ("Redis Cluster", setup.cluster_matchmaker, setup.cluster_url),
    ):
        crowd = asyncio.run(hold(address, url, WATCHED_GAMES, WATCHERS_PER_GAME))
        bench.report(
            figure(
                f"watchers held by one matchmaker, {store} ({crowd.retries} reopened after "
                "UNAVAILABLE)",
                "streams",
                [crowd.watchers],
            ),
            goal=">= 5,000",
        )
        bench.report(  # a count, not a timing: bounded by configuration, whatever the load
            figure(
                f"Redis connections of that matchmaker while it holds them (busiest node), {store}",
                "connections",
                [crowd.connections],
            ),
            goal="<= 18 (16 for commands, 1 listener, 1 for the slot map)",
        )
        bench.report(
            figure(
                f"one update of each of {WATCHED_GAMES} games to all {crowd.watchers} "
                f"watchers, {store}",
                "s",
                [crowd.delivered_s],
            )
        )


PARTS = ("submit", "cluster", "watchers", "memory", "pairing", "record")


def run(bench: Bench, parts: tuple[str, ...] = PARTS) -> None:
    """The matchmaker figures of `parts` (default: every one), on a stack of their own."""
    if set(parts) - {"record"}:
        with (
            tempfile.TemporaryDirectory(prefix="bench-matchmaker-") as folder,
            stack(Path(folder)) as setup,
        ):
            # the memory figure is measured on the games the submission rounds finished
            finished = bench_submit(bench, setup) if {"submit", "memory"} & set(parts) else []
            if "cluster" in parts:
                bench_cluster(bench, setup)
            if "watchers" in parts:
                bench_watchers(bench, setup)
            if "memory" in parts:
                bench_memory(bench, setup, finished)
            if "pairing" in parts:
                bench_pairing(bench, setup)
    if "record" in parts:
        bench_record(bench)


def main() -> int:
    """Run the matchmaker figures alone (`--part` picks some) and save them."""
    parser = argparse.ArgumentParser(description=(main.__doc__ or "").splitlines()[0])
    parser.add_argument("--part", action="append", choices=PARTS, help="default: every part")
    args = parser.parse_args()
    result = Bench()
    run(result, tuple(args.part or PARTS))
    result.save(Path("run") / "bench-matchmaker.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
