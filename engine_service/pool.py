"""Expensive calls (searches, long record replays) in a bounded pool of low-priority processes.

Rules calls are cheap and are answered in the serving process's threads. A search or the
replay of a long record takes seconds of CPU: run in a thread of the serving process it
would hold the GIL against every cheap call. So each worker keeps a few processes of its
own for that work, forked by its spawner (`_Spawner`: a fork of the worker made while it
runs one thread, with the engine loaded and the rules built), and running at low priority
(nice `NICENESS`) so that the cheap calls keep their latency when the machine is busy: a
waking rules call preempts a niced search. Not Linux's SCHED_IDLE, which would yield every
core: on a machine saturated by other processes an idle search gets no CPU at all, and a
bot whose search never runs loses its game on time. The pool admits
at most `processes + queue` calls at once; any call beyond that is refused at once with
RESOURCE_EXHAUSTED (ENGINE_BUSY) and a RetryInfo saying when a process should be free. A
call whose caller goes away (cancelled, deadline passed) or that overruns its time limit
has its process killed and replaced by a fresh fork, so abandoned work holds neither CPU
nor memory. The limit counts the time the process ran or slept, not the time it waited
for a CPU (`_Process.overran`): on a machine saturated by other work a niced search is
starved, not overrunning, and it answers (cut short, by its own wall cap) once it runs.

`reserved` processes more are kept for calls of priority (the matchmaker's own, which
prove who they are: `engine_service.service`): a priority call takes a reserved process,
or any free one, and is admitted up to `reserved + queue` at once whatever the other calls
hold, so no flood of strangers' searches keeps a bot from moving.

The pool moves bytes: the servicer serializes a request, a process runs the work (see
`Work`) and sends back the serialized response or a refusal.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any, Protocol

import grpc
import structlog

from engine_service.handling import CallerGoneError, refusal_of
from engine_service.rules.errors import RuleError
from wargame.runtime.refusal import Code, Reason, Refusal

log = structlog.get_logger(component="engine-pool")

NICENESS = 10  # the pool's processes yield the CPU to the serving process (nice 0)
POLL_SECONDS = 0.05  # how often a waiting call looks whether its caller is still there
MIN_RETRY_SECONDS = 0.1


class Work(Protocol):
    """What a pool process runs: a job name, the request's bytes and a time budget."""

    def __call__(self, job: str, payload: bytes, seconds: float) -> bytes:
        """The response's bytes; raises RuleError or Refusal to refuse."""


WorkFactory = Callable[..., Work]


@dataclass(frozen=True)
class Job:
    """One call for the pool: what to run, on what, and how long it may take."""

    name: str
    payload: bytes
    seconds: float  # the work's own budget (a search stops by itself within it)
    limit: float  # the process is stopped after this many seconds, finished or not


class _Slot:
    """One pool process and the pipe to it; held by one call at a time."""

    def __init__(self, pool: Pool, number: int) -> None:
        self.pool = pool
        self.number = number
        self.process: _Process | None = None
        self.conn: Connection | None = None
        self.busy_until = 0.0  # monotonic time the current job should end (retry hints)
        self.job_seconds = 0.0  # how long the current job should take

    def start(self) -> None:
        """Fork a fresh process for this slot."""
        ours, theirs = socket.socketpair()
        try:
            self.process = self.pool.spawner.start(theirs)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())

    def stop(self) -> None:
        """Kill the process at once (SIGKILL: a search holds nothing worth saving)."""
        if self.conn is not None:
            self.conn.close()
        if self.process is not None:
            self.pool.spawner.end(self.process)

    def restart(self) -> None:
        """Replace the process by a fresh fork."""
        self.stop()
        self.start()

    def call(self, job: Job, context: grpc.ServicerContext, request_id: str) -> bytes:
        """Run `job` in this slot's process, stopping it if the caller leaves or it overruns."""
        assert self.conn is not None and self.process is not None
        started = time.monotonic()
        self.busy_until, self.job_seconds = started + job.seconds, job.seconds
        before = self.process.schedule()
        try:
            self.conn.send((job.name, job.payload, job.seconds, request_id))
            while not self.conn.poll(POLL_SECONDS):
                if not context.is_active():
                    self.restart()
                    raise CallerGoneError
                elapsed = time.monotonic() - started
                if elapsed > job.limit and self.process.overran(before, elapsed, job.limit):
                    self.restart()
                    raise Refusal(
                        Code.RESOURCE_EXHAUSTED,
                        Reason.ENGINE_BUSY,
                        f"the work took longer than its limit of {job.limit:g} s and was "
                        "stopped; retry later",
                        retry_after=self.pool.retry_hint(),
                    )
            answer = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            if self.pool.closed:  # stopped under the call, as the engine stops
                raise self.pool.stopping() from None
            self.restart()  # the process died (killed by the system, out of memory, a bug)
            raise RuntimeError("a pool process died during a call") from None
        finally:
            self.busy_until = 0.0
        kind, body = answer
        if kind == "ok":
            return bytes(body)
        if kind == "refused":
            raise _refusal_from(body)
        raise RuntimeError(f"a pool process failed: {body}")


