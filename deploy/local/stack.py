"""The local stack: redis-server, the engine, the matchmaker and the web service, in the background.

    python deploy/local/stack.py start|stop|status|play-web [--run-dir run]
    python deploy/local/stack.py play GAME [--level 1-5] [--run-dir run]

Addresses come from the variables the services themselves read (README, "Configuration"):
WARGAME_ENGINE_LISTEN or WARGAME_ENGINE, WARGAME_MATCHMAKER_LISTEN or WARGAME_MATCHMAKER,
WARGAME_ENGINE_METRICS_LISTEN, WARGAME_MATCHMAKER_METRICS_LISTEN, WARGAME_WEB_LISTEN (the page,
http://127.0.0.1:8151/ by default) and WARGAME_REDIS_URL; a
WARGAME_REDIS_URL where a Redis already answers is used as it is, and no redis-server is
started. `start` checks every port before it starts anything, reports a process that dies
with its own error at once, and keeps what it started in the run folder: pid files, the
addresses (`stack.json`), logs, Redis's append-only file, the seal key, the caller key,
the matchmaker's secret key and the engine's metrics scratch. `status` and `stop` read them
back; `stop` ends exactly those processes (a pid is signalled only while its start time
matches). `play` starts the stack if needed and opens a game against the bot on it, at the
level asked (`make play LEVEL=1`..`5`), telling the client how to ask for another level
the same way; `play-web` starts it if needed and opens the page in a browser (or says its
link where there is none).

TLS comes from the services' own variables too: with WARGAME_ENGINE_TLS_CERT_FILE (and
_KEY_FILE) the engine serves TLS, with WARGAME_MATCHMAKER_TLS_CERT_FILE the matchmaker. The
stack then checks their health over TLS, the matchmaker calls the engine over TLS, and `play`
and the hint for other shells reach them with `grpcs://` addresses, each trusting
WARGAME_TLS_CA_FILE (the client's variable; else WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE, else
the system's CA certificates). A relative path in any WARGAME_*_FILE variable is taken from
the folder `make` runs in (the repository's root), not from the run folder the services run
in (`absolute_files`).

Only the standard library is needed, so `stop` and `status` work without the virtual
environment; the health checks import grpc when they run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Seconds a process that is still alive gets to answer its health check (a busy machine may
# need more: WARGAME_START_TIMEOUT).
HEALTH_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0  # seconds a process gets to stop on SIGTERM before it is killed
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class StackError(Exception):
    """A problem to report (a first line, then perhaps details and the way out)."""


# -- configuration -------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Where every part of the stack listens, and where the others reach it."""

    redis_url: str
    own_redis: bool  # the stack runs redis-server itself (else it uses the Redis at redis_url)
    engine_listen: str
    engine: str  # where the matchmaker and the CLI reach the engine
    engine_metrics: str  # host:port, or "off"
    matchmaker_listen: str
    matchmaker: str  # where the CLI reaches the matchmaker
    matchmaker_metrics: str
    web_listen: str = "127.0.0.1:8151"  # the web service: the page and the API for browsers
    engine_tls: bool = False  # the engine serves TLS (WARGAME_ENGINE_TLS_CERT_FILE)
    matchmaker_tls: bool = False
    tls_ca_file: str = ""  # the CA the stack and its clients trust ("": the system's)

    def client_address(self, name: str) -> str:
        """Where a client reaches the engine or the matchmaker: grpcs:// when it serves TLS."""
        address: str = getattr(self, name)
        return f"grpcs://{address}" if getattr(self, f"{name}_tls") else address

    def client_env(self) -> dict[str, str]:
        """The client's variables for this stack."""
        env = {
            "WARGAME_ENGINE": self.client_address("engine"),
            "WARGAME_MATCHMAKER": self.client_address("matchmaker"),
        }
        if self.tls_ca_file and (self.engine_tls or self.matchmaker_tls):
            env["WARGAME_TLS_CA_FILE"] = self.tls_ca_file
        return env

    @property
    def web(self) -> str:
        """Where a browser on this machine reaches the web service."""
        return _reachable(self.web_listen)

    @property
    def redis_address(self) -> str:
        """host:port of the Redis."""
        return urlsplit(self.redis_url).netloc.rpartition("@")[2]

    def listeners(self) -> Iterator[Listener]:
        """Every address the stack's own processes bind."""
        if self.own_redis:
            yield Listener("redis", "Redis", self.redis_address, "WARGAME_REDIS_URL")
        yield Listener("engine", "engine", self.engine_listen, "WARGAME_ENGINE_LISTEN")
        if self.engine_metrics != "off":
            yield Listener(
                "engine", "engine metrics", self.engine_metrics, "WARGAME_ENGINE_METRICS_LISTEN"
            )
        yield Listener(
            "matchmaker", "matchmaker", self.matchmaker_listen, "WARGAME_MATCHMAKER_LISTEN"
        )
        if self.matchmaker_metrics != "off":
            yield Listener(
                "matchmaker",
                "matchmaker metrics",
                self.matchmaker_metrics,
                "WARGAME_MATCHMAKER_METRICS_LISTEN",
            )
        yield Listener("web", "web", self.web_listen, "WARGAME_WEB_LISTEN")


