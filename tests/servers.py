"""Real servers for tests: redis-server on a free port, gRPC services in-process or as processes.

No mocks: tests talk to a real `redis-server` and to real gRPC servers on loopback.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
# How long a service's process may take to start and answer its health check: a bound for a
# machine busy with other test runs (three `make test` beside a hog started an engine in over
# 30 s), not an expectation.
START_TIMEOUT = 90.0
T = TypeVar("T")


@contextlib.contextmanager
def stopping(stop: Callable[[T], object]) -> Iterator[list[T]]:
    """A list for the servers a test starts; each is stopped by `stop` at the end, in order."""
    started: list[T] = []
    try:
        yield started
    finally:
        for server in started:
            stop(server)


def free_port() -> int:
    """A TCP port free on loopback right now, and kept for this test process (see below)."""
    return free_ports(1)[0]


# The ports the services listen on by default: never picked for a test.
DEFAULT_PORTS = frozenset({50051, 50052, 6399, 9151, 9152, 8151, 9153})
# Picked ports lie below the kernel's range for port 0 and for the source ports of outgoing
# connections: between a test picking a port and its server binding it (seconds, for a stack
# started on a busy machine), no connection of any program can be given that port. Test
# processes running at once (xdist workers, other clones) keep out of each other's picks by
# a lock on a file named after the port, held until the process ends (the kernel lets it go
# then, however the process ends).
PORTS_LOCKED = Path(tempfile.gettempdir()) / "wargame-test-ports"
_ports_held: list[int] = []  # the lock files' descriptors, open for the process's life
_pick = random.SystemRandom()


def _pickable_ports() -> range:
    """Ports from 10000 up to the kernel's range for port 0 (or 32768 where it is unknown)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(10000, max(low, 20000))


def free_ports(count: int) -> list[int]:
    """`count` different TCP ports, all free on loopback right now, none a default port,
    none given to another test process (nor to this one before) while it runs."""
    PORTS_LOCKED.mkdir(exist_ok=True)
    pickable = _pickable_ports()
    chosen: list[int] = []
    for _ in range(len(pickable)):
        if len(chosen) == count:
            return chosen
        port = _pick.choice(pickable)
        if port in DEFAULT_PORTS or port in chosen or not _lock_port(port):
            continue
        if _bindable(port):
            chosen.append(port)
    raise RuntimeError(f"no {count} free ports left in {pickable}")