class Pool:
    """A bounded pool of low-priority processes for expensive calls, with admission control.

    Each process calls `factory(*factory_args)` once for its `Work`; `preload` names the
    modules worth importing before forking (the games and their AI). Made while this process
    runs one thread (its spawner is forked then): a worker makes it before it serves.
    """

    def __init__(
        self,
        factory: WorkFactory,
        factory_args: Sequence[Any],
        *,
        processes: int,
        queue: int,
        reserved: int = 0,
        preload: Sequence[str] = (),
        log_format: str = "json",
        log_level: str = "info",
    ) -> None:
        if processes < 1 or queue < 0 or reserved < 0:
            raise ValueError(
                "a pool has at least one process, a queue of 0 or more, and 0 or more "
                "reserved processes"
            )
        self.factory = factory
        self.factory_args = tuple(factory_args)
        self.processes = processes
        self.queue = queue
        self.reserved = reserved
        self.logging = (log_format, log_level)
        # Imported once here, so that the spawner and each fork of it start with them loaded.
        for module in (factory.__module__, *preload):
            importlib.import_module(module)
        self.spawner = _Spawner(self)
        self._lock = threading.Condition()
        self._admitted = 0
        self._admitted_priority = 0
        self._slots = [_Slot(self, number) for number in range(processes + reserved)]
        self._free: list[_Slot] = []  # free processes anyone may take
        self._free_reserved: list[_Slot] = []  # free processes kept for calls of priority
        self._failure = ""  # why the processes could not start, if they could not
        self.closed = False  # `close`d: a call still running is told to go elsewhere
        # The processes start in the background: the worker serves rules calls meanwhile,
        # and expensive calls wait for them in the queue.
        self._starting = threading.Thread(target=self._start, name="pool-start", daemon=True)
        self._starting.start()

    def _start(self) -> None:
        for slot in self._slots:
            try:
                slot.start()
            except Exception as error:  # reported, and every waiting call told
                log.error("the pool's processes could not start", error=str(error))
                with self._lock:
                    self._failure = str(error)
                    self._lock.notify_all()
                return
            with self._lock:
                self._release(slot)

    def _release(self, slot: _Slot) -> None:
        """Give `slot` back to its free list and wake the waiting calls (the lock held)."""
        (self._free_reserved if slot.number >= self.processes else self._free).append(slot)
        self._lock.notify_all()

    @property
    def capacity(self) -> int:
        """Calls admitted at once: one per process, plus the queue (calls of priority
        besides: `priority_capacity`)."""
        return self.processes + self.queue

    @property
    def priority_capacity(self) -> int:
        """Calls of priority admitted at once: one per reserved process, plus the queue
        (none without reserved processes: such calls are then like any other)."""
        return self.reserved + self.queue if self.reserved else 0

    def threads(self) -> int:
        """Serving threads the calls admitted at once may hold while they wait or run."""
        return self.capacity + self.priority_capacity

    def retry_hint(self) -> float:
        """Seconds until a call sent now should find room (for RetryInfo): the first running
        job's end, plus the queued calls' share of the processes at the running jobs'
        average length."""
        now = time.monotonic()
        running = [slot for slot in self._slots if slot.busy_until]
        if not running:
            return MIN_RETRY_SECONDS
        first = min(slot.busy_until for slot in running) - now
        average = sum(slot.job_seconds for slot in running) / len(running)
        queued = max(0, self._admitted + self._admitted_priority - len(running))
        return round(max(MIN_RETRY_SECONDS, first + queued * average / self.processes), 3)

    def _busy(self) -> Refusal:
        """The refusal of a call that finds the pool full (the lock held)."""
        hint = self.retry_hint()
        return Refusal(
            Code.RESOURCE_EXHAUSTED,
            Reason.ENGINE_BUSY,
            f"the engine is busy with {self._admitted} searches or replays; retry in {hint:g} s",
            metadata={"retry_after_ms": str(max(1, round(hint * 1000)))},
            retry_after=hint,
        )

    def _full(self, priority: bool) -> bool:
        """Whether a call (of priority or not) finds no room to be admitted."""
        if priority and self.reserved:
            return self._admitted_priority >= self.priority_capacity
        return self._admitted >= self.capacity

    def refuse_when_full(self, priority: bool = False) -> None:
        """Raise the ENGINE_BUSY refusal now if the pool is full: asked before a call's
        request is serialized for the pool or its request id made, so that a flood of calls
        beyond the pool costs the serving process (and its rules calls) as little as can be.
        A call that passes may still be refused by `run`, which decides under the lock."""
        if self._full(priority):
            with self._lock:
                if self._full(priority):
                    raise self._busy()

    def run(
        self,
        job: Job,
        context: grpc.ServicerContext,
        request_id: str = "",
        *,
        priority: bool = False,
    ) -> bytes:
        """Admit `job`, wait for a free process, run it there; the response's bytes. A call
        of `priority` is admitted and served on the reserved share (module docstring).

        Raises Refusal (ENGINE_BUSY) when the pool is full, CallerGoneError when the caller
        leaves first, and whatever the work raised (as a Refusal) when it refuses.
        """
        priority = priority and self.reserved > 0
        with self._lock:
            if self._full(priority):
                raise self._busy()
            if priority:
                self._admitted_priority += 1
            else:
                self._admitted += 1
        try:
            slot = self._take(context, priority)
            try:
                # The budget counts from now: a call that waited has less of its deadline.
                job = replace(job, seconds=within_deadline(job.seconds, context))
                return slot.call(job, context, request_id)
            finally:
                with self._lock:
                    self._release(slot)
        finally:
            with self._lock:
                if priority:
                    self._admitted_priority -= 1
                else:
                    self._admitted -= 1

    def _take(self, context: grpc.ServicerContext, priority: bool) -> _Slot:
        """A free slot (of priority: a reserved one first, else any); waits in the queue
        while the caller is still there."""
        lists = (self._free_reserved, self._free) if priority else (self._free,)
        with self._lock:
            while not any(lists):
                if self.closed:
                    raise self.stopping()
                if self._failure:  # no process will come: fail at once, not at the deadline
                    raise RuntimeError(f"the pool's processes could not start: {self._failure}")
                self._lock.wait(POLL_SECONDS)
                if not any(lists) and not context.is_active():
                    raise CallerGoneError
            return next(free for free in lists if free).pop()

    def stopping(self) -> Refusal:
        """What a call meets once the pool is closed: the engine is stopping, another will
        answer (UNAVAILABLE, with a retry hint)."""
        return Refusal(
            Code.UNAVAILABLE,
            Reason.ENGINE_UNAVAILABLE,
            "the engine is stopping; retry",
            retry_after=MIN_RETRY_SECONDS,
        )

    def close(self) -> None:
        """Stop every process (a call still running is refused: `stopping`)."""
        self.closed = True
        self._starting.join()
        for slot in self._slots:
            slot.stop()
        self.spawner.close()