@dataclass(frozen=True)
class Listener:
    """One address a part binds, and the variable that moves it."""

    part: str
    label: str
    address: str
    variable: str


DEFAULTS = {
    "WARGAME_REDIS_URL": "redis://127.0.0.1:6399/0",
    "WARGAME_ENGINE_LISTEN": "127.0.0.1:50051",
    "WARGAME_ENGINE_METRICS_LISTEN": "127.0.0.1:9151",
    "WARGAME_MATCHMAKER_LISTEN": "127.0.0.1:50052",
    "WARGAME_MATCHMAKER_METRICS_LISTEN": "127.0.0.1:9152",
    "WARGAME_WEB_LISTEN": "127.0.0.1:8151",
}


def host_port(text: str) -> tuple[str, int]:
    """Split "host:port" (IPv6 in brackets); StackError if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) <= 65535:
        raise StackError(f"{text!r} is not host:port (the local stack needs fixed ports)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _reachable(listen: str) -> str:
    """Where a client on this machine reaches a server listening on `listen`."""
    host, port = host_port(listen)
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _metrics(value: str) -> str:
    if value.strip().lower() in ("", "0", "off", "none"):
        return "off"
    host_port(value)
    return value


def _service(env: Mapping[str, str], name: str) -> tuple[str, str, set[str]]:
    """(listen, reach, variables set) of a gRPC service from WARGAME_<NAME>[_LISTEN]."""
    listen_var, reach_var = f"WARGAME_{name}_LISTEN", f"WARGAME_{name}"
    listen = env.get(listen_var) or env.get(reach_var) or DEFAULTS[listen_var]
    reach = env.get(reach_var) or _reachable(listen)
    if host_port(listen)[1] != host_port(reach)[1]:
        raise StackError(
            f"{reach_var}={reach} and {listen_var}={listen} name different ports: the local "
            f"stack's {name.lower()} is reached where it listens; set only one of them"
        )
    return listen, reach, {var for var in (listen_var, reach_var) if env.get(var)}


def absolute_files(env: Mapping[str, str], base: Path) -> dict[str, str]:
    """The WARGAME_*_FILE variables of `env` whose path is relative, made absolute from
    `base`: the services run in the run folder, the player typed the path from `base`."""
    return {
        name: os.path.abspath(base / value)
        for name, value in env.items()
        if name.startswith("WARGAME_") and name.endswith("_FILE") and value
        if not Path(value).is_absolute()
    }


def requested(env: Mapping[str, str]) -> tuple[Config, dict[str, str]]:
    """The configuration the environment asks for, and the fields it set (with their variable).

    Whether the stack runs its own Redis is settled later (`_settle_redis`).
    """
    engine_listen, engine, engine_vars = _service(env, "ENGINE")
    matchmaker_listen, matchmaker, matchmaker_vars = _service(env, "MATCHMAKER")
    web_listen = env.get("WARGAME_WEB_LISTEN") or DEFAULTS["WARGAME_WEB_LISTEN"]
    host_port(web_listen)
    config = Config(
        redis_url=env.get("WARGAME_REDIS_URL") or DEFAULTS["WARGAME_REDIS_URL"],
        own_redis=True,
        engine_listen=engine_listen,
        engine=engine,
        engine_metrics=_metrics(
            env.get("WARGAME_ENGINE_METRICS_LISTEN", DEFAULTS["WARGAME_ENGINE_METRICS_LISTEN"])
        ),
        matchmaker_listen=matchmaker_listen,
        matchmaker=matchmaker,
        matchmaker_metrics=_metrics(
            env.get(
                "WARGAME_MATCHMAKER_METRICS_LISTEN", DEFAULTS["WARGAME_MATCHMAKER_METRICS_LISTEN"]
            )
        ),
        engine_tls=bool(env.get("WARGAME_ENGINE_TLS_CERT_FILE")),
        matchmaker_tls=bool(env.get("WARGAME_MATCHMAKER_TLS_CERT_FILE")),
        tls_ca_file=env.get("WARGAME_TLS_CA_FILE")
        or env.get("WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE", ""),
        web_listen=web_listen,
    )
    chosen: dict[str, str] = {}
    if env.get("WARGAME_REDIS_URL"):
        chosen["redis_url"] = "WARGAME_REDIS_URL"
    for field, variables in (
        ("engine_listen", engine_vars),
        ("matchmaker_listen", matchmaker_vars),
        ("web_listen", {"WARGAME_WEB_LISTEN"} if env.get("WARGAME_WEB_LISTEN") else set()),
    ):
        if variables:
            chosen[field] = " and ".join(sorted(variables))
    for field, var in (
        ("engine_metrics", "WARGAME_ENGINE_METRICS_LISTEN"),
        ("matchmaker_metrics", "WARGAME_MATCHMAKER_METRICS_LISTEN"),
    ):
        if var in env:
            chosen[field] = var
    return config, chosen


def hide_password(url: str) -> str:
    """The URL with its password (if any) replaced by ***: what may be shown or stored."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{parts.netloc.rpartition('@')[2]}").geturl()


