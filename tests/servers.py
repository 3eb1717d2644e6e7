"""Real servers for tests: redis-server on a free port, gRPC services in-process or as processes.

No mocks: tests talk to a real `redis-server` and to real gRPC servers on loopback.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(address: str, service: str = "", timeout: float = 20.0) -> None:
    """Block until the gRPC health check of `service` at `address` answers SERVING."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError as error:
                last = error
            time.sleep(0.05)
    raise TimeoutError(f"{address} {service or '(server)'} not SERVING after {timeout} s: {last}")


@dataclass
class RedisServer:
    """A real redis-server on loopback, owned by the test session."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        """redis:// URL of the server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Terminate the server and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_redis(
    directory: Path, port: int | None = None, extra: Sequence[str] = (), *, tls: bool = False
) -> RedisServer:
    """Start redis-server on a free loopback port (no persistence) and wait until it answers
    (`extra`: more redis-server arguments; `tls`: `extra` makes it listen with TLS on the
    port, so readiness is only its port accepting connections)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed: run `make setup`")
    directory.mkdir(parents=True, exist_ok=True)
    for _ in range(5):
        chosen = port or free_port()
        process = subprocess.Popen(
            [
                binary,
                *(("--port", "0", "--tls-port", str(chosen)) if tls else ("--port", str(chosen))),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(directory),
                "--protected-mode",
                "yes",
                "--loglevel",
                "warning",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", chosen), timeout=0.2) as conn:
                    if tls:
                        return RedisServer(chosen, directory, process)
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return RedisServer(chosen, directory, process)
            except OSError:
                time.sleep(0.02)
        process.kill()
        process.wait()
        if port:
            break
    raise RuntimeError("could not start redis-server")


@dataclass
class ServiceProcess:
    """A service run as a real subprocess (`python -m <module> ...`)."""

    address: str
    process: subprocess.Popen[bytes]
    log_path: Path
    argv: list[str] = field(default_factory=list)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Signal the process and wait for it; returns its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)

    def kill(self) -> None:
        """Kill the process at once (SIGKILL), as a crash would."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def log(self) -> str:
        """Everything the process wrote so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_service(
    module: str,
    args: Sequence[str],
    *,
    log_path: Path,
    service: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> ServiceProcess:
    """Start `python -m module serve --listen 127.0.0.1:<port> args...` and wait until healthy."""
    chosen = port or free_port()
    address = f"127.0.0.1:{chosen}"
    argv = [sys.executable, "-m", module, "serve", "--listen", address, *args]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    out = log_path.open("ab")
    process = subprocess.Popen(
        argv,
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        env={**os.environ, "WARGAME_LOG_FORMAT": "json", **(env or {})},
    )
    handle = ServiceProcess(address, process, log_path, argv)
    try:
        wait_healthy(address, service, timeout)
    except TimeoutError:
        handle.kill()
        raise RuntimeError(f"{module} did not start: {handle.log()[-2000:]}") from None
    return handle


@dataclass
class RedisClusterServers:
    """A real Redis Cluster on loopback: `primaries` nodes holding the slots, each with
    `replicas` replicas, every node on free ports (its cluster bus port too)."""

    nodes: list[RedisServer]
    primaries: int

    @property
    def url(self) -> str:
        """redis:// URL of one node (the client finds the others)."""
        return self.nodes[0].url

    def node_of(self, port: int) -> RedisServer:
        """The node listening on `port`."""
        return next(node for node in self.nodes if node.port == port)

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()


def _redis_cli(*args: str) -> str:
    binary = shutil.which("redis-cli")
    if binary is None:
        raise RuntimeError("redis-cli is not installed: run `make setup`")
    done = subprocess.run([binary, *args], check=False, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"redis-cli {' '.join(args)}: {done.stdout}{done.stderr}")
    return done.stdout


def cluster_ready(ports: Sequence[int], replicas: int) -> bool:
    """Every node sees a healthy cluster, and every primary has its replicas in sync."""
    for port in ports:
        info = _redis_cli("-p", str(port), "cluster", "info")
        if "cluster_state:ok" not in info:
            return False
    slots = _redis_cli("-p", str(ports[0]), "cluster", "shards")
    return slots.count("online") >= len(ports) if replicas else True


def start_redis_cluster(
    directory: Path, primaries: int = 3, replicas: int = 0, node_timeout_ms: int = 2000
) -> RedisClusterServers:
    """Start a Redis Cluster (`redis-cli --cluster create`) on free loopback ports and wait
    until it serves every slot (and its replicas are in sync)."""
    nodes: list[RedisServer] = []
    try:
        for index in range(primaries * (1 + replicas)):
            options = (
                "--cluster-enabled", "yes",
                "--cluster-port", str(free_port()),
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(node_timeout_ms),
            )  # fmt: skip
            nodes.append(start_redis(directory / f"node{index}", extra=options))
        _redis_cli(
            "--cluster", "create", *(f"127.0.0.1:{node.port}" for node in nodes),
            "--cluster-replicas", str(replicas), "--cluster-yes",
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not cluster_ready([node.port for node in nodes], replicas):
            if time.monotonic() > deadline:
                raise RuntimeError("the Redis Cluster did not become ready in 30 s")
            time.sleep(0.1)
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return RedisClusterServers(nodes, primaries)