@dataclass(frozen=True)
class Schedule:
    """A process's time on a CPU and waiting for one, in s, and whether it is runnable."""

    ran: float
    waited: float
    runnable: bool


@dataclass(frozen=True)
class _Process:
    """A pool process, a child of the spawner."""

    pid: int

    def schedule(self) -> Schedule:
        """What the process's scheduler has counted so far (Linux's schedstat and state; all
        0 and not runnable where the system does not tell)."""
        try:
            with open(f"/proc/{self.pid}/schedstat", "rb") as stats:
                ran, waited = (int(field) / 1e9 for field in stats.read().split()[:2])
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError, ValueError):
            return Schedule(0.0, 0.0, runnable=False)
        return Schedule(ran, waited, runnable=state == b"R")

    def overran(self, before: Schedule, elapsed: float, limit: float) -> bool:
        """Whether the process ran or slept more than `limit` s in the `elapsed` s since
        `before`: the time it waited for a CPU does not count. Linux adds a wait to schedstat
        only once it ends, so a runnable process (on a CPU or waiting for one) overran when
        its time on a CPU did; one asleep, when the elapsed time less its waits did."""
        now = self.schedule()
        if now.runnable:
            return now.ran - before.ran > limit
        return elapsed - (now.waited - before.waited) > limit


