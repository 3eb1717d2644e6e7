"""What strangers cost players (their searches, their streams), measured beside the calm of the
same run.

`run(bench)` starts its own redis-server, engine and matchmaker processes on free loopback
ports, measures, and stops them. Run alone: `python -m tests.bench.bench_strangers
[--part unread] [--part bot] [--rounds N]`.

- Unread streams: `UNREAD` spectator WatchGame streams opened by a separate
  client process over `MOVING_GAMES` games, while this process plays `MOVES_PER_SECOND`
  moves a second in each (so every stream gets updates) and times GetGame of another game,
  one call after another. Rounds in turns: no streams; streams whose client reads every
  message; streams whose client reads none. With streams, the timing starts once two
  updates' time went by without a stream woken (their clients' transports took no more:
  the matchmaker's count of streams woken, `wargame_matchmaker_watchers_woken`), or after
  `FILL_BOUND_S` of moves. Each kind is held until the matchmaker counts every stream open
  (`wargame_matchmaker_watchers`). Figures: GetGame
  p50 and p99 of each kind (median of the rounds); the read beside none, the unread beside
  the read (goal: an unread stream costs no more than a reader, <= 1x); and the
  matchmaker process's CPU time per stream and update: its CPU time a second over
  `CPU_SECONDS` of moves alone (before GetGame is timed), less that of the round without
  streams, over the `UNREAD` x `MOVES_PER_SECOND` stream updates a second; and the streams
  woken over those seconds, per stream and update (1: every stream is handed every update,
  0: none is).
- Bot under a flood: a timed Game of War against the bot (`BOT_TIME` per move),
  the engine with one worker and its default pool, the matchmaker proving its calls with
  the caller key. Rounds alternate: calm, and under `FLOODERS` anonymous SuggestAction
  callers (a separate process, maximum-budget searches, retried at once when refused).
  The bot's reply time: from the acknowledgement of the player's move to the bot's move on
  the player's own WatchGame stream. Figures: its median and p99 of each kind of round, the
  flooded beside the calm (goal: <= 2x), and the bot's games lost on time (goal: 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from tests.bench.bench_matchmaker import (
    figure,
    legal_sequence,
    new_games,
    percentile,
    submit,
)
from tests.bench.bench_matchmaker import (
    matchmaker as start_matchmaker,
)
from tests.bench.harness import Bench, cpu_seconds
from tests.matchmaker.helpers import seconds, timed_bot_game
from tests.servers import ENGINE_SERVICE, free_port, start_redis, start_service
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

ROUNDS = 3
UNREAD = 2_000
MOVING_GAMES = 4
KINDS = ("none", "read", "unread")  # the rounds: no watchers, streams read, streams unread
UNREAD_PLIES = 200  # the line each watched game plays (longer than a round lasts)
CHANNELS = 10
ROUND_SECONDS = 4.0  # each round's GetGame timing
CPU_SECONDS = 4.0  # each round's moves alone, the matchmaker's CPU time read around them
MOVES_PER_SECOND = 1.0  # in each watched game
FILL_BOUND_S = 30.0  # the longest wait for the unread streams to fill their buffers
FLOODERS = 24
FLOOD_BUDGET = 2.0  # seconds each anonymous search asks for
BOT_TIME = 0.2  # the bot thinks this long per move
BOT_MOVES = 8  # bot replies timed per round
BASE = 300.0  # the bot game's clock (each side)


@dataclass
class Stack:
    """The processes under test: the engine's and matchmaker's addresses, the matchmaker's
    metrics address."""

    engine: str
    matchmaker: str
    metrics: str
    matchmaker_pid: int


@contextmanager
def stack(directory: Path) -> Iterator[Stack]:
    """redis-server, one engine process (one worker, the default pool, a caller key) and a
    matchmaker process proving its engine calls with that key, its metrics served."""
    redis_server = start_redis(directory / "redis")
    seal = directory / "seal.key"
    seal.write_text(bytes(range(32)).hex())
    caller = directory / "caller.key"
    caller.write_text(secrets.token_hex(32) + "\n")
    processes = []
    try:
        engine = start_service(
            "engine_service.main",
            ["--workers", "1", "--metrics-listen", "off", "--seal-key-file", str(seal),
             "--log-level", "warning"],
            log_path=directory / "engine.log",
            service=ENGINE_SERVICE,
            env={"WARGAME_ENGINE_CALLER_KEY_FILE": str(caller)},
        )  # fmt: skip
        processes.append(engine)
        metrics = f"127.0.0.1:{free_port()}"
        matchmaker = start_matchmaker(
            directory, "matchmaker", redis_server.url, engine.address,
            "--metrics-listen", metrics,
            "--max-watchers-per-address", str(2 * UNREAD),  # every stream from loopback
            env={"WARGAME_MATCHMAKER_ENGINE_CALLER_KEY_FILE": str(caller)},
        )  # fmt: skip
        processes.append(matchmaker)
        yield Stack(engine.address, matchmaker.address, metrics, matchmaker.process.pid)
    finally:
        for process in reversed(processes):
            process.stop()
        redis_server.stop()


def gauge(metrics: str, name: str) -> float:
    """A gauge's value on a metrics endpoint (0 when absent)."""
    with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