def _config_file(run_dir: Path) -> Path:
    return run_dir / "stack.json"


def save_config(run_dir: Path, config: Config) -> None:
    """Keep the configuration in the run folder (a Redis password is not kept)."""
    data = {**asdict(config), "redis_url": hide_password(config.redis_url)}
    _config_file(run_dir).write_text(json.dumps(data, indent=2) + "\n")


def saved_config(run_dir: Path, env: Mapping[str, str]) -> Config | None:
    """The configuration the stack in `run_dir` was started with, if it was.

    A Redis password comes back from WARGAME_REDIS_URL when that names the same Redis.
    """
    try:
        data = json.loads(_config_file(run_dir).read_text())
        # A stack started before the web service was a part has no web_listen: its default.
        config = Config(**{f.name: data[f.name] for f in fields(Config) if f.name in data})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    given = env.get("WARGAME_REDIS_URL", "")
    if given and hide_password(given) == config.redis_url:
        config = Config(**{**asdict(config), "redis_url": given})
    return config


# -- processes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One process of the stack."""

    name: str
    marker: str  # a word its command line must contain


PARTS = (
    Part("redis", "redis-server"),
    Part("engine", "wargame-engine"),
    Part("matchmaker", "wargame-matchmaker"),
    Part("web", "wargame-web"),
)


def _pid_file(run_dir: Path, part: Part) -> Path:
    return run_dir / f"{part.name}.pid"


def _log_file(run_dir: Path, part: Part) -> Path:
    return run_dir / "logs" / f"{part.name}.log"


def _command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def _start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot): a pid plus this is unique."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]


def running_pid(run_dir: Path, part: Part) -> int | None:
    """The pid of the part started from this run folder, if that very process still runs."""
    try:
        pid_text, _, started = _pid_file(run_dir, part).read_text().strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    if part.marker not in _command_line(pid):
        return None
    if started and _start_time(pid) != started:  # the pid was reused by another process
        return None
    return pid


@dataclass
class Started:
    """A process this call started, and where its log began."""

    part: Part
    process: subprocess.Popen[bytes]
    log_offset: int


def _spawn(run_dir: Path, part: Part, argv: list[str], env: Mapping[str, str]) -> Started:
    log_path = _log_file(run_dir, part)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        offset = log.tell()
        process = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=run_dir,
            start_new_session=True,  # its own process group: `stop` can end it whole
            env={**os.environ, **env},
        )
    _pid_file(run_dir, part).write_text(f"{process.pid} {_start_time(process.pid)}\n")
    return Started(part, process, offset)


# -- ports ---------------------------------------------------------------------------------


