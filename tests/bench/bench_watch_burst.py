"""A burst of watchers on one matchmaker: 5,000 WatchGame streams opened at once, and the
move acknowledgement p99 meanwhile beside the calm p99 of the same run.

`run(bench)` starts its own redis-server, engine and matchmaker processes on free loopback
ports, measures, and stops them. Run alone: `python -m tests.bench.bench_watch_burst`.

- Moves: 16 Game of War games played at once from this process (asyncio, one
  connection), each action a SubmitActions by the side to act replaying one engine-legal
  line (a game that reaches its end is replaced by a new one); the latency of each.
- Rounds alternate: calm (moves alone, `CALM_SECONDS`) and burst (moves while a separate
  client process opens `WATCHERS` spectator streams over 250 games at once, over 10
  connections, each retrying after the hint of RESOURCE_EXHAUSTED until it has caught up;
  the round lasts until every watcher is in, then they all close).
- Figures: the watchers in (and how many were told to retry first, how many met any other
  error), the move acknowledgement p99 of each kind of round (median of the rounds), the
  burst p99 beside the calm one as the median of the ratios of the rounds taken in turns
  (goal: <= 2x), with the machine's load average. Beside them, where a move's time went:
  the moves' client's own event-loop lateness (its p99 in each kind of round: a client
  starved of CPU would show here) and the time the matchmaker took to handle the moves
  (the p99 of its SubmitActions latency histogram over each round, as a bucket's upper
  bound); the rest is the time a call waits in the server before its handler runs and
  after it returns. And the CPU use (cores) of the matchmaker's process in each kind of
  round and of the burst's client process: on a 2-core machine a burst generator that
  takes a core leaves the matchmaker and the moves' client the other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc

from tests.bench.bench_matchmaker import (
    SEQUENCE_PLIES,
    figure,
    legal_sequence,
    new_games,
    percentile,
)
from tests.bench.bench_matchmaker import (
    matchmaker as start_matchmaker,
)
from tests.bench.harness import REPEATS, Bench, cpu_seconds, process_tree
from tests.servers import free_port, start_engine, start_redis
from wargame.runtime.status import error_details
from wargame.v1 import game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

WATCHERS = 5_000
WATCHED_GAMES = 250
CHANNELS = 10
MOVING_GAMES = 16
CALM_SECONDS = 5.0
BURST_BOUND_S = 300.0  # a burst not served by then is reported as such


@contextmanager
def stack(directory: Path) -> Iterator[tuple[str, str, str, int]]:
    """redis-server, one engine process and a matchmaker process with its default watch
    settings (but for one address holding every watcher): the engine's and the
    matchmaker's addresses, the matchmaker's metrics URL and its process id."""
    redis_server = start_redis(directory / "redis")
    key_file = directory / "seal.key"
    key_file.write_text(bytes(range(32)).hex())
    processes = []
    try:
        engine = start_engine(directory, "--seal-key-file", str(key_file), "--log-level", "warning")
        processes.append(engine)
        metrics = f"127.0.0.1:{free_port()}"
        matchmaker = start_matchmaker(
            directory, "matchmaker", redis_server.url, engine.address,
            "--metrics-listen", metrics, "--max-watchers-per-address", str(2 * WATCHERS),
        )  # fmt: skip
        processes.append(matchmaker)
        metrics_url = f"http://{metrics}/metrics"
        yield engine.address, matchmaker.address, metrics_url, matchmaker.process.pid
    finally:
        for process in reversed(processes):
            process.stop()
        redis_server.stop()


async def open_at_once(address: str, game_ids: list[str], count: int) -> dict[str, Any]:
    """The burst (run in its own process): `count` streams opened at once, each retrying
    after a refusal's hint until caught up; all held until every one is in, then closed."""
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
    served = refused = 0
    errors: dict[str, int] = {}
    everyone = asyncio.Event()
    started, cpu = time.perf_counter(), time.process_time()

    async def watch(index: int) -> None:
        nonlocal served, refused
        request = mm.WatchGameRequest(game_id=game_ids[index % len(game_ids)])
        while True:
            call = stubs[index % CHANNELS].WatchGame(request)
            try:
                async for _ in call:  # the first message: caught up (the game as it stands)
                    served += 1
                    if served + sum(errors.values()) == count:
                        everyone.set()
                    await everyone.wait()
                    call.cancel()
                    return
            except grpc.aio.AioRpcError as error:
                details = error_details(error)
                if details.code == grpc.StatusCode.RESOURCE_EXHAUSTED and details.retry_after:
                    refused += 1
                    await asyncio.sleep(details.retry_after)
                    continue
                key = f"{details.code.name} {details.reason} {details.message[:60]}".strip()
                errors[key] = errors.get(key, 0) + 1
                if served + sum(errors.values()) == count:
                    everyone.set()
                return

    try:
        await asyncio.wait_for(asyncio.gather(*(watch(i) for i in range(count))), BURST_BOUND_S)
    except TimeoutError:
        errors["not served in time"] = count - served
    finally:
        for channel in channels:
            await channel.close()
    took = time.perf_counter() - started
    cores = (time.process_time() - cpu) / took  # the burst's own CPU use (a load generator)
    return {
        "served": served,
        "refused": refused,
        "errors": errors,
        "seconds": took,
        "cores": cores,
    }


