"""One engine process per core: a small supervisor of worker processes sharing one port.

The rules are CPU-bound Python, so the engine scales with processes, not threads. The
supervisor checks the port is free, starts N workers that bind it with SO_REUSEPORT (the
kernel spreads connections among them), restarts a worker that dies, serves the workers'
merged Prometheus metrics, and on SIGTERM stops them gracefully.

The first workers are forked from the supervisor, which has loaded the rules and built the
rulesets once for all of them (while it still runs one thread): a worker starts with them.
A worker that dies is started afresh (a new interpreter), as the supervisor then runs the
thread of its metrics page.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from wargame.runtime.config import ConfigError

log = structlog.get_logger(component="engine-supervisor")

RESTART_WINDOW = 10.0  # seconds: a worker that dies this soon after starting counts as failing
MAX_QUICK_FAILURES = 3


class Forked:
    """A worker forked from the supervisor, waited for as `subprocess.Popen` waits."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Its exit code once it ended, else None."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Its exit code, waiting at most `timeout` seconds (TimeoutExpired after)."""
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while (code := self.poll()) is None:
            if timeout is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"engine worker {self.pid}", timeout)
            time.sleep(0.02)
        return code

    def send_signal(self, signum: int) -> None:
        """Signal it, unless it ended."""
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        """Kill it (SIGKILL)."""
        self.send_signal(signal.SIGKILL)


@dataclass
class Worker:
    """One worker process and its restart bookkeeping."""

    number: int
    process: subprocess.Popen[bytes] | Forked
    started: float = field(default_factory=time.monotonic)
    quick_failures: int = 0


def fork_worker(serve: Callable[[], int], env: dict[str, str]) -> Forked:
    """A worker forked from this process, running `serve()` with `env` added to its
    environment; it never returns to the supervisor's code."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return Forked(pid)
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT):  # as a new process has them
            signal.signal(signum, signal.SIG_DFL)
        os.environ.update(env)
        code = serve()
    except KeyboardInterrupt:
        code = 130
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:
        log.exception("engine worker failed")
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def supervise(
    worker_argv: Sequence[str],
    count: int,
    *,
    grace: float,
    metrics_address: tuple[str, int] | None,
    serve_forked: Callable[[], int] | None = None,
) -> int:
    """Run `count` workers (each `python -m engine_service.main <worker_argv>`) until SIGTERM.

    With `serve_forked` (what `main(worker_argv)` does), the first workers are forked from
    this process and run it; call it before this process starts any thread."""
    stop = threading.Event()
    with _metrics_directory() as metrics_dir:
        env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": metrics_dir}
        command = [sys.executable, "-m", "engine_service.main", *worker_argv]

        def spawn(number: int) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command, env={**env, "WARGAME_ENGINE_WORKER_NUMBER": str(number)}
            )

        def start(number: int) -> subprocess.Popen[bytes] | Forked:
            if serve_forked is None:
                return spawn(number)
            extra = {
                "PROMETHEUS_MULTIPROC_DIR": metrics_dir,
                "WARGAME_ENGINE_WORKER_NUMBER": str(number),
            }
            return fork_worker(serve_forked, extra)

        def handle(signum: int, _frame: object) -> None:
            log.info("stopping", signal=signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
        if metrics_address is not None and serve_forked is None:
            _serve_merged_metrics(metrics_address, metrics_dir)
        workers = [Worker(n, start(n)) for n in range(count)]
        if metrics_address is not None and serve_forked is not None:
            try:  # its thread starts once no more forks are to come
                _serve_merged_metrics(metrics_address, metrics_dir)
            except ConfigError:
                for worker in workers:
                    worker.process.kill()
                    worker.process.wait(30)
                raise
        log.info("engine workers started", workers=count, pids=[w.process.pid for w in workers])
        status = 0
        while not stop.wait(0.2):
            for worker in workers:
                code = worker.process.poll()
                if code is None:
                    continue
                quick = time.monotonic() - worker.started < RESTART_WINDOW
                worker.quick_failures = worker.quick_failures + 1 if quick else 0
                if worker.quick_failures >= MAX_QUICK_FAILURES:
                    log.error(
                        "worker keeps failing; giving up", worker=worker.number, exit_code=code
                    )
                    status = 1
                    stop.set()
                    break
                log.warning("worker exited; restarting", worker=worker.number, exit_code=code)
                worker.process = spawn(worker.number)
                worker.started = time.monotonic()
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace + 5
        for worker in workers:
            try:
                worker.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("worker did not stop in time; killing", worker=worker.number)
                worker.process.kill()
                worker.process.wait()
        log.info("engine stopped")
        return status


@contextlib.contextmanager
def _metrics_directory() -> Iterator[str]:
    """The workers' metrics folder: $WARGAME_ENGINE_METRICS_DIR (emptied), or a temporary one."""
    chosen = os.environ.get("WARGAME_ENGINE_METRICS_DIR")
    if not chosen:
        with tempfile.TemporaryDirectory(prefix="wargame-engine-metrics-") as folder:
            yield folder
        return
    shared = Path(chosen)
    shared.mkdir(parents=True, exist_ok=True)
    for stale in shared.glob("*.db"):  # counters of a previous run must not be merged in
        stale.unlink()
    yield str(shared)


def _serve_merged_metrics(address: tuple[str, int], metrics_dir: str) -> None:
    # prometheus_client reads PROMETHEUS_MULTIPROC_DIR at import: import it only now.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=metrics_dir)  # type: ignore[no-untyped-call]
    try:
        start_http_server(address[1], addr=address[0], registry=registry)
    except OSError as error:
        raise ConfigError(
            f"cannot serve metrics on {address[0]}:{address[1]}: {error.strerror or error}"
        ) from None