def port_busy(address: str) -> bool:
    """Whether `address` cannot be bound now."""
    host, port = host_port(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


@dataclass(frozen=True)
class Holder:
    """The process that has a port: listening on it, or using it for a connection of its own."""

    pid: int
    command: str
    folder: Path | None
    listening: bool

    @property
    def stack_folder(self) -> Path | None:
        """The run folder, when the holder is part of a local stack (started with cwd there)."""
        if self.folder and (_config_file(self.folder).exists() or any(self.folder.glob("*.pid"))):
            return self.folder
        return None

    def __str__(self) -> str:
        command = self.command if len(self.command) <= 90 else self.command[:87] + "..."
        if self.stack_folder:
            text = f"pid {self.pid} ({command}) of the local stack run from {self.folder}"
        else:
            text = f"pid {self.pid} ({command}" + (f", in {self.folder})" if self.folder else ")")
        if not self.listening:
            text += " for a connection of its own (the port is free again when that ends)"
        return text


def _fd_links(proc: Path) -> Iterator[str]:
    """What the open files of a process are ("socket:[inode]" for sockets); those we may see."""
    try:
        fds = list((proc / "fd").iterdir())
    except OSError:
        return
    for fd in fds:
        with contextlib.suppress(OSError):  # closed meanwhile
            yield os.readlink(fd)


def port_holder(port: int) -> Holder | None:
    """The process that has `port`, if /proc shows it (Linux, and a process we may see).

    A listener first; else a process whose own connection happens to use the port (the kernel
    hands out ports from a range that contains 50051 and 50052).
    """
    sockets: dict[str, bool] = {}  # "socket:[inode]" -> listening
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            columns = row.split()
            local, state, inode = columns[1], columns[3], columns[9]
            if int(local.rpartition(":")[2], 16) == port and inode != "0":
                sockets[f"socket:[{inode}]"] = state == "0A"
    found: list[Holder] = []
    for proc in Path("/proc").iterdir() if sockets else ():
        if not proc.name.isdigit():
            continue
        held = [sockets[link] for link in _fd_links(proc) if link in sockets]
        if held:
            pid = int(proc.name)
            try:
                folder: Path | None = Path(os.readlink(proc / "cwd"))
            except OSError:
                folder = None
            found.append(Holder(pid, _command_line(pid), folder, any(held)))
    return max(found, key=lambda holder: holder.listening, default=None)


def _way_out(listener: Listener) -> str:
    """Who holds the listener's port, and what to do about it."""
    holder = port_holder(host_port(listener.address)[1])
    text = f"it is held by {holder}" if holder else "another program holds it"
    if holder and holder.stack_folder:
        text += f" (`make stop RUN_DIR={holder.stack_folder}` stops that stack)"
    if listener.variable == "WARGAME_REDIS_URL":
        return f"{text}; or set WARGAME_REDIS_URL to another port, or to a Redis to use"
    off = " or off" if "METRICS" in listener.variable else ""
    return f"{text}; or set {listener.variable} to a free host:port{off}"


def check_ports(listeners: list[Listener]) -> None:
    """Refuse, naming every problem at once, if two parts share a port or a port is taken."""
    problems = []
    seen: dict[int, Listener] = {}
    for listener in listeners:
        port = host_port(listener.address)[1]
        if port in seen:
            problems.append(
                f"the {seen[port].label} and the {listener.label} both ask for port {port}: "
                f"set {listener.variable} to another address"
            )
        seen[port] = listener
    for listener in listeners:
        if port_busy(listener.address):
            problems.append(
                f"the {listener.label} cannot listen on {listener.address}, which is in use: "
                + _way_out(listener)
            )
    if problems:
        raise StackError(
            "cannot start the local stack; nothing was started:\n"
            + "\n".join(f"  - {problem}" for problem in problems)
        )


def _redis_reply(url: str) -> bytes:
    """What answers PING at a redis:// URL (b"" if nothing does)."""
    parts = urlsplit(url)
    try:
        with socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or 6379), timeout=1
        ) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64)
    except OSError:
        return b""


def _redis_answers(url: str) -> bool:
    """Whether a Redis is there (one that wants a password, or is loading, counts)."""
    return _redis_reply(url).startswith((b"+PONG", b"-NOAUTH", b"-LOADING", b"-ERR"))