def handled(metrics: str) -> dict[float, float]:
    """The matchmaker's SubmitActions calls so far by how long it took to handle them (its
    latency histogram: upper bound in seconds, calls at most that long)."""
    with urllib.request.urlopen(metrics, timeout=30) as page:
        text = page.read().decode()
    counts: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith("wargame_matchmaker_rpc_seconds_bucket{") and (
            'rpc="SubmitActions"' in line
        ):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            counts[float(bound)] = float(line.rsplit(" ", 1)[1])
    return counts


def handled_p99(before: dict[float, float], after: dict[float, float]) -> float:
    """The p99 (ms, a bucket's upper bound) of the SubmitActions handled between two looks."""
    bounds = sorted(after)
    total = after[math.inf] - before.get(math.inf, 0.0)
    for bound in bounds:
        if after[bound] - before.get(bound, 0.0) >= 0.99 * total:
            return bound * 1000
    return math.inf


lost: dict[str, int] = {}  # moves sent again, by the status their first sending met
LAG_TICK = 0.005  # seconds: the moves' client measures how late its event loop wakes
client_lag: list[float] = []  # the p99 of its lateness (ms) in each round


async def moves_until(
    stub: Any, actions: list[game_pb2.Action], sides: list[str], done: asyncio.Event
) -> list[float]:
    """Play `MOVING_GAMES` games at once until `done`: each acknowledgement's latency (ms)."""
    latencies: list[float] = []

    async def play() -> None:
        while not done.is_set():
            ((game_id, players),) = await new_games(stub, 1)
            version = 2
            for action, side in zip(actions, sides, strict=True):
                if done.is_set():
                    return
                sent = time.perf_counter()
                request = mm.SubmitActionsRequest(
                    game_id=game_id,
                    expected_version=version,
                    idempotency_key=uuid.uuid4().hex,
                    actions=[action],
                )
                while True:  # a call lost in transit is sent again (the same key: once)
                    try:
                        reply = await stub.SubmitActions(request, metadata=players[side].metadata)
                        break
                    except grpc.aio.AioRpcError as error:
                        if error.code() not in (
                            grpc.StatusCode.CANCELLED,
                            grpc.StatusCode.UNAVAILABLE,
                        ):
                            raise
                        lost[error.code().name] = lost.get(error.code().name, 0) + 1
                # The acknowledgement's latency, from the first sending.
                latencies.append((time.perf_counter() - sent) * 1000)
                version = reply.game.version

    async def sample_lag() -> None:
        while not done.is_set():
            asked = time.perf_counter()
            await asyncio.sleep(LAG_TICK)
            lags.append((time.perf_counter() - asked - LAG_TICK) * 1000)

    lags: list[float] = []
    await asyncio.gather(sample_lag(), *(play() for _ in range(MOVING_GAMES)))
    client_lag.append(percentile(lags, 0.99))
    return latencies


async def calm_round(address: str, actions: list[game_pb2.Action], sides: list[str]) -> list[float]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        done = asyncio.Event()
        asyncio.get_running_loop().call_later(CALM_SECONDS, done.set)
        return await moves_until(stub, actions, sides, done)


async def burst_round(
    address: str, actions: list[game_pb2.Action], sides: list[str], games_file: Path
) -> tuple[list[float], dict[str, Any]]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        done = asyncio.Event()
        burst = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.bench.bench_watch_burst",
            "--burst", address, str(games_file), str(WATCHERS),
            stdout=subprocess.PIPE,
        )  # fmt: skip

        async def wait_burst() -> bytes:
            out, _ = await burst.communicate()
            done.set()
            return out

        latencies, out = await asyncio.gather(moves_until(stub, actions, sides, done), wait_burst())
    return latencies, json.loads(out.decode().strip().splitlines()[-1])


def samples(outcomes: list[dict[str, Any]], key: str) -> list[float]:
    """One figure's samples: `key` of every burst's outcome (as the burst process wrote it)."""
    return [float(outcome[key]) for outcome in outcomes]


