"""The local stack: redis-server, one engine and one matchmaker, in the background.

    python deploy/local/stack.py start|stop|status [--run-dir run]

Everything lives under the run folder: pid files, logs, Redis's append-only file, the seal
key, the matchmaker's secret key and the engine's metrics scratch. `start` refuses to start
duplicates; `stop` ends exactly the processes it started (each pid is checked against its
command line before signalling).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REDIS_PORT = int(os.environ.get("WARGAME_LOCAL_REDIS_PORT", "6399"))
ENGINE = os.environ.get("WARGAME_ENGINE", "127.0.0.1:50051")
MATCHMAKER = os.environ.get("WARGAME_MATCHMAKER", "127.0.0.1:50052")


@dataclass(frozen=True)
class Part:
    """One process of the stack."""

    name: str
    marker: str  # a word its command line must contain, so a reused pid is never signalled
    health: str  # "redis" or the gRPC service name to wait for


PARTS = (
    Part("redis", "redis-server", "redis"),
    Part("engine", "wargame-engine", "wargame.v1.RulesEngine"),
    Part("matchmaker", "wargame-matchmaker", "wargame.v1.Matchmaker"),
)


class StackError(Exception):
    """A problem to report in one line."""


def _pid_file(run_dir: Path, part: Part) -> Path:
    return run_dir / f"{part.name}.pid"


def _command_line(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def running_pid(run_dir: Path, part: Part) -> int | None:
    """The pid of a part started from this run folder, if it still runs."""
    path = _pid_file(run_dir, part)
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    command = _command_line(pid)
    if not command or part.marker not in command:
        return None
    return pid


def _port_busy(address: str) -> bool:
    host, _, port = address.rpartition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, int(port)))
        except OSError:
            return True
    return False


def _wait_redis(port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            time.sleep(0.1)
    return False


def _wait_grpc(address: str, service: str, timeout: float) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    return False


def _spawn(run_dir: Path, part: Part, argv: list[str], env: dict[str, str] | None = None) -> int:
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{part.name}.log").open("ab") as log:
        process = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=run_dir,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    _pid_file(run_dir, part).write_text(f"{process.pid}\n")
    return process.pid


def _tail(run_dir: Path, part: Part, lines: int = 5) -> str:
    path = run_dir / "logs" / f"{part.name}.log"
    text = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return "\n".join(text[-lines:])


def start(run_dir: Path) -> int:
    """Start the parts that are not running; say so if they all are."""
    run_dir.mkdir(parents=True, exist_ok=True)
    running = {part.name: pid for part in PARTS if (pid := running_pid(run_dir, part))}
    if len(running) == len(PARTS):
        listed = ", ".join(f"{name} pid {pid}" for name, pid in running.items())
        print(f"the local stack already runs ({listed}); `make stop` stops it")
        return 0
    redis_server = shutil.which("redis-server")
    if redis_server is None:
        raise StackError("redis-server is not installed: run `make setup`")
    addresses = {"redis": f"127.0.0.1:{REDIS_PORT}", "engine": ENGINE, "matchmaker": MATCHMAKER}
    for part in PARTS:
        if part.name not in running and _port_busy(addresses[part.name]):
            raise StackError(
                f"cannot start the {part.name}: {addresses[part.name]} is in use by another program"
            )
    key_file = run_dir / "seal.key"
    secret_file = run_dir / "matchmaker-secret.key"
    for path in (key_file, secret_file):
        if not path.exists():
            path.write_text(secrets.token_hex(32) + "\n")
            path.chmod(0o600)
    (run_dir / "redis").mkdir(exist_ok=True)
    (run_dir / "engine-metrics").mkdir(exist_ok=True)
    commands = {
        "redis": [
            redis_server,
            "--port",
            str(REDIS_PORT),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(run_dir / "redis"),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--protected-mode",
            "yes",
        ],
        "engine": [
            str(BIN / "wargame-engine"),
            "serve",
            "--listen",
            ENGINE,
            "--seal-key-file",
            str(key_file),
            "--log-format",
            "json",
        ],
        "matchmaker": [
            str(BIN / "wargame-matchmaker"),
            "serve",
            "--listen",
            MATCHMAKER,
            "--redis-url",
            f"redis://127.0.0.1:{REDIS_PORT}/0",
            "--engine",
            ENGINE,
            "--secret-key-file",
            str(secret_file),
            "--log-format",
            "json",
        ],
    }
    env = {"WARGAME_ENGINE_METRICS_DIR": str(run_dir / "engine-metrics")}
    for part in PARTS:
        if part.name in running:
            continue
        pid = _spawn(run_dir, part, commands[part.name], env)
        healthy = (
            _wait_redis(REDIS_PORT, 15)
            if part.health == "redis"
            else _wait_grpc(addresses[part.name], part.health, 30)
        )
        if not healthy:
            stop(run_dir, quiet=True)
            raise StackError(
                f"the {part.name} did not start (pid {pid}); its log ends:\n{_tail(run_dir, part)}"
            )
        print(
            f"{part.name:<10} pid {pid:<7} {addresses[part.name]:<18} "
            f"log {run_dir / 'logs' / (part.name + '.log')}"
        )
    print("the local stack runs; `make stop` stops it")
    return 0


def stop(run_dir: Path, *, quiet: bool = False) -> int:
    """Stop the parts started from this run folder (matchmaker, engine, then Redis)."""
    stopped = []
    for part in reversed(PARTS):
        pid = running_pid(run_dir, part)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pid = None
            else:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and running_pid(run_dir, part) == pid:
                    time.sleep(0.1)
                if running_pid(run_dir, part) == pid:
                    os.killpg(pid, signal.SIGKILL)
                stopped.append(part.name)
        _pid_file(run_dir, part).unlink(missing_ok=True)
    if not quiet:
        print(f"stopped {', '.join(stopped)}" if stopped else "the local stack was not running")
    return 0


def status(run_dir: Path) -> int:
    """Print each part's pid, or that it is not running; exit 1 if any is down."""
    down = 0
    for part in PARTS:
        pid = running_pid(run_dir, part)
        print(f"{part.name:<10} {'pid ' + str(pid) if pid else 'not running'}")
        down += pid is None
    return 1 if down else 0


def main() -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("start", "stop", "status"))
    parser.add_argument("--run-dir", default="run", type=Path)
    args = parser.parse_args()
    run_dir = args.run_dir if args.run_dir.is_absolute() else ROOT / args.run_dir
    try:
        return {"start": start, "stop": stop, "status": status}[args.command](run_dir)
    except StackError as error:
        print(f"make {args.command}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