def _settle_redis(config: Config, chosen: Mapping[str, str]) -> Config:
    """Use a Redis that WARGAME_REDIS_URL names when one answers there; else start our own."""
    parts = urlsplit(config.redis_url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise StackError(
            f"WARGAME_REDIS_URL={hide_password(config.redis_url)} is not a redis:// URL"
        )
    if "redis_url" not in chosen:
        return config
    local = parts.scheme == "redis" and parts.hostname in LOOPBACK and not parts.password
    if not local or _redis_answers(config.redis_url):
        return Config(**{**asdict(config), "own_redis": False})
    return config


# -- waiting -------------------------------------------------------------------------------


def _grpc_ready(address: str, service: str, tls: bool, ca_file: str) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    options = [("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 300)]
    if tls:
        roots = Path(ca_file).read_bytes() if ca_file else None
        opened = grpc.secure_channel(address, grpc.ssl_channel_credentials(roots), options)
    else:
        opened = grpc.insecure_channel(address, options=options)
    with opened as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=1
            )
        except grpc.RpcError:
            return False
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _http_ready(address: str) -> bool:
    import http.client

    host, port = host_port(address)
    connection = http.client.HTTPConnection(host, port, timeout=1)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def _ready(part: Part, config: Config) -> bool:
    if part.name == "redis":
        return _redis_reply(config.redis_url).startswith(b"+PONG")
    if part.name == "engine":
        return _grpc_ready(
            config.engine, "wargame.v1.RulesEngine", config.engine_tls, config.tls_ca_file
        )
    if part.name == "web":
        return _http_ready(config.web)
    return _grpc_ready(
        config.matchmaker, "wargame.v1.Matchmaker", config.matchmaker_tls, config.tls_ca_file
    )


def _readable(line: str) -> str:
    """A log line as a person reads it: JSON lines become "event key=value ..."."""
    try:
        record = json.loads(line)
    except ValueError:
        return line.strip()
    if not isinstance(record, dict):
        return line.strip()
    event = record.pop("event", "")
    for key in ("timestamp", "level", "component"):
        record.pop(key, None)
    return " ".join([str(event), *(f"{key}={value}" for key, value in record.items())])


TROUBLE = re.compile(r"\b(error|fatal|failed|could not|cannot|traceback|aborting)\b", re.I)


def _is_trouble(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return bool(TROUBLE.search(line)) and "overcommit" not in line  # a harmless Redis note
    if isinstance(record, dict):
        return record.get("level") in ("error", "critical", "exception")
    return False


def relevant_log(started: Started, run_dir: Path, limit: int = 6) -> list[str]:
    """What the process wrote since it started, from its first error on (else its last lines).

    Lines before the first error ("engine serving", "Redis is starting") would read like
    success, so they are left out.
    """
    with _log_file(run_dir, started.part).open("rb") as log:
        log.seek(started.log_offset)
        text = log.read().decode(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    first = next((n for n, line in enumerate(lines) if _is_trouble(line)), None)
    shown = lines[-limit:] if first is None else lines[first:]
    if len(shown) > limit:
        shown = [*shown[: limit - 2], "...", shown[-1]]
    return [_readable(line) for line in shown]


def start_timeout() -> float:
    """Seconds a part may take to answer at start: WARGAME_START_TIMEOUT, else 30."""
    text = os.environ.get("WARGAME_START_TIMEOUT", "").strip()
    try:
        seconds = float(text) if text else HEALTH_TIMEOUT
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise StackError(f"WARGAME_START_TIMEOUT={text!r} is not a number of seconds above 0")
    return seconds


def _failure(started: Started, run_dir: Path, config: Config, what: str) -> StackError:
    """The error for a part that did not start: its own words, and the way out."""
    said = "\n".join(f"    {line}" for line in relevant_log(started, run_dir)) or "    (nothing)"
    if started.process.poll() is None:  # alive but slow: its own ports are no one else's fault
        ways = [
            "a busy machine may need longer: set WARGAME_START_TIMEOUT=120 (seconds) and "
            "run it again"
        ]
    else:
        ways = [
            _way_out(listener)
            for listener in config.listeners()
            if listener.part == started.part.name and port_busy(listener.address)
        ]
    log = _log_file(run_dir, started.part)
    return StackError(
        f"the {started.part.name} {what}; its log ({log}) says:\n{said}"
        + "".join(f"\n  way out: {way}" for way in ways)
    )


def wait_ready(batch: list[Started], run_dir: Path, config: Config, timeout: float) -> None:
    """Wait until every process answers within `timeout` seconds; a process that exits is
    reported at once. An answer counts only when it came by the deadline: on a busy machine
    one look may outlast the timeout (the first imports gRPC), and a part first seen
    answering after the deadline did not answer within the timeout."""
    waiting = list(batch)
    deadline = time.monotonic() + timeout
    while waiting:
        for started in list(waiting):
            code = started.process.poll()
            if code is not None:
                raise _failure(started, run_dir, config, f"exited at start (status {code})")
            if _ready(started.part, config) and time.monotonic() <= deadline:
                waiting.remove(started)
        if waiting and time.monotonic() > deadline:
            raise _failure(waiting[0], run_dir, config, f"did not answer within {timeout:g} s")
        if waiting:
            time.sleep(0.05)


# -- commands ------------------------------------------------------------------------------


def _commands(
    run_dir: Path, config: Config, redis_server: str, environ: Mapping[str, str]
) -> dict[str, list[str]]:
    redis_host, redis_port = host_port(config.redis_address)
    key_file = environ.get("WARGAME_ENGINE_SEAL_KEY_FILE") or str(run_dir / "seal.key")
    secret_file = environ.get("WARGAME_MATCHMAKER_SECRET_KEY_FILE") or str(
        run_dir / "matchmaker-secret.key"
    )
    # The caller key: the bots' searches get pool processes of their own (README).
    caller_file = (
        environ.get("WARGAME_ENGINE_CALLER_KEY_FILE")
        or environ.get("WARGAME_MATCHMAKER_ENGINE_CALLER_KEY_FILE")
        or str(run_dir / "caller.key")
    )
    return {
        "redis": [
            redis_server,
            "--port", str(redis_port),
            "--bind", "::1" if redis_host == "::1" else "127.0.0.1",
            "--dir", str(run_dir / "redis"),
            "--appendonly", "yes",
            "--save", "",
            "--protected-mode", "yes",
        ],
        "engine": [
            str(BIN / "wargame-engine"), "serve",
            "--listen", config.engine_listen,
            "--metrics-listen", config.engine_metrics,
            "--seal-key-file", key_file,
            "--caller-key-file", caller_file,
            "--log-format", "json",
        ],
        "matchmaker": [
            str(BIN / "wargame-matchmaker"), "serve",
            "--listen", config.matchmaker_listen,
            "--metrics-listen", config.matchmaker_metrics,
            "--redis-url", config.redis_url,
            "--engine", config.engine,
            "--secret-key-file", secret_file,
            "--engine-caller-key-file", caller_file,
            "--log-format", "json",
            *(["--engine-tls"] if config.engine_tls else []),
            *(["--engine-tls-ca-file", config.tls_ca_file]
              if config.engine_tls and config.tls_ca_file else []),
        ],
        "web": [
            str(BIN / "wargame-web"), "serve",
            "--listen", config.web_listen,
            "--matchmaker", config.matchmaker,
            "--engine", config.engine,
            "--metrics-listen", "off",
            "--log-format", "json",
            *(["--matchmaker-tls"] if config.matchmaker_tls else []),
            *(["--engine-tls"] if config.engine_tls else []),
            *[flag
              for backend in ("matchmaker", "engine") if getattr(config, f"{backend}_tls")
              and config.tls_ca_file
              for flag in (f"--{backend}-tls-ca-file", config.tls_ca_file)],
        ],
    }  # fmt: skip


def _summary(run_dir: Path, config: Config) -> list[str]:
    """One line per part: where it listens, its pid (or that it is not running)."""
    lines = []
    for part in PARTS:
        if part.name == "redis":
            address, extra = config.redis_address, ""
        elif part.name == "web":
            address, extra = config.web, f"http://{config.web}/"
        else:
            address = getattr(config, part.name)
            extra = f"metrics {getattr(config, part.name + '_metrics')}"
        pid = running_pid(run_dir, part)
        state = f"pid {pid}" if pid else "not running"
        if part.name == "redis" and not config.own_redis:
            state = "external"
        lines.append(f"  {part.name:<11}{address:<18} {state:<12} {extra}".rstrip())
    return lines


def make_command(target: str, run_dir: Path) -> str:
    """`make stop` for the stack of the default run folder, `make stop RUN_DIR=...` for one
    started from another (plain `make stop` would act on the default stack instead)."""
    if run_dir == (ROOT / "run").resolve():
        return f"make {target}"
    return f"make {target} RUN_DIR={run_dir}"


def _client_hint(config: Config) -> str:
    defaults = {
        "WARGAME_ENGINE": "127.0.0.1:50051",
        "WARGAME_MATCHMAKER": "127.0.0.1:50052",
        "WARGAME_TLS_CA_FILE": "",
    }
    moved = [
        f"{name}={value}" for name, value in config.client_env().items() if value != defaults[name]
    ]
    return f"\n`wargame` in another shell finds it with: export {' '.join(moved)}" if moved else ""


def resolve(run_dir: Path, env: Mapping[str, str]) -> tuple[Config, list[Part]]:
    """The stack's configuration, and the parts that are to be started.

    While some part runs, the configuration is the one it was started with; a variable that
    asks for something else is refused rather than ignored.
    """
    config, chosen = requested(env)
    running = [part for part in PARTS if running_pid(run_dir, part)]
    saved = saved_config(run_dir, env)
    if running and saved is not None:
        for field, variable in chosen.items():
            now, asked = (hide_password(getattr(c, field)) for c in (saved, config))
            if now != asked:
                raise StackError(
                    f"the local stack in {run_dir} already runs with {field.replace('_', ' ')} "
                    f"{now}, but {variable} asks for {asked}: "
                    f"`{make_command('stop', run_dir)}` it first"
                )
        config = saved
    else:
        config = _settle_redis(config, chosen)
    needed = [
        part for part in PARTS if part not in running and (part.name != "redis" or config.own_redis)
    ]
    return config, needed


def start(run_dir: Path) -> Config:
    """Start the parts that are not running; returns the stack's configuration."""
    run_dir.mkdir(parents=True, exist_ok=True)
    files = absolute_files(os.environ, Path.cwd())
    config, needed = resolve(run_dir, {**os.environ, **files})
    if not needed:
        print(f"the local stack already runs ({run_dir}):")
        print("\n".join(_summary(run_dir, config)) + _client_hint(config))
        return config
    names = [part.name for part in needed]
    redis_server = shutil.which("redis-server") or ""
    if "redis" in names and not redis_server:
        raise StackError("redis-server is not installed: run `make setup`")
    if "matchmaker" in names and ":***@" in config.redis_url:
        raise StackError(
            "the run folder does not keep the Redis password: set WARGAME_REDIS_URL again"
        )
    check_ports([listener for listener in config.listeners() if listener.part in names])
    timeout = start_timeout()

    save_config(run_dir, config)
    for path in (run_dir / "seal.key", run_dir / "matchmaker-secret.key", run_dir / "caller.key"):
        if not path.exists():
            path.write_text(secrets.token_hex(32) + "\n")
            path.chmod(0o600)
    (run_dir / "redis").mkdir(exist_ok=True)
    commands = _commands(run_dir, config, redis_server, {**os.environ, **files})
    env = {**files, "WARGAME_ENGINE_METRICS_DIR": str(run_dir / "engine-metrics")}
    print(f"starting the local stack ({', '.join(names)})")
    started: list[Started] = []
    try:
        # Redis and the engine start side by side; the matchmaker needs both.
        for batch in (("redis", "engine"), ("matchmaker", "web")):
            spawned = [
                _spawn(run_dir, part, commands[part.name], env)
                for part in needed
                if part.name in batch
            ]
            started += spawned
            wait_ready(spawned, run_dir, config, timeout)
    except BaseException:
        for item in reversed(started):
            _stop_part(run_dir, item.part)
        if not any(running_pid(run_dir, part) for part in PARTS):
            _config_file(run_dir).unlink(missing_ok=True)
        raise
    print(f"the local stack runs ({run_dir}):")
    print("\n".join(_summary(run_dir, config)))
    stop_it = make_command("stop", run_dir)
    print(f"logs in {run_dir / 'logs'}; `{stop_it}` stops it" + _client_hint(config))
    print(f"play in a browser: http://{config.web}/")
    return config


def _stop_part(run_dir: Path, part: Part) -> bool:
    """Stop one part (SIGTERM, then SIGKILL for what is left of its process group).

    True if it was running.
    """
    pid = running_pid(run_dir, part)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.05)
            os.killpg(pid, signal.SIGKILL)  # a leader that hung, or workers it left behind
    _pid_file(run_dir, part).unlink(missing_ok=True)
    return pid is not None


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status


def stop(run_dir: Path) -> int:
    """Stop the parts started from this run folder (matchmaker, engine, then Redis)."""
    stopped = [part.name for part in reversed(PARTS) if _stop_part(run_dir, part)]
    left = [part.name for part in PARTS if running_pid(run_dir, part)]
    if left:
        raise StackError(f"could not stop {', '.join(left)}")
    _config_file(run_dir).unlink(missing_ok=True)
    print(f"stopped {', '.join(stopped)}" if stopped else "the local stack was not running")
    return 0


NOT_RUNNING = 3  # `status` exit code when a part is down (as service managers use it)


def status(run_dir: Path) -> int:
    """Print each part's address and pid; exit NOT_RUNNING unless every part runs."""
    config = saved_config(run_dir, os.environ)
    if config is None:
        run_it = make_command("run", run_dir)
        print(f"the local stack is not running ({run_dir}); `{run_it}` starts it")
        return NOT_RUNNING
    lines = _summary(run_dir, config)
    down = [line for line in lines if "not running" in line]
    if not down:
        print(f"the local stack runs ({run_dir}):")
    else:
        partly = any(" pid " in line for line in lines)
        print(f"the local stack {'is partly down' if partly else 'stopped'} ({run_dir}):")
    print("\n".join(lines))
    if down:
        run_it = make_command("run", run_dir)
        print(f"its logs are in {run_dir / 'logs'}; `{run_it}` starts what is missing")
    return NOT_RUNNING if down else 0


BOT_LEVELS = range(1, 6)  # the bot's levels: 1 (a beginner can beat it) to 5 (the strongest)


def bot_level(text: str) -> int:
    """`make play`'s LEVEL: a level of the bot, 0 (the matchmaker's) when empty."""
    if not text.strip():
        return 0
    if text.strip() not in {str(level) for level in BOT_LEVELS}:
        raise StackError(
            f"LEVEL={text} is no level of the bot: 1 (the easiest) to 5 (the strongest)"
        )
    return int(text)


def play(run_dir: Path, game: str, level: int = 0) -> int:
    """Start the stack if needed, then run `wargame play GAME --vs bot [--level N]` on its
    addresses, and say what is left running when it ends (Ctrl-C too); the client's hint
    for another level is this command with another LEVEL."""
    config = start(run_dir)
    sys.stdout.flush()
    again = make_command("play", run_dir) + ("" if game == "war" else f" GAME={game}")
    env = {
        **os.environ,
        **config.client_env(),
        "WARGAME_LEVEL_COMMAND": again + " LEVEL={level}",
    }
    wargame = str(BIN / "wargame")
    levels = ["--level", str(level)] if level else []
    # Ctrl-C is the game's (the client's own handling, at its default there); this process
    # outlives it to say what is left running.
    previous = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        code = subprocess.call([wargame, "play", game, "--vs", "bot", *levels], env=env)
    finally:
        signal.signal(signal.SIGINT, previous)
    running = [part.name for part in PARTS if running_pid(run_dir, part)]
    if running:
        stop_it = make_command("stop", run_dir)
        print(
            f"the local stack still runs ({', '.join(running)}) for the next game and for "
            f"`wargame` in other shells; `{stop_it}` stops it"
        )
    return 0 if code == 130 else code  # leaving with Ctrl-C is no failure of make


def play_web(run_dir: Path) -> int:
    """Start the stack if needed, then open the page (its link is printed either way)."""
    import webbrowser

    config = start(run_dir)
    link = f"http://{config.web}/"
    opened = webbrowser.open(link)
    print(f"opened {link} in a browser" if opened else f"open {link} in a browser")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=("start", "stop", "status", "play", "play-web"))
    parser.add_argument("game", nargs="?", default="war", help="the game `play` opens")
    parser.add_argument("--level", default="", help="the bot's level for `play`, 1 to 5")
    parser.add_argument("--run-dir", default="run", type=Path)
    args = parser.parse_args(argv)
    run_dir: Path = args.run_dir if args.run_dir.is_absolute() else ROOT / args.run_dir
    run_dir = run_dir.resolve()
    try:
        if args.command == "start":
            start(run_dir)
            return 0
        if args.command == "play":
            return play(run_dir, args.game, bot_level(args.level))
        if args.command == "play-web":
            return play_web(run_dir)
        return {"stop": stop, "status": status}[args.command](run_dir)
    except StackError as error:
        print(
            f"make {'run' if args.command == 'start' else args.command}: {error}", file=sys.stderr
        )
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