# -- unread streams ----------------------------------------------------------------------


async def hold_streams(address: str, game_ids: list[str], count: int, *, read: bool) -> None:
    """(Run in its own process.) Open `count` spectator streams over the games, over
    `CHANNELS` connections (one refused is opened again after its retry hint); read the
    first message of each (the game as it stands), then every message (`read`) or none more,
    until stdin closes."""
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(CHANNELS)
    ]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
    calls: list[Any] = []

    async def watch(index: int) -> None:
        request = mm.WatchGameRequest(game_id=game_ids[index % len(game_ids)])
        while True:
            call = stubs[index % CHANNELS].WatchGame(request)
            calls.append(call)
            try:
                await call.read()
                if read:
                    while await call.read() is not grpc.aio.EOF:
                        pass
                return
            except grpc.aio.AioRpcError as error:
                details = error_details(error)
                if details.code == grpc.StatusCode.CANCELLED:
                    return
                if details.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    print(f"stream ended: {details.code.name} {details.reason}", file=sys.stderr)
                    return
                await asyncio.sleep(details.retry_after or 1.0)

    streams = [asyncio.ensure_future(watch(index)) for index in range(count)]
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for call in calls:
        call.cancel()
    await asyncio.gather(*streams, return_exceptions=True)
    for channel in channels:
        await channel.close()


