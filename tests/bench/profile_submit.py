"""Where the matchmaker's time goes per SubmitActions: a profile of the real servicer.

The matchmaker runs in this process (the same `Replica` as `wargame-matchmaker`, on its own
gRPC server, its Redis and engine reached over loopback); the clients run in a separate
process (`python -m tests.bench.profile_submit drive ...`), which creates its games first,
then plays SubmitActions for a fixed time. Two phases, each while the clients play:

- plain: the CPU time (user + system) this process spends per committed submission;
- profiled: cProfile over the same work, its own CPU time (tottime) of every function grouped
  by the part of the stack it belongs to, as shares of the profiled total; the plain CPU
  time split by those shares is the µs per submission of each part. Compiled code (the
  gRPC core, protobuf's upb, hiredis) counts in the Python function that called it.

    python -m tests.bench.profile_submit [--games 16] [--seconds 3] [--top 25] [--cluster]

prints the breakdown and the functions with the most own time. `make bench` runs it from
`bench_matchmaker` (`record`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from matchmaker.server import Replica
from matchmaker.settings import Settings
from tests.servers import ROOT, free_port, start_engine, start_redis, start_redis_cluster

# The parts of the stack, by where a function's code lives (first match wins).
ENGINE_CLIENT = ("matchmaker/engine.py", "grpc/aio/_call.py", "grpc/aio/_channel.py")
STORE = ("matchmaker/store.py", "matchmaker/scripts", "matchmaker/redis_client.py")
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("matchmaker: engine client", ENGINE_CLIENT),
    ("matchmaker: Redis scripts and store", STORE),
    ("matchmaker: play, records, views", ("matchmaker/",)),
    ("redis-py client", ("redis/",)),
    ("gRPC server and core", ("grpc/", "wargame/runtime/serving.py")),
    ("protobuf", ("google/protobuf",)),
    ("asyncio event loop", ("asyncio/", "selectors.py")),
    ("logs and metrics", ("structlog/", "prometheus_client/", "logging/")),
)
OTHER = "other Python"


@dataclass
class Breakdown:
    """The CPU time per submission, in all and by part of the stack."""

    submits: int
    cpu_us: float  # CPU µs per submission, without the profiler
    rate: float  # submissions per second meanwhile
    parts: dict[str, float] = field(default_factory=dict)  # µs per submission
    top: list[tuple[str, float]] = field(default_factory=list)  # function, share of total

    def lines(self) -> list[str]:
        """The breakdown as text lines."""
        out = [
            f"{self.submits} submissions at {self.rate:.0f}/s; matchmaker CPU "
            f"{self.cpu_us:.0f} us per submission, of which:"
        ]
        for name, micros in sorted(self.parts.items(), key=lambda item: -item[1]):
            out.append(f"  {micros:7.0f} us  {name}")
        out.append("functions with the most own time (share of the profiled total):")
        for name, share in self.top:
            out.append(f"  {share * 100:5.1f}%  {name}")
        return out


# Built-in functions (no file), by what they do here.
BUILTINS: tuple[tuple[str, str], ...] = (
    ("_socket.socket", "socket system calls (Redis connections)"),
    ("select.epoll", "asyncio event loop"),
    ("_asyncio.", "asyncio event loop"),
    # The gRPC core's completions run as event-loop callbacks in a context of their own.
    ("_contextvars.Context", "gRPC server and core"),
)


def part_of(filename: str, function: str) -> str:
    """The part of the stack a function belongs to (by its file, or a built-in's name)."""
    path = filename.replace(os.sep, "/")
    if path == "~":
        return next((name for marker, name in BUILTINS if marker in function), OTHER)
    for name, markers in PARTS:
        if any(marker in path for marker in markers):
            return name
    return OTHER


def _label(key: tuple[str, int, str]) -> str:
    filename, line, function = key
    short = filename.replace(os.sep, "/")
    for marker in ("site-packages/", "/lib/python3", str(ROOT) + "/"):
        if marker in short:
            short = short.split(marker, 1)[1]
    return f"{function} ({short}:{line})"


def grouped(
    profile: cProfile.Profile, top: int
) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """Shares of the profiled total by part, and the `top` functions by own time."""
    stats = pstats.Stats(profile)
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in table.values()) or 1.0
    parts: dict[str, float] = {}
    for key, row in table.items():
        part = part_of(key[0], key[2])
        parts[part] = parts.get(part, 0.0) + row[2] / total
    ranked = sorted(table.items(), key=lambda item: -item[1][2])[:top]
    return parts, [(_label(key), row[2] / total) for key, row in ranked]