class _Spawner:
    """Forks the pool's processes: a fork of the serving process made with the pool, while
    that still runs one thread, so a fork of it starts with the engine loaded and the rules
    built (a forkserver is a fresh interpreter that imports it all again, and each of its
    forks built the rules again: seconds of CPU before a fresh engine's first search).
    Neither fork uses gRPC, whose fork handlers are off (`no_grpc_fork_handlers`).

    The serving process asks it over a socket pair: "start" with the socket of the new
    process's pipe (the answer: its pid), "end" with a pid (killed and reaped: a pid is never
    reused while the pool may still signal it). The spawner ends with the serving process:
    its socket's other end closes, and it kills its processes and exits.
    """

    def __init__(self, pool: Pool) -> None:
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if not pid:
            ours.close()
            code = 1
            try:
                _spawn(theirs, pool.factory, pool.factory_args, pool.logging)
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        self.pid, self._socket = pid, ours

    def start(self, pipe: socket.socket) -> _Process:
        """A fresh process serving `pipe` (`_serve`)."""
        with self._lock:
            socket.send_fds(self._socket, [b"s"], [pipe.fileno()])
            pid = int.from_bytes(_receive(self._socket, 8), "big")
            if not pid:  # the fork failed: why follows
                size = _receive(self._socket, 1)[0]
                raise OSError(_receive(self._socket, size).decode())
            return _Process(pid)

    def end(self, process: _Process) -> None:
        """Kill `process` and wait for it to end."""
        with self._lock, contextlib.suppress(OSError, EOFError):  # a spawner gone took it
            self._socket.sendall(b"e" + process.pid.to_bytes(8, "big"))
            _receive(self._socket, 1)

    def close(self) -> None:
        """Stop the spawner (and any process it still has)."""
        self._socket.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _receive(sock: socket.socket, size: int) -> bytes:
    """Exactly `size` bytes from `sock` (EOFError when it closes first)."""
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            raise EOFError("the pool's spawner closed its socket")
        data += more
    return data


def _spawn(
    control: socket.socket,
    factory: WorkFactory,
    factory_args: Sequence[Any],
    logging: tuple[str, str],
) -> None:
    """The spawner (`_Spawner`): fork a process per "start", kill and reap one per "end",
    until the serving process closes its end of `control`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the serving process decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    children: set[int] = set()
    try:
        while True:
            request, fds, _flags, _address = socket.recv_fds(control, 1, 1)
            if request == b"s" and fds:
                try:
                    pid = os.fork()
                except OSError as error:
                    os.close(fds[0])
                    why = (error.strerror or str(error)).encode()[:255]
                    control.sendall(bytes(8) + bytes([len(why)]) + why)
                    continue
                if not pid:
                    control.close()
                    code = 1
                    try:
                        _serve(Connection(fds[0]), factory, factory_args, logging)
                        code = 0
                    finally:
                        os._exit(code)
                os.close(fds[0])
                children.add(pid)
                control.sendall(pid.to_bytes(8, "big"))
            elif request == b"e":
                pid = int.from_bytes(_receive(control, 8), "big")
                if pid in children:
                    _kill(pid)
                    children.discard(pid)
                control.sendall(b"e")
            else:
                return
    except (EOFError, OSError):
        return
    finally:
        for pid in children:
            _kill(pid)


def _kill(pid: int) -> None:
    """Kill a child of this process and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def within_deadline(seconds: float, context: grpc.ServicerContext) -> float:
    """A work budget cut to most of the caller's remaining deadline."""
    remaining = context.time_remaining()
    if remaining is not None:
        return min(seconds, max(0.01, float(remaining) * 0.8))
    return seconds


def _refusal_from(body: tuple[Any, ...]) -> Refusal:
    code, reason, message, fields, metadata, retry_after = body
    return Refusal(
        Code[code],
        Reason(reason),
        message,
        fields=tuple(fields),
        metadata=metadata,
        retry_after=retry_after,
    )


def _serve(
    conn: Connection, factory: WorkFactory, factory_args: Sequence[Any], logging: tuple[str, str]
) -> None:
    """A pool process: build the work, lower its priority, answer jobs until the pipe closes.

    The work is built at the serving process's priority: built at low priority, it waited
    for a free core, and on a busy machine the first search waited many seconds for it."""
    from wargame.runtime.logs import configure_logging

    configure_logging(*logging)
    work = factory(*factory_args)
    _lower_priority()
    with contextlib.suppress(EOFError, OSError, KeyboardInterrupt):
        while True:
            name, payload, seconds, request_id = conn.recv()
            with structlog.contextvars.bound_contextvars(request_id=request_id, rpc=name):
                conn.send(_answer(work, name, payload, seconds))


def _lower_priority() -> None:
    """Put this process below every serving one: nice `NICENESS` (any process may)."""
    os.nice(NICENESS)


def _answer(work: Work, name: str, payload: bytes, seconds: float) -> tuple[str, Any]:
    """("ok", bytes), ("refused", the refusal's parts) or ("failed", a short text)."""
    try:
        return "ok", work(name, payload, seconds)
    except (RuleError, Refusal) as error:
        refusal = refusal_of(error) if isinstance(error, RuleError) else error
        return "refused", (
            refusal.code.name,
            str(refusal.reason),
            refusal.message,
            tuple(refusal.fields),
            dict(refusal.metadata),
            refusal.retry_after,
        )
    except Exception as error:
        log.exception("pool work failed")
        return "failed", type(error).__name__