async def unread_round(
    setup: Stack,
    games: list[tuple[str, dict[str, Any]]],
    timed: str,
    actions: list[game_pb2.Action],
    sides: list[str],
    *,
    fill: bool,
) -> tuple[list[float], float, float]:
    """Moves in the watched games, `MOVES_PER_SECOND` each, while GetGame of `timed` is
    called one after another for `ROUND_SECONDS`: the GetGame latencies (ms), the
    matchmaker's CPU seconds a second over `CPU_SECONDS` of moves alone before, and the
    streams woken a second over them. With `fill`, the timing starts once two updates' time
    went by without a stream woken (each was left with a write its client's transport did
    not take), or after `FILL_BOUND_S`."""
    async with grpc.aio.insecure_channel(setup.matchmaker) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        done = asyncio.Event()

        async def play(game_id: str, players: dict[str, Any]) -> None:
            version = 2
            for action, side in zip(actions, sides, strict=True):
                if done.is_set():
                    return
                paced = asyncio.ensure_future(asyncio.sleep(1 / MOVES_PER_SECOND))
                reply = await submit(stub, game_id, version, action, players[side].metadata)
                version = reply.game.version
                await paced
            raise RuntimeError("a watched game's line was played out before the round ended")

        def woken() -> float:
            return gauge(setup.metrics, "wargame_matchmaker_watchers_woken_total")

        async def time_gets() -> tuple[list[float], float, float]:
            if fill:
                deadline = time.monotonic() + FILL_BOUND_S
                before = await asyncio.to_thread(woken)
                while time.monotonic() < deadline:
                    await asyncio.sleep(2 / MOVES_PER_SECOND)
                    now = await asyncio.to_thread(woken)
                    if now == before:
                        break
                    before = now
                else:
                    print(f"  (after {FILL_BOUND_S:g} s, streams are still woken per update)")
            cpu = cpu_seconds([setup.matchmaker_pid])
            woke = await asyncio.to_thread(woken)
            started = time.perf_counter()
            await asyncio.sleep(CPU_SECONDS)
            elapsed = time.perf_counter() - started
            cpu = (cpu_seconds([setup.matchmaker_pid]) - cpu) / elapsed
            woke = (await asyncio.to_thread(woken) - woke) / elapsed
            latencies: list[float] = []
            stop_at = time.perf_counter() + ROUND_SECONDS
            while time.perf_counter() < stop_at:
                sent = time.perf_counter()
                await stub.GetGame(mm.GetGameRequest(game_id=timed))
                latencies.append((time.perf_counter() - sent) * 1000)
            done.set()
            return latencies, cpu, woke

        players = [asyncio.ensure_future(play(g, p)) for g, p in games]
        timing = await time_gets()
        await asyncio.gather(*players)
    return timing


def bench_unread(bench: Bench, setup: Stack, rounds: int) -> None:
    """GetGame latency beside `UNREAD` unread streams on games in play, and without them."""
    actions, sides = legal_sequence(setup.engine, UNREAD_PLIES)

    async def fresh_games() -> tuple[list[tuple[str, Any]], str]:
        async with grpc.aio.insecure_channel(setup.matchmaker) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
            made = await new_games(stub, MOVING_GAMES + 1)
        return made[:MOVING_GAMES], made[-1][0]

    figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}  # seconds a second
    woken: dict[str, list[float]] = {kind: [] for kind in KINDS}  # streams a second
    for index in range(rounds + 1):  # the first round warms up
        for kind in KINDS:
            games, timed = asyncio.run(fresh_games())
            holder = None
            if kind != "none":
                holder = subprocess.Popen(
                    [sys.executable, "-m", "tests.bench.bench_strangers", "--hold", kind,
                     setup.matchmaker, ",".join(game_id for game_id, _ in games)],
                    stdin=subprocess.PIPE,
                )  # fmt: skip
                deadline = time.monotonic() + 300
                while gauge(setup.metrics, "wargame_matchmaker_watchers") < UNREAD:
                    if time.monotonic() > deadline or holder.poll() is not None:
                        raise RuntimeError("the streams did not all open")
                    time.sleep(0.2)
            try:
                # Both kinds play the same while before the timing (a reader is always woken).
                latencies, busy, woke = asyncio.run(
                    unread_round(setup, games, timed, actions, sides, fill=kind != "none")
                )
            finally:
                if holder is not None:
                    assert holder.stdin is not None
                    holder.stdin.close()
                    holder.wait(60)
                    while gauge(setup.metrics, "wargame_matchmaker_watchers") > 0:
                        time.sleep(0.2)
            if index:
                figures[kind].append((percentile(latencies, 0.5), percentile(latencies, 0.99)))
                cpu[kind].append(busy)
                woken[kind].append(woke)
    for share, column in (("p50", 0), ("p99", 1)):
        reference = bench.report(
            figure(
                f"GetGame {share}, moves in {MOVING_GAMES} games, no watchers",
                "ms",
                [pair[column] for pair in figures["none"]],
            )
        )
        reading = bench.report(
            figure(
                f"GetGame {share}, the same games watched by {UNREAD:,} streams that read",
                "ms",
                [pair[column] for pair in figures["read"]],
            ),
            reference,
            paired=True,
        )
        bench.report(
            figure(
                f"GetGame {share}, the same games watched by {UNREAD:,} streams that read nothing",
                "ms",
                [pair[column] for pair in figures["unread"]],
            ),
            reading,
            goal="<= 1x (unread / read: an unread stream costs no more than a reader)",
            paired=True,
        )
    updates = UNREAD * MOVES_PER_SECOND  # stream updates a second
    for kind, what in (("read", "that read"), ("unread", "that read nothing")):
        bench.report(
            figure(
                f"matchmaker CPU per stream and update, {UNREAD:,} streams {what}",
                "ms",
                [
                    (busy - calm) / updates * 1000
                    for busy, calm in zip(cpu[kind], cpu["none"], strict=True)
                ],
            )
        )
        bench.report(
            figure(
                f"streams woken per stream and update, {UNREAD:,} streams {what}",
                "wake-ups",
                [woke / updates for woke in woken[kind]],
            )
        )


