"""Capacity: what each part of the service costs per unit of load, as CPU time and memory,
and the cores, memory and Redis shards a load model needs (docs/capacity.md).

`run(bench)` starts its own redis-server (standalone), engine (one worker) and matchmaker
processes on free loopback ports and measures, from /proc, the CPU time each process used
(user + system) while this process drives it through gRPC (asyncio, one channel; the
driver's own CPU is not counted, so a busy machine changes the wall-clock rates but
hardly the CPU per unit):

- a move: SubmitActions in 16 concurrent Game of War games (a legal line chosen up front,
  each game on a clock of 10 minutes + 5 s), no watcher; per committed move: matchmaker,
  engine (ApplyActions) and Redis CPU;
- a watcher's update: the same rounds with WATCHERS_PER_GAME WatchGame streams on every
  game, alternating with the rounds without (BENCHMARKS.md); the CPU beyond the paired
  round's per-move cost, per update delivered to a watcher;
- a bot move: BOT_GAMES games against the bot at the matchmaker's default level and
  thinking time (5, 1 s), a person's move answered by the bot's; per bot move, the
  matchmaker's CPU (the person's move too, and the updates on the person's own stream);
  and the bot's search alone (SuggestAction, level 5, 1 s) called on the engine: its wall
  time (it searches until its budget is spent, so a core of its own is busy all along)
  and the share of a core it got here;
- memory: Redis's `used_memory` per registered player, per running game (after the
  rounds' moves) and per finished game (in the hour after its end, while its update
  stream and idempotency records are kept), the matchmaker's resident memory per open
  watcher, and the resident memory of an idle matchmaker and of an engine worker.

Each CPU figure is the median of REPEATS rounds with min..max. `capacity_table` turns the
figures and the load model (MODEL) into the table of docs/capacity.md, printed after them.
Run alone: `python -m tests.bench.bench_capacity`.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import redis

from matchmaker import keys
from matchmaker.settings import Settings
from tests.bench.bench_matchmaker import (
    SERVING,
    Player,
    legal_sequence,
    matchmaker,
    register,
    submit,
)
from tests.bench.harness import REPEATS, Bench, Figure, cpu_seconds, process_tree, rss_mb
from tests.conftest import TEST_SEAL_KEY, engine_in_process
from tests.servers import RedisServer, ServiceProcess, start_engine, start_redis
from wargame.runtime.logs import configure_logging
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

GAMES = 16  # concurrent games of a move round
ROUND_SECONDS = 2.0
PLIES = 60  # the legal line the games play (each game stops at its end)
WATCHERS_PER_GAME = 3
BOT_GAMES = 4
BOT_ROUND_SECONDS = 4.0
PLAYERS = 2000  # registered to measure a player's memory
WATCHERS_FOR_MEMORY = 2000
CLOCK = mm.TimeControl()
CLOCK.base.FromSeconds(600)
CLOCK.increment.FromSeconds(5)


@dataclass(frozen=True)
class Model:
    """The load model of docs/capacity.md (assumptions, not measurements)."""

    think_s: float = 10.0  # a move every think_s in each game (the sides alternate)
    watchers_per_game: float = 3.0  # both players' own streams and one spectator
    bot_share: float = 0.2  # games against the bot (its moves: half of those games')
    plies_per_game: int = 80  # a game's length, for the finished games a day
    target_cpu: float = 0.7  # the autoscalers' target: cores run at 70 % at most
    redis_core_share: float = 0.5  # of its one core a Redis primary may use
    # maxmemory of a Redis node (75 % of its pod's limit): overlays/production's 1 Gi pods,
    # and pods of 16 Gi
    redis_maxmemory_gb: tuple[float, float] = (0.75, 12.0)
    min_shards: int = 3  # a Redis Cluster's smallest
    registered_players: int = 1_000_000


MODEL = Model()
LOADS = (1_000, 10_000, 100_000)  # concurrent games of the table


def cpu_of(pid: int) -> float:
    """User + system CPU seconds so far of a process and its descendants (the engine's
    search processes are its grandchildren, forked by its pool's spawner), with their children
    that ended."""
    return cpu_seconds(process_tree(pid), reaped=True)


def resident_bytes(pid: int) -> int:
    """The resident memory of a process and its descendants (pages they share counted
    in each: an upper bound)."""
    return int(sum(rss_mb(member) for member in process_tree(pid)) * 1024 * 1024)


@dataclass
class Stack:
    """The processes under test, by part."""

    redis: RedisServer
    engine: ServiceProcess
    matchmaker: ServiceProcess

    @property
    def pids(self) -> dict[str, int]:
        """The process of each part."""
        return {
            "matchmaker": self.matchmaker.process.pid,
            "engine": self.engine.process.pid,
            "redis": self.redis.process.pid,
        }

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far, by part."""
        return {part: cpu_of(pid) for part, pid in self.pids.items()}

    def used_memory(self) -> int:
        """Redis's used_memory."""
        client = redis.Redis.from_url(self.redis.url)
        try:
            return int(client.info("memory")["used_memory"])
        finally:
            client.close()

    def game_memory(self, game_id: str) -> tuple[int, int]:
        """The MEMORY USAGE of every key of a game (its hash tag): in all, and of the keys
        that outlive the hour after its end (hash, actions: its record)."""
        client = redis.Redis.from_url(self.redis.url)
        hour = Settings().idempotency_ttl
        try:
            names = client.scan_iter(match=f"{keys.PREFIX}:game:{{{game_id}}}*", count=1000)
            sizes = {name: int(client.memory_usage(name, samples=0) or 0) for name in names}
            kept = sum(size for name, size in sizes.items() if client.ttl(name) > hour)
            return sum(sizes.values()), kept
        finally:
            client.close()


@contextmanager
def stack(directory: Path) -> Iterator[Stack]:
    """redis-server, one engine worker and a matchmaker, on free loopback ports."""
    store = start_redis(directory / "redis")
    key_file = directory / "seal.key"
    key_file.write_text(TEST_SEAL_KEY.hex())
    processes: list[ServiceProcess] = []
    try:
        engine = start_engine(directory, "--seal-key-file", str(key_file), "--log-level", "warning")
        processes.append(engine)
        replica = matchmaker(directory, "matchmaker", store.url, engine.address, *SERVING)
        processes.append(replica)
        yield Stack(store, engine, replica)
    finally:
        for process in reversed(processes):
            process.stop()
        store.stop()


@dataclass
class Used:
    """What a round did, how long it took, and the CPU seconds each part used for it."""

    moves: int
    deliveries: int
    seconds: float
    cpu: dict[str, float]

    def per_unit(self, part: str, units: int, idle: dict[str, float]) -> float:
        """CPU ms of `part` per unit of work, less what it burns idle meanwhile."""
        return (self.cpu[part] - idle[part] * self.seconds) / units * 1000


def measured(
    setup: Stack, before: dict[str, float], started: float
) -> tuple[float, dict[str, float]]:
    """The seconds since `started` and the CPU seconds each part used since `before`."""
    after = setup.cpu()
    return time.perf_counter() - started, {part: after[part] - before[part] for part in after}


def idle_cores(setup: Stack, seconds: float = 3.0) -> dict[str, float]:
    """The CPU each part burns with nothing to do (sweeps, timers), in cores."""
    before, started = setup.cpu(), time.perf_counter()
    time.sleep(seconds)
    elapsed, used = measured(setup, before, started)
    return {part: value / elapsed for part, value in used.items()}


async def _games(stub: Any, count: int, **request: Any) -> list[tuple[str, dict[str, Player]]]:
    """`count` running Game of War games on a clock, between two fresh players (or, with
    opponent=BOT, a player and the bot)."""

    async def one(index: int) -> tuple[str, dict[str, Player]]:
        south = await register(stub, f"s{index}")
        created = await stub.CreateGame(
            mm.CreateGameRequest(game="war", side="south", time_control=CLOCK, **request),
            metadata=south.metadata,
        )
        seats = {"south": south}
        if "opponent" not in request:
            seats["north"] = await register(stub, f"n{index}")
            await stub.JoinGame(
                mm.JoinGameRequest(game_id=created.game.id), metadata=seats["north"].metadata
            )
        return created.game.id, seats

    return list(await asyncio.gather(*(one(i) for i in range(count))))


class Watchers:
    """WatchGame streams on some games, counting the updates they are handed."""

    def __init__(self, stub: Any, game_ids: list[str], per_game: int) -> None:
        self.received = 0
        self.newest: dict[str, int] = {}
        self.tasks = [
            asyncio.ensure_future(self._watch(stub, game_id))
            for game_id in game_ids
            for _ in range(per_game)
        ]
        self.count = len(self.tasks)

    async def _watch(self, stub: Any, game_id: str) -> None:
        try:
            async for update in stub.WatchGame(mm.WatchGameRequest(game_id=game_id)):
                self.received += 1
                self.newest[game_id] = max(self.newest.get(game_id, 0), update.version)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                raise

    async def until(self, received: int) -> None:
        """Wait until the streams have been handed `received` updates in all."""
        while self.received < received:
            failed = [t for t in self.tasks if t.done() and t.exception()]
            if failed:
                raise RuntimeError(f"a watcher failed: {failed[0].exception()}")
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        """End every stream."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def move_round(
    setup: Stack, actions: list[game_pb2.Action], sides: list[str], watchers: int
) -> Used:
    """GAMES games play the legal line for ROUND_SECONDS, each with `watchers` streams."""
    async with grpc.aio.insecure_channel(setup.matchmaker.address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        made = await _games(stub, GAMES)
        crowd = Watchers(stub, [game_id for game_id, _ in made], watchers)
        try:
            await crowd.until(crowd.count)  # each stream's first message: the game as it is
            before, started, moves = setup.cpu(), time.perf_counter(), 0
            stop_at = time.perf_counter() + ROUND_SECONDS

            async def play(game_id: str, players: dict[str, Player]) -> None:
                nonlocal moves
                version = 2
                for action, side in zip(actions, sides, strict=True):
                    if time.perf_counter() > stop_at:
                        return
                    reply = await submit(stub, game_id, version, action, players[side].metadata)
                    version = reply.game.version
                    moves += 1

            await asyncio.gather(*(play(game_id, players) for game_id, players in made))
            await crowd.until(crowd.count + moves * watchers)  # every update handed over
            elapsed, used = measured(setup, before, started)
        finally:
            await crowd.close()
    return Used(moves, moves * watchers, elapsed, used)


async def bot_round(setup: Stack, rules_address: str) -> Used:
    """BOT_GAMES games against the bot for BOT_ROUND_SECONDS: the person moves (a random
    legal action, chosen by an engine served in this process at `rules_address`, so that
    its cost stays out of the measured engine's), the bot answers, and again."""
    async with (
        grpc.aio.insecure_channel(setup.matchmaker.address) as channel,
        grpc.aio.insecure_channel(rules_address) as rules_channel,
    ):
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        rules = engine_pb2_grpc.RulesEngineStub(rules_channel)
        made = await _games(stub, BOT_GAMES, opponent=mm.SEAT_KIND_BOT)
        own = Watchers(stub, [game_id for game_id, _ in made], 1)  # the person's own stream
        try:
            await own.until(own.count)
            before, started, bot_moves = setup.cpu(), time.perf_counter(), 0
            stop_at = time.perf_counter() + BOT_ROUND_SECONDS
            rng = random.Random(1)

            async def play(game_id: str, players: dict[str, Player]) -> None:
                nonlocal bot_moves
                person = players["south"]
                game = (await stub.GetGame(mm.GetGameRequest(game_id=game_id))).game
                while time.perf_counter() < stop_at and game.status == mm.GAME_STATUS_RUNNING:
                    legal = await rules.ListLegalActions(
                        engine_pb2.ListLegalActionsRequest(state=game.state)
                    )
                    reply = await submit(
                        stub,
                        game_id,
                        game.version,
                        rng.choice(list(legal.actions)).action,
                        person.metadata,
                    )
                    moved = reply.game.version
                    while own.newest.get(game_id, 0) <= moved:  # the bot's answer
                        await asyncio.sleep(0.005)
                    bot_moves += 1
                    game = (await stub.GetGame(mm.GetGameRequest(game_id=game_id))).game

            await asyncio.gather(*(play(game_id, players) for game_id, players in made))
            elapsed, used = measured(setup, before, started)
        finally:
            await own.close()
    return Used(bot_moves, 0, elapsed, used)


def _figure(name: str, unit: str, samples: list[float]) -> Figure:
    return Figure(name, unit, statistics.median(samples), min(samples), max(samples), samples)


def bench_cpu(
    bench: Bench, setup: Stack, rules_address: str, runner: asyncio.Runner
) -> dict[str, Figure]:
    """The CPU figures: per move, per watcher's update, per bot move (the rounds on one
    event loop: gRPC's asyncio channels are bound to the loop they were first used on)."""
    actions, sides = legal_sequence(setup.engine.address, PLIES)
    runner.run(move_round(setup, actions, sides, 0))  # warm-up
    idle = idle_cores(setup)
    per_move: dict[str, list[float]] = {"matchmaker": [], "engine": [], "redis": []}
    per_delivery: dict[str, list[float]] = {"matchmaker": [], "redis": []}
    for _ in range(REPEATS):  # alternating: without watchers, then with
        alone = runner.run(move_round(setup, actions, sides, 0))
        watched = runner.run(move_round(setup, actions, sides, WATCHERS_PER_GAME))
        for part, samples in per_move.items():
            samples.append(alone.per_unit(part, alone.moves, idle))
        for part, samples in per_delivery.items():
            moves_ms = alone.per_unit(part, alone.moves, idle) * watched.moves
            samples.append(
                watched.per_unit(part, watched.deliveries, idle) - moves_ms / watched.deliveries
            )
    per_bot: dict[str, list[float]] = {"matchmaker": []}
    for _ in range(REPEATS):
        used = runner.run(bot_round(setup, rules_address))
        for part, samples in per_bot.items():
            samples.append(used.per_unit(part, used.moves, idle))
    figures = {
        f"{part}/idle": _figure(f"capacity: {part} CPU when idle", "cores", [cores])
        for part, cores in idle.items()
    }
    for part, samples in per_move.items():
        figures[f"{part}/move"] = _figure(f"capacity: {part} CPU per move", "ms", samples)
    for part, samples in per_delivery.items():
        figures[f"{part}/delivery"] = _figure(
            f"capacity: {part} CPU per update handed to a watcher", "ms", samples
        )
    figures["matchmaker/bot"] = _figure(
        "capacity: matchmaker CPU per bot move (with the person's move and stream)",
        "ms",
        per_bot["matchmaker"],
    )
    for figure in figures.values():
        bench.report(figure)
    return figures


def bench_suggest(bench: Bench, setup: Stack) -> dict[str, Figure]:
    """The bot's search (SuggestAction at level 5 with the default 1 s budget) on positions
    of the legal line: its wall time, and the share of it the engine process tree spent on
    the CPU. The search runs until its budget is spent, so on a core of its own it burns
    that core for the whole budget; on this shared machine it gets a share of one."""
    actions, _ = legal_sequence(setup.engine.address, PLIES)
    walls: list[float] = []
    shares: list[float] = []
    pid = setup.engine.process.pid
    with grpc.insecure_channel(setup.engine.address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        for index, action in enumerate(actions):
            if index % 10 == 5 and len(walls) <= REPEATS:  # a warm-up, then REPEATS
                request = engine_pb2.SuggestActionRequest(
                    state=state, side=state.to_act[0], level=5, seed=index
                )
                request.time_budget.FromSeconds(1)
                cpu, started = cpu_of(pid), time.perf_counter()
                stub.SuggestAction(request, timeout=60)
                wall = time.perf_counter() - started
                walls.append(wall)
                shares.append((cpu_of(pid) - cpu) / wall)
            state = stub.ApplyActions(
                engine_pb2.ApplyActionsRequest(state=state, actions=[action])
            ).state
    figures = {
        "engine/suggest": _figure(
            "capacity: engine SuggestAction wall time (the bot, level 5, 1 s budget)",
            "s",
            walls[1:],
        ),
        "engine/suggest-share": _figure(
            "capacity: engine SuggestAction CPU share of its wall time (this machine)",
            "cores",
            shares[1:],
        ),
    }
    for figure in figures.values():
        bench.report(figure)
    return figures


def bench_memory(bench: Bench, setup: Stack, runner: asyncio.Runner) -> dict[str, Figure]:
    """Redis's memory per player, running game and finished game; the matchmaker's per
    watcher; the processes' resident memory."""

    async def players() -> None:
        async with grpc.aio.insecure_channel(setup.matchmaker.address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
            for start in range(0, PLAYERS, 100):
                await asyncio.gather(*(register(stub, f"p{i}") for i in range(start, start + 100)))

    before = setup.used_memory()
    runner.run(players())
    per_player = (setup.used_memory() - before) / PLAYERS

    actions, sides = legal_sequence(setup.engine.address, PLIES)

    async def games() -> tuple[float, float, float, float]:
        async with grpc.aio.insecure_channel(setup.matchmaker.address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
            made = await _games(stub, GAMES)
            for game_id, seats in made:
                version = 2
                for action, side in zip(actions, sides, strict=True):
                    reply = await submit(stub, game_id, version, action, seats[side].metadata)
                    version = reply.game.version
            running = [setup.game_memory(game_id)[0] for game_id, _ in made]
            for game_id, seats in made:
                await stub.Resign(
                    mm.ResignRequest(game_id=game_id), metadata=seats["south"].metadata
                )
            ended = [setup.game_memory(game_id) for game_id, _ in made]
            return (
                statistics.median(running),
                statistics.median(size for size, _ in ended),
                statistics.median(kept for _, kept in ended),
                float(len(actions)),
            )

    running, finished, kept, plies = runner.run(games())

    async def watchers() -> float:
        async with grpc.aio.insecure_channel(setup.matchmaker.address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
            made = await _games(stub, WATCHERS_FOR_MEMORY // 20)
            pid = setup.matchmaker.process.pid
            start = resident_bytes(pid)
            crowd = Watchers(stub, [game_id for game_id, _ in made], 20)
            try:
                await crowd.until(crowd.count)
                return (resident_bytes(pid) - start) / crowd.count
            finally:
                await crowd.close()

    per_watcher = runner.run(watchers())
    plies_text = f"{plies:.0f} plies"
    retention = f"{Settings().finished_game_ttl / 86_400:g} days"
    figures = {
        "redis/player": _figure("capacity: Redis memory per registered player", "B", [per_player]),
        "redis/running": _figure(
            f"capacity: Redis memory per running game ({plies_text}, on a clock)", "B", [running]
        ),
        "redis/finished": _figure(
            f"capacity: Redis memory per finished game ({plies_text}, its first hour)",
            "B",
            [finished],
        ),
        "redis/kept": _figure(
            f"capacity: Redis memory per finished game ({plies_text}, kept its {retention})",
            "B",
            [kept],
        ),
        "matchmaker/watcher": _figure(
            "capacity: matchmaker resident memory per open watcher", "B", [per_watcher]
        ),
        "matchmaker/rss": _figure(
            "capacity: matchmaker resident memory (after the rounds)",
            "MB",
            [resident_bytes(setup.matchmaker.process.pid) / 2**20],
        ),
        "engine/rss": _figure(
            "capacity: engine resident memory, with its search processes (after the rounds)",
            "MB",
            [resident_bytes(setup.engine.process.pid) / 2**20],
        ),
    }
    for figure in figures.values():
        bench.report(figure)
    return figures


@dataclass(frozen=True)
class Need:
    """What a load needs, part by part."""

    games: int
    moves_per_s: float
    bot_moves_per_s: float
    matchmaker_cores: float
    engine_cores: float
    redis_cores: float
    shards: tuple[int, int, int]  # primaries for its CPU; for its data, at each pod size
    redis_gb: float
    finished_kept: float  # finished games whose keys Redis holds
    matchmaker_gb: float
    engine_gb: float


def capacity(games: int, rates: dict[str, float], model: Model = MODEL) -> Need:
    """The cores, memory and Redis shards `games` concurrent games need under `model`, from
    the measured `rates` (the figures' medians: CPU ms per unit, bytes, MB)."""
    moves = games / model.think_s  # every move, people's and bots'
    bot_moves = moves * model.bot_share / 2  # half of a bot game's moves are the bot's
    person_moves = moves - 2 * bot_moves  # a bot move's figure holds the person's move too
    updates = moves * model.watchers_per_game
    ms = 1 / 1000
    matchmaker = (
        person_moves * rates["matchmaker/move"]
        + bot_moves * rates["matchmaker/bot"]
        + updates * rates["matchmaker/delivery"]
    ) * ms
    # A bot move: its search, on a core of its own for its whole budget, and its ApplyActions.
    engine = (moves * rates["engine/move"] + bot_moves * rates["engine/suggest"] * 1000) * ms
    redis_cpu = (moves * rates["redis/move"] + updates * rates["redis/delivery"]) * ms
    finished_per_day = games / (model.plies_per_game * model.think_s) * 86_400
    retention_days = Settings().finished_game_ttl / 86_400  # a finished game's keys live on
    data = (
        games * rates["redis/running"]
        + model.registered_players * rates["redis/player"]
        + finished_per_day * retention_days * rates["redis/kept"]
        + finished_per_day / 24 * (rates["redis/finished"] - rates["redis/kept"])  # first hour
    )

    def at_least(count: float) -> int:
        return max(model.min_shards, int(-(-count // 1)))

    small, large = (data / (size * 2**30) for size in model.redis_maxmemory_gb)
    shards = (at_least(redis_cpu / model.redis_core_share), at_least(small), at_least(large))
    replicas = max(2, int(-(-(matchmaker / model.target_cpu) // 1)))  # one core each
    workers = max(2, int(-(-(engine / model.target_cpu) // 1)))
    # Each process's own upkeep (sweeps, timers), whatever the load.
    matchmaker_cores = (matchmaker + replicas * rates["matchmaker/idle"]) / model.target_cpu
    engine_cores = (engine + workers * rates["engine/idle"]) / model.target_cpu
    watchers = games * model.watchers_per_game
    return Need(
        games,
        moves,
        bot_moves,
        matchmaker_cores,
        engine_cores,
        redis_cpu,
        shards,
        data / 2**30,
        finished_per_day * retention_days,
        (replicas * rates["matchmaker/rss"] * 2**20 + watchers * rates["matchmaker/watcher"])
        / 2**30,
        workers * rates["engine/rss"] / 2**10,
    )


def capacity_table(rates: dict[str, float], model: Model = MODEL) -> str:
    """The table of docs/capacity.md, from the measured `rates`."""
    lines = [
        f"load model: a move every {model.think_s:g} s per game, "
        f"{model.watchers_per_game:g} watchers per game, {model.bot_share:.0%} of games "
        f"against the bot, {model.registered_players:,} registered players; cores at "
        f"{model.target_cpu:.0%}, a Redis primary at {model.redis_core_share:.0%} of its core",
        "| concurrent games | moves/s (bots') | matchmaker cores | engine cores | matchmaker "
        "GB | engine GB | Redis CPU (cores) | Redis data GB (finished games kept) | Redis "
        "shards for the CPU; for the data at maxmemory "
        + " GB, ".join(f"{size:g}" for size in model.redis_maxmemory_gb)
        + " GB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for games in LOADS:
        need = capacity(games, rates, model)
        lines.append(
            f"| {games:,} | {need.moves_per_s:,.0f} ({need.bot_moves_per_s:,.0f}) "
            f"| {need.matchmaker_cores:,.1f} | {need.engine_cores:,.1f} "
            f"| {need.matchmaker_gb:.1f} | {need.engine_gb:.1f} | {need.redis_cores:.2f} "
            f"| {need.redis_gb:.1f} ({need.finished_kept:,.0f}) "
            f"| {'; '.join(str(count) for count in need.shards)} |"
        )
    return "\n".join(lines)


def run(bench: Bench) -> None:
    """Measure the figures, then print the capacity table built from them."""
    configure_logging(level="warning")  # the engine serving the person's legal moves here
    with (
        tempfile.TemporaryDirectory(prefix="bench-capacity-") as folder,
        stack(Path(folder)) as setup,
        engine_in_process(TEST_SEAL_KEY) as rules,
        asyncio.Runner() as runner,
    ):
        figures = bench_cpu(bench, setup, rules, runner)
        figures |= bench_suggest(bench, setup)
        figures |= bench_memory(bench, setup, runner)
    rates = {key: figure.median for key, figure in figures.items()}
    print(capacity_table(rates), flush=True)


def main() -> int:
    """Run the capacity figures alone."""
    run(Bench())
    return 0


if __name__ == "__main__":
    sys.exit(main())