def run(bench: Bench) -> None:
    """The burst figures, on a stack of their own."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-watch-burst-") as folder,
        stack(Path(folder)) as (engine, address, metrics, pid),
    ):
        actions, sides = legal_sequence(engine, SEQUENCE_PLIES)
        games_file = Path(folder) / "watched.json"
        games_file.write_text(json.dumps(asyncio.run(watched_games(address))))
        asyncio.run(calm_round(address, actions, sides))  # warm-up
        calm: list[float] = []
        burst: list[float] = []
        bursts: list[dict[str, Any]] = []
        inside: dict[str, list[float]] = {"calm": [], "burst": []}  # as the server timed them
        busy: dict[str, list[float]] = {"calm": [], "burst": []}  # the matchmaker's CPU use
        tree = process_tree(pid)
        for _ in range(REPEATS):
            before = handled(metrics)
            cpu, started = cpu_seconds(tree), time.perf_counter()
            calm.append(percentile(asyncio.run(calm_round(address, actions, sides)), 0.99))
            middle = handled(metrics)
            busy["calm"].append((cpu_seconds(tree) - cpu) / (time.perf_counter() - started))
            cpu, started = cpu_seconds(tree), time.perf_counter()
            latencies, outcome = asyncio.run(burst_round(address, actions, sides, games_file))
            busy["burst"].append((cpu_seconds(tree) - cpu) / (time.perf_counter() - started))
            inside["calm"].append(handled_p99(before, middle))
            inside["burst"].append(handled_p99(middle, handled(metrics)))
            burst.append(percentile(latencies, 0.99))
            bursts.append(outcome)
        served, refused = samples(bursts, "served"), samples(bursts, "refused")
        errors: dict[str, int] = {}
        for outcome in bursts:
            for key, value in outcome["errors"].items():
                errors[key] = errors.get(key, 0) + value
        bench.report(
            figure(
                f"watchers opened at once on one matchmaker, all in (of {WATCHERS}; other "
                f"errors: {errors or 'none'})",
                "streams",
                served,
            ),
            goal=f">= {WATCHERS:,}",
        )
        bench.report(figure("of them told to retry first (RESOURCE_EXHAUSTED)", "streams", refused))
        bench.report(
            figure("the burst until every watcher was in", "s", samples(bursts, "seconds"))
        )
        reference = bench.report(
            figure(f"move acknowledgement p99, {MOVING_GAMES} games, calm", "ms", calm)
        )
        load = os.getloadavg()[0]
        bench.report(
            figure(
                f"move acknowledgement p99, {MOVING_GAMES} games, during the burst of {WATCHERS:,} "
                f"(moves sent again: {lost or 'none'}; load average {load:.1f})",
                "ms",
                burst,
            ),
            reference,
            goal="<= 2x (burst / calm)",
            paired=True,
        )
        bench.report(
            figure("the moves' client's own event-loop lateness p99, calm", "ms",
                   client_lag[1::2])
        )  # fmt: skip
        bench.report(
            figure("the moves' client's own event-loop lateness p99, during the burst", "ms",
                   client_lag[2::2])
        )  # fmt: skip
        for kind in ("calm", "burst"):
            bench.report(figure(f"the matchmaker's CPU use, {kind}", "cores", busy[kind]))
        bench.report(
            figure(
                "the burst's client process's own CPU use (on the same machine)",
                "cores",
                samples(bursts, "cores"),
            )
        )
        handled_calm = bench.report(
            figure("of which handled by the matchmaker, p99 (bucket bound), calm", "ms",
                   inside["calm"])
        )  # fmt: skip
        bench.report(
            figure("of which handled by the matchmaker, p99 (bucket bound), during the burst",
                   "ms", inside["burst"]),
            handled_calm,
            paired=True,
        )  # fmt: skip


async def watched_games(address: str) -> list[str]:
    """The games the watchers watch (made once)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        made: list[str] = []
        for _ in range(0, WATCHED_GAMES, 50):
            made += [game_id for game_id, _ in await new_games(stub, 50)]
        return made


def main() -> int:
    """Run the burst figures alone and save them (or, with --burst, be the burst)."""
    parser = argparse.ArgumentParser(description=(main.__doc__ or "").splitlines()[0])
    parser.add_argument("--burst", nargs=3, metavar=("ADDRESS", "GAMES_FILE", "COUNT"))
    args = parser.parse_args()
    if args.burst:
        address, games_file, count = args.burst
        game_ids = json.loads(Path(games_file).read_text())
        print(json.dumps(asyncio.run(open_at_once(address, game_ids, int(count)))), flush=True)
        return 0
    result = Bench()
    run(result)
    result.save(Path("run") / "bench-watch-burst.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