def _lock_port(port: int) -> bool:
    """Take the port's lock for this process (False: held by another, or taken before)."""
    descriptor = os.open(PORTS_LOCKED / str(port), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return False
    _ports_held.append(descriptor)
    return True


def _bindable(port: int) -> bool:
    """Whether a listener could bind the port on every address now (nothing holds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def busy_port() -> Iterator[int]:
    """A loopback port another socket listens on while the block runs (never a default
    port): a server told to listen there finds it taken."""
    while True:
        holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        holder.bind(("127.0.0.1", 0))
        port = int(holder.getsockname()[1])
        if port not in DEFAULT_PORTS:
            break
        holder.close()  # the kernel's pick may be a default port: pick again
    with holder:
        holder.listen()
        yield port


def reserve_port() -> socket.socket:
    """A loopback port held without listening: connecting is refused and binding fails.

    Keep the socket open as long as the port must stay reserved.
    """
    for _ in range(5):
        holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            holder.bind(("127.0.0.1", free_port()))  # no SO_REUSEADDR: nobody else may bind it
        except OSError:  # taken since it was found free: try another
            holder.close()
            continue
        return holder
    raise RuntimeError("could not reserve a loopback port")


def user_environment() -> dict[str, str]:
    """This process's environment as a user's shell has it, to run `make` as a user does.

    Without the WARGAME_ variables tests/conftest.py sets, and without those of the `make`
    (`make test`) this run may be a part of.
    """
    inner = ("WARGAME_", "MAKE", "MFLAGS")
    return {name: value for name, value in os.environ.items() if not name.startswith(inner)}


def local_stack_variables(tmp_path: Path) -> dict[str, str]:
    """What `make run` / `make play` read, for a stack of a test's own.

    The README's variables on free ports, and a run folder, a temporary folder and a home
    (`make run` links the commands into ~/.local/bin) under `tmp_path`.
    """
    engine, matchmaker, engine_metrics, matchmaker_metrics, redis_port, web = free_ports(6)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {
        "WARGAME_ENGINE_LISTEN": f"127.0.0.1:{engine}",
        "WARGAME_MATCHMAKER_LISTEN": f"127.0.0.1:{matchmaker}",
        "WARGAME_ENGINE_METRICS_LISTEN": f"127.0.0.1:{engine_metrics}",
        "WARGAME_MATCHMAKER_METRICS_LISTEN": f"127.0.0.1:{matchmaker_metrics}",
        "WARGAME_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "WARGAME_WEB_LISTEN": f"127.0.0.1:{web}",
        "RUN_DIR": str(tmp_path / "run"),
        "TMPDIR": str(tmp_path / "tmp"),
        "HOME": str(tmp_path / "home"),
        "WARGAME_START_TIMEOUT": "180",  # a test run may share the machine with others
    }


def wait_healthy(address: str, service: str = "", timeout: float = 120.0) -> None:
    """Block until the gRPC health check of `service` at `address` answers SERVING."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
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
    directory: Path,
    port: int | None = None,
    extra: Sequence[str] = (),
    *,
    tls: bool = False,
    password: str = "",
) -> RedisServer:
    """Start redis-server on a free loopback port (no persistence) and wait until it answers
    (`extra`: more redis-server arguments; `tls`: `extra` makes it listen with TLS on the
    port, so readiness is only its port accepting connections); with a `password`, clients
    must authenticate."""
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
                # A replica's first sync starts at once, not after diskless replication's
                # default 5 s wait for more replicas to share it.
                "--repl-diskless-sync-delay",
                "0",
                *(["--requirepass", password] if password else []),
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
                    hello = f"AUTH {password}\r\nPING\r\n" if password else "PING\r\n"
                    conn.sendall(hello.encode())
                    reply = b""
                    while b"\r\n" not in reply.removeprefix(b"+OK\r\n"):
                        reply += conn.recv(64) or b"-closed\r\n"
                    if b"+PONG" in reply:
                        return RedisServer(chosen, directory, process)
            except OSError:
                pass
            time.sleep(0.02)
        process.kill()
        process.wait()
        if port:
            break
    raise RuntimeError("could not start redis-server")


def matchmaker_key_env(directory: Path) -> dict[str, str]:
    """WARGAME_MATCHMAKER_SECRET_KEY_FILE naming a fresh secret key file in `directory`."""
    path = directory / "matchmaker-secret.key"
    if not path.exists():
        path.write_text(secrets.token_hex(32) + "\n")
        path.chmod(0o600)
    return {"WARGAME_MATCHMAKER_SECRET_KEY_FILE": str(path)}


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


