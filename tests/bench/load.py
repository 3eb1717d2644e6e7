"""A gRPC load generator run as its own process: fixed requests, N in flight, for T seconds.

    python -m tests.bench.load TARGET METHOD REQUEST_FILE --concurrency N --seconds T
        [--pause-after-error S] [--no-warm-up] [--cpu-of PID]...

The request file holds one or more requests, each a 4-byte big-endian length and the
serialized message (`write_requests`); each client goes round them from its own starting
point, so a server that remembers answers (the rules' bounded caches) cannot answer from
memory when the file holds more requests than the caches keep. Requests are sent as
pre-serialized bytes (no protobuf work in the client), so the figures measure the server.
Each client has its own connection, as separate callers would: a server's worker processes
share a port by SO_REUSEPORT, which spreads connections (not the requests of one
connection) over them. Prints one JSON line: calls, errors, seconds, latencies (p50, p99),
and with `--cpu-of PID` the CPU time the process trees of those PIDs (the server) used
during the timed calls, in seconds and in microseconds per call (read from /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import grpc

from tests.bench.harness import cpu_seconds, process_tree


def write_requests(path: Path, requests: list[bytes]) -> None:
    """Write serialized requests in the load's file format."""
    path.write_bytes(b"".join(len(r).to_bytes(4, "big") + r for r in requests))


def read_requests(path: Path) -> list[bytes]:
    """The requests of a file `write_requests` wrote."""
    data = path.read_bytes()
    requests, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        requests.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    return requests


async def _load(
    target: str,
    method: str,
    payloads: list[bytes],
    concurrency: int,
    seconds: float,
    *,
    pause: float = 0.0,
    warm_up: bool = True,
    cpu_of: tuple[int, ...] = (),
) -> dict[str, float]:
    options = [
        ("grpc.max_receive_message_length", 64 << 20),
        ("grpc.max_send_message_length", 64 << 20),
        ("grpc.use_local_subchannel_pool", 1),  # a connection of its own per channel
    ]
    latencies: list[float] = []
    errors = 0
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(concurrency)]
    calls = [channel.unary_unary(method) for channel in channels]  # bytes in, bytes out
    if warm_up:  # connect and warm (a refusal still connects)
        await asyncio.gather(
            *(call(payloads[0], timeout=60) for call in calls), return_exceptions=True
        )
    stop_at = time.perf_counter() + seconds

    async def client(call: grpc.aio.UnaryUnaryMultiCallable, start: int) -> None:
        nonlocal errors
        at = start
        while time.perf_counter() < stop_at:
            payload = payloads[at % len(payloads)]
            at += 1
            started = time.perf_counter()
            try:
                await call(payload, timeout=60)
            except grpc.RpcError:
                errors += 1
                await asyncio.sleep(pause)  # a refused client tries again after `pause` s
                continue
            latencies.append(time.perf_counter() - started)

    servers = [pid for root in cpu_of for pid in process_tree(root)]
    cpu_before = cpu_seconds(servers)
    began = time.perf_counter()
    spread = max(1, len(payloads) // concurrency)
    await asyncio.gather(*(client(call, i * spread) for i, call in enumerate(calls)))
    elapsed = time.perf_counter() - began
    server_cpu = cpu_seconds(servers) - cpu_before
    for channel in channels:
        await channel.close()
    ordered = sorted(latencies) or [0.0]
    return {
        "calls": len(latencies),
        "errors": errors,
        "seconds": elapsed,
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
        "server_cpu_s": server_cpu,
        "cpu_us_per_call": server_cpu / len(latencies) * 1e6 if latencies else 0.0,
    }


def main() -> int:
    """Entry point: print the load's figures as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("method")
    parser.add_argument("request_file", type=Path)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--pause-after-error", type=float, default=0.0)
    parser.add_argument("--no-warm-up", action="store_true", help="a flood: start at once")
    parser.add_argument(
        "--cpu-of", type=int, action="append", default=[], help="a server's PID (its tree)"
    )
    args = parser.parse_args()
    figures = asyncio.run(
        _load(
            args.target,
            args.method,
            read_requests(args.request_file),
            args.concurrency,
            args.seconds,
            pause=args.pause_after_error,
            warm_up=not args.no_warm_up,
            cpu_of=tuple(args.cpu_of),
        )
    )
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