# -- the bot under a flood of anonymous searches -----------------------------------------


def flood(address: str, state_file: Path, flooders: int) -> dict[str, int]:
    """(Run in its own process.) `flooders` anonymous maximum-budget searches at once, each
    sent again as soon as it ends or is refused, until stdin closes: what they got."""
    state = game_pb2.GameState.FromString(state_file.read_bytes())
    stop = threading.Event()
    seen: Counter[str] = Counter()

    def one() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = engine_pb2_grpc.RulesEngineStub(channel)
            request = engine_pb2.SuggestActionRequest(
                state=state, time_budget=seconds(FLOOD_BUDGET), level=5
            )
            while not stop.is_set():
                try:
                    stub.SuggestAction(request, timeout=30)
                    seen["searched"] += 1
                except grpc.RpcError as error:
                    details = error_details(error)
                    seen[details.reason or details.code.name] += 1
                    time.sleep(0.02)  # obeys no retry hint, but yields the GIL

    threads = [threading.Thread(target=one) for _ in range(flooders)]
    for thread in threads:
        thread.start()
    sys.stdin.read()
    stop.set()
    for thread in threads:
        thread.join(60)
    return dict(seen)


async def bot_round(setup: Stack, moves: int) -> tuple[list[float], int]:
    """Play `moves` moves against the bot (new games as games end): the bot's reply times
    (s) and the bot's games lost on time."""
    replies: list[float] = []
    lost_on_time = 0
    async with (
        grpc.aio.insecure_channel(setup.matchmaker) as channel,
        grpc.aio.insecure_channel(setup.engine) as engine_channel,
    ):
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        rules = engine_pb2_grpc.RulesEngineStub(engine_channel)
        player = await stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name="timed"))
        metadata = (("authorization", f"Bearer {player.token}"),)
        while len(replies) < moves:
            game = (await stub.CreateGame(timed_bot_game(BASE, BOT_TIME), metadata=metadata)).game
            stream = stub.WatchGame(
                mm.WatchGameRequest(game_id=game.id, after_version=game.version),
                metadata=metadata,
            )
            try:
                while len(replies) < moves and game.status == mm.GAME_STATUS_RUNNING:
                    legal = await rules.ListLegalActions(
                        engine_pb2.ListLegalActionsRequest(state=game.state)
                    )
                    reply = await submit(
                        stub, game.id, game.version, legal.actions[0].action, metadata
                    )
                    acknowledged = time.perf_counter()
                    game = reply.game
                    while game.status == mm.GAME_STATUS_RUNNING and game.state.to_act != ["south"]:
                        update = await stream.read()
                        if update is grpc.aio.EOF:
                            raise RuntimeError("the watch stream ended")
                        if update.HasField("game"):
                            game = update.game
                    if game.state.to_act == ["south"]:
                        replies.append(time.perf_counter() - acknowledged)
                if (
                    game.outcome.reason == game_pb2.OUTCOME_REASON_TIME
                    and game.outcome.winner == "south"
                ):
                    lost_on_time += 1
            finally:
                stream.cancel()
    return replies, lost_on_time