def _children(pid: int) -> list[int]:
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def listening_sockets(port: int) -> set[str]:
    """The sockets listening on `port`, named as a process's descriptors name them
    ("socket:[<inode>]")."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            columns = row.split()
            if columns[3] == "0A" and int(columns[1].rpartition(":")[2], 16) == port:
                sockets.add(f"socket:[{columns[9]}]")
    return sockets


def held_sockets(pid: int) -> set[str]:
    """The sockets process `pid` holds open (none once it is gone)."""
    held = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # closed meanwhile
                if (target := os.readlink(fd)).startswith("socket:["):
                    held.add(target)
    return held


def listens(pid: int, port: int) -> bool:
    """Whether process `pid` (or a child of it, an engine worker) listens on `port`."""
    sockets = listening_sockets(port)
    return any(held_sockets(owner) & sockets for owner in (pid, *_children(pid)))


def _serving_itself(handle: ServiceProcess, port: int, service: str, timeout: float) -> bool:
    """Wait until the process serves `service` on `port` itself; False if it exits first.

    Only the process's own socket counts: a server another program started meanwhile on a
    port found free a moment ago may answer health checks there too.
    """
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(handle.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline and handle.process.poll() is None:
            try:
                # A busy machine may take seconds to answer a process just started.
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                if reply.status == health_pb2.HealthCheckResponse.SERVING and listens(
                    handle.process.pid, port
                ):
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    return False


def spawn(
    argv: list[str], address: str, log_path: Path, env: dict[str, str] | None = None
) -> ServiceProcess:
    """A service's process started from the repository's root (`argv`, to listen on
    `address`), its JSON logs appended to `log_path`; not yet waited for."""
    with log_path.open("ab") as out:
        process = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "WARGAME_LOG_FORMAT": "json", **(env or {})},
        )
    return ServiceProcess(address, process, log_path, argv)


def start_service(
    module: str,
    args: Sequence[str],
    *,
    log_path: Path,
    service: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    timeout: float = START_TIMEOUT,
) -> ServiceProcess:
    """Start `python -m module serve --listen 127.0.0.1:<port> args...` and wait until healthy
    (at most `timeout` seconds: a bound for a machine busy with other test runs).

    Without a given port it takes a free one, and another if that was taken before the process
    could bind it.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if module == "matchmaker.main" and "--secret-key-file" not in args:
        env = {**matchmaker_key_env(log_path.parent), **(env or {})}
    for _ in range(1 if port else 5):
        chosen = port or free_port()
        address = f"127.0.0.1:{chosen}"
        argv = [sys.executable, "-m", module, "serve", "--listen", address, *args]
        handle = spawn(argv, address, log_path, env)
        if _serving_itself(handle, chosen, service, timeout):
            return handle
        handle.kill()
        if f"cannot listen on {address}" not in handle.log():
            break  # a real failure, not a port lost to another program
    raise RuntimeError(f"{module} did not start: {handle.log()[-2000:]}")


ENGINE_SERVICE = "wargame.v1.RulesEngine"


def engine_command(address: str, *flags: str, workers: int = 1, metrics: str = "off") -> list[str]:
    """The command line of a `wargame-engine` serving on `address` with `workers` workers,
    metrics on `metrics` (off by default) and `flags`, for a test that starts it itself."""
    return [
        sys.executable, "-m", "engine_service.main", "serve", "--listen", address,
        "--workers", str(workers), "--metrics-listen", metrics, *flags,
    ]  # fmt: skip


def start_engine(
    directory: Path,
    *flags: str,
    name: str = "engine",
    workers: int = 1,
    metrics: str = "off",
    port: int | None = None,
    timeout: float = START_TIMEOUT,
) -> ServiceProcess:
    """A real `wargame-engine` process with `workers` workers, metrics served on `metrics`
    (off by default) and `flags`, on a free port unless `port`; its log `name`.log in
    `directory` (see `start_service` for `timeout`)."""
    return start_service(
        "engine_service.main",
        ["--workers", str(workers), "--metrics-listen", metrics, *flags],
        log_path=directory / f"{name}.log",
        service=ENGINE_SERVICE,
        port=port,
        timeout=timeout,
    )


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
    done = subprocess.run([binary, *args], check=False, capture_output=True, text=True, timeout=150)
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
    directory: Path, primaries: int = 3, replicas: int = 0, node_timeout_ms: int | None = None
) -> RedisClusterServers:
    """Start a Redis Cluster (`redis-cli --cluster create`) on free loopback ports and wait
    until it serves every slot (and its replicas are in sync).

    The node timeout is 2 s with replicas: a test waits for its failovers. Without replicas
    nothing can fail over, and a node that a busy machine keeps from answering its peers'
    pings for the timeout would only take the cluster down (CLUSTERDOWN, as a paired run of
    `make test` saw at 2 s): Redis's default of 15 s."""
    if node_timeout_ms is None:
        node_timeout_ms = 2000 if replicas else 15000
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