# -- the clients ---------------------------------------------------------------------------


def drive_main(argv: list[str]) -> int:
    """The client process: make the games, say "ready", wait for a line, play, print."""
    from tests.bench.bench_matchmaker import legal_sequence, play_round

    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("engine")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    actions, sides = legal_sequence(args.engine, 60)
    asyncio.run(play_round(args.address, args.games, actions, sides, seconds=0.5))  # warm-up

    async def ready() -> None:
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

    for _ in range(args.rounds):
        committed, elapsed, _, _ = asyncio.run(
            play_round(
                args.address, args.games, actions, sides, seconds=args.seconds, made_hook=ready
            )
        )
        print(json.dumps({"committed": committed, "elapsed": elapsed}), flush=True)
    return 0


# -- the matchmaker in this process --------------------------------------------------------


@contextlib.contextmanager
def backends(folder: Path, cluster: bool = False) -> Iterator[tuple[str, str]]:
    """A redis-server (with `cluster`, a 3-primary Redis Cluster) and one engine worker:
    (redis url, engine address)."""
    redis_server = (
        start_redis_cluster(folder / "cluster", primaries=3)
        if cluster
        else start_redis(folder / "redis")
    )
    engine = start_engine(folder, "--log-level", "warning")
    try:
        yield redis_server.url, engine.address
    finally:
        engine.stop()
        redis_server.stop()


async def _serve_and_profile(
    redis_url: str, engine: str, games: int, seconds: float, top: int
) -> Breakdown:
    from wargame.runtime.logs import configure_logging

    configure_logging("json", "warning")
    settings = Settings(
        redis_url=redis_url,
        engine=engine,
        secret_key=bytes(range(32)),
        rate_limit=0,
        register_peer_rate=0,
        register_rate=0,
        redis_connections=16,
    )
    replica = await Replica.connect(settings)
    address = f"127.0.0.1:{free_port()}"
    serving = replica.server(address)
    await serving.start()
    replica.start_workers()
    driver = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.bench.profile_submit", "drive", address, engine,
        "--games", str(games), "--seconds", str(seconds),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert driver.stdin is not None and driver.stdout is not None

    async def phase(profile: cProfile.Profile | None) -> tuple[int, float, float]:
        assert driver.stdin is not None and driver.stdout is not None
        line = await driver.stdout.readline()
        assert line.strip() == b"ready", line
        cpu = time.process_time()
        if profile is not None:
            profile.enable()
        driver.stdin.write(b"go\n")
        await driver.stdin.drain()
        done = json.loads(await driver.stdout.readline())
        if profile is not None:
            profile.disable()
        return done["committed"], time.process_time() - cpu, done["committed"] / done["elapsed"]

    try:
        submits, cpu, rate = await phase(None)
        # CPU time, not wall time: a coroutine's frame the profiler sees as running while it
        # waits would otherwise collect the waits.
        profile = cProfile.Profile(time.process_time)
        await phase(profile)
        await driver.wait()
    finally:
        if driver.returncode is None:
            driver.kill()
        await replica.shutdown(serving, 1.0)
    shares, ranked = grouped(profile, top)
    per_submit = cpu / max(1, submits) * 1e6
    return Breakdown(
        submits=submits,
        cpu_us=per_submit,
        rate=rate,
        parts={name: share * per_submit for name, share in shares.items()},
        top=ranked,
    )


def profile_submits(
    games: int = 16, seconds: float = 3.0, top: int = 25, cluster: bool = False
) -> Breakdown:
    """Start Redis (a Redis Cluster) and an engine, serve the matchmaker here, profile its
    submissions."""
    with (
        tempfile.TemporaryDirectory(prefix="profile-submit-") as scratch,
        backends(Path(scratch), cluster) as (redis_url, engine),
    ):
        return asyncio.run(_serve_and_profile(redis_url, engine, games, seconds, top))


def main() -> int:
    """Entry point: the breakdown, printed (or the client process, `drive`)."""
    if sys.argv[1:2] == ["drive"]:
        return drive_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--cluster", action="store_true", help="on a 3-primary Redis Cluster")
    args = parser.parse_args()
    breakdown = profile_submits(args.games, args.seconds, args.top, args.cluster)
    print("\n".join(breakdown.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