def bench_bot(bench: Bench, setup: Stack, rounds: int, directory: Path) -> None:
    """The bot's reply time in a timed game, calm and under a flood of anonymous searches."""
    with grpc.insecure_channel(setup.engine) as channel:
        state = (
            engine_pb2_grpc.RulesEngineStub(channel)
            .NewGame(engine_pb2.NewGameRequest(game="war"))
            .state
        )
    state_file = directory / "flood-state.bin"
    state_file.write_bytes(state.SerializeToString())
    calm: list[tuple[float, float]] = []
    flooded: list[tuple[float, float]] = []
    lost = 0
    refused: Counter[str] = Counter()
    for index in range(rounds + 1):  # the first round warms up
        for under_flood in (False, True):
            flooder = None
            if under_flood:
                flooder = subprocess.Popen(
                    [sys.executable, "-m", "tests.bench.bench_strangers", "--flood",
                     setup.engine, str(state_file), str(FLOODERS)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )  # fmt: skip
                time.sleep(2.0)  # the flood connects and fills the search pool
            try:
                replies, lost_on_time = asyncio.run(bot_round(setup, BOT_MOVES))
            finally:
                if flooder is not None:
                    out, _ = flooder.communicate(b"", timeout=120)
                    refused.update(json.loads(out.decode().strip().splitlines()[-1]))
            lost += lost_on_time
            if index:
                kept = flooded if under_flood else calm
                kept.append((statistics.median(replies), percentile(replies, 0.99)))
    for share, column in (("median", 0), ("p99", 1)):
        reference = bench.report(
            figure(
                f"bot reply {share}, timed game, bot time {BOT_TIME:g} s, calm",
                "s",
                [pair[column] for pair in calm],
            )
        )
        bench.report(
            figure(
                f"bot reply {share}, under {FLOODERS} anonymous SuggestAction flooders "
                f"(what they got: {dict(refused) or 'nothing'})",
                "s",
                [pair[column] for pair in flooded],
            ),
            reference,
            goal="<= 2x (flooded / calm)",
            paired=True,
        )
    bench.report(
        figure("bot games lost on time, calm and flooded", "games", [float(lost)]), goal="0"
    )


PARTS = ("unread", "bot")


def run(bench: Bench, parts: tuple[str, ...] = PARTS, rounds: int = ROUNDS) -> None:
    """The figures of `parts` (default: both), on a stack of their own."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-strangers-") as folder,
        stack(Path(folder)) as setup,
    ):
        if "unread" in parts:
            bench_unread(bench, setup, rounds)
        if "bot" in parts:
            bench_bot(bench, setup, rounds, Path(folder))


def main() -> int:
    """Run the figures alone and save them (or, with --hold / --flood, be the strangers)."""
    parser = argparse.ArgumentParser(description=(main.__doc__ or "").splitlines()[0])
    parser.add_argument("--part", action="append", choices=PARTS, help="default: both")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--hold", nargs=3, metavar=("read|unread", "ADDRESS", "GAME_IDS"))
    parser.add_argument("--flood", nargs=3, metavar=("ADDRESS", "STATE_FILE", "FLOODERS"))
    args = parser.parse_args()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if args.hold:
        kind, address, game_ids = args.hold
        asyncio.run(hold_streams(address, game_ids.split(","), UNREAD, read=kind == "read"))
        return 0
    if args.flood:
        address, state_file, flooders = args.flood
        print(json.dumps(flood(address, Path(state_file), int(flooders))), flush=True)
        return 0
    result = Bench()
    run(result, tuple(args.part or PARTS), args.rounds)
    result.save(Path("run") / "bench-strangers.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
