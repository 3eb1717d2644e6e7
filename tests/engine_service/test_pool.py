"""The pool for expensive calls: admission, the retry hint, callers that leave, failures.

The work here is a stand-in run in real pool processes (forked by the pool's spawner): it
sleeps, refuses, or dies, as told by the job's name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
import structlog

from engine_service.handling import CallerGoneError
from engine_service.pool import Job, Pool, Work, within_deadline
from engine_service.rules.errors import RuleError
from tests.servers import ROOT
from wargame.runtime.refusal import Code, Reason, Refusal


def stand_in() -> Work:
    """Work told by its job: sleep or spin (the payload's seconds, of the clock or of CPU),
    refuse (a rule's refusal, or the service's with a retry hint: "refuse later"), die,
    tell its pid or its budget, or echo."""

    def work(job: str, payload: bytes, seconds: float) -> bytes:
        if job == "sleep":
            time.sleep(float(payload))
        elif job == "spin":
            end = time.thread_time() + float(payload)
            while time.thread_time() < end:
                pass
        elif job == "refuse":
            raise RuleError(Reason.ILLEGAL_ACTION, "not like that", rule="7.1")
        elif job == "refuse later":
            raise Refusal(
                Code.UNAVAILABLE, Reason.ENGINE_BUSY, "later", field="state", retry_after=2.5
            )
        elif job == "die":
            os._exit(3)
        elif job == "pid":
            return str(os.getpid()).encode()
        elif job == "budget":
            return repr(seconds).encode()
        return payload

    return work


BUILT_HERE: list[str] = []  # what the test's process built before its pool (none at import)


def built_here() -> Work:
    """Work that answers what its process found built when it made the work."""
    found = ",".join(BUILT_HERE).encode()
    return lambda job, payload, seconds: found


def priority_at_build() -> Work:
    """Work that answers the scheduling policy and niceness its process had as it was built."""
    built = f"{os.sched_getscheduler(0)} {os.getpriority(os.PRIO_PROCESS, 0)}".encode()
    return lambda job, payload, seconds: built


class Caller:
    """A stand-in for the gRPC context: whether the caller is still there."""

    def __init__(self) -> None:
        self.there = True

    def is_active(self) -> bool:
        return self.there

    def time_remaining(self) -> float | None:
        return None


class Hurried(Caller):
    """A caller with `remaining` seconds left of its deadline."""

    def __init__(self, remaining: float) -> None:
        super().__init__()
        self.remaining = remaining

    def time_remaining(self) -> float | None:
        return self.remaining


@pytest.mark.parametrize(
    ("remaining", "budget"), [(100.0, 30.0), (10.0, 8.0), (0.001, 0.01), (0.0, 0.01)]
)
def test_work_is_cut_to_most_of_the_callers_deadline(remaining: float, budget: float) -> None:
    """Four fifths of the time the caller has left, at least 10 ms, at most the work's own."""
    assert within_deadline(30.0, Hurried(remaining)) == pytest.approx(budget)
    assert within_deadline(30.0, Caller()) == 30.0  # no deadline: the work's own


@pytest.mark.parametrize(("processes", "queue", "reserved"), [(0, 1, 0), (1, -1, 0), (1, 1, -1)])
def test_a_pool_without_a_process_or_with_a_negative_count_is_refused(
    processes: int, queue: int, reserved: int
) -> None:
    with pytest.raises(ValueError) as refused:
        Pool(stand_in, (), processes=processes, queue=queue, reserved=reserved)
    assert str(refused.value) == (
        "a pool has at least one process, a queue of 0 or more, and 0 or more reserved processes"
    )


@pytest.fixture
def pool() -> Iterator[Pool]:
    made = Pool(stand_in, (), processes=1, queue=1, log_format="console", log_level="error")
    yield made
    made.close()


def _in_thread(pool: Pool, job: Job, caller: Caller) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(pool.run(job, caller))
        except Exception as error:
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def _wait(condition: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def _niced(niceness: int) -> int:
    """The niceness of a process started at `niceness` that lowers itself by 10 (at most 19:
    the tests themselves may run niced)."""
    return min(19, niceness + 10)


def test_the_work_runs_in_a_process_of_the_pool(pool: Pool) -> None:
    assert pool.run(Job("echo", b"hello", 1, 30), Caller()) == b"hello"
    pid = int(pool.run(Job("pid", b"", 1, 30), Caller()))
    assert pid != os.getpid()
    assert os.getpriority(os.PRIO_PROCESS, pid) >= _niced(os.getpriority(os.PRIO_PROCESS, 0))


def test_the_work_is_given_its_budget_cut_to_the_callers_deadline(pool: Pool) -> None:
    assert pool.run(Job("budget", b"", 2.5, 30), Caller()) == b"2.5"
    # Four fifths of the 10 s the caller has left.
    assert pool.run(Job("budget", b"", 30, 60), Hurried(10.0)) == b"8.0"


def test_the_pool_processes_run_niced_a_replaced_one_too(pool: Pool) -> None:
    # Niced below the serving process, in its scheduling policy: not SCHED_IDLE, under which
    # a search got no CPU at all on a machine saturated by other processes.
    first = int(pool.run(Job("pid", b"", 1, 30), Caller()))
    assert os.sched_getscheduler(first) == os.sched_getscheduler(0)
    assert os.getpriority(os.PRIO_PROCESS, first) >= _niced(os.getpriority(os.PRIO_PROCESS, 0))
    with pytest.raises(RuntimeError, match=r"^a pool process died during a call$"):
        pool.run(Job("die", b"", 1, 30), Caller())
    replaced = int(pool.run(Job("pid", b"", 1, 30), Caller()))
    assert replaced != first
    assert os.sched_getscheduler(replaced) == os.sched_getscheduler(0)
    assert os.getpriority(os.PRIO_PROCESS, replaced) >= _niced(os.getpriority(os.PRIO_PROCESS, 0))


def test_a_pool_process_starts_with_what_the_serving_process_built() -> None:
    """A fresh engine starts in a blink: a pool process is a fork of the serving process as it was
    when it made the pool (the rules built), not of a forkserver that imports the engine again
    and builds the rules anew in each process: seconds of CPU before a fresh engine's first
    search."""
    BUILT_HERE.append("rules")
    made = Pool(built_here, (), processes=1, queue=0, log_format="console", log_level="error")
    try:
        assert made.run(Job("built", b"", 1, 30), Caller()) == b"rules"
    finally:
        made.close()
        BUILT_HERE.clear()


def test_a_pool_process_builds_its_work_at_the_serving_priority_then_is_niced() -> None:
    """Built at low priority, the work waited for a free core, and on a busy
    machine the first search of a fresh engine waited many seconds for it."""
    built = Pool(priority_at_build, (), processes=1, queue=1, log_format="console",
                 log_level="error")  # fmt: skip
    try:
        policy, niceness = map(int, built.run(Job("built", b"", 1, 30), Caller()).split())
        assert (policy, niceness) == (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
        process = built._slots[0].process
        assert process is not None
        niceness_after = os.getpriority(os.PRIO_PROCESS, process.pid)
        assert niceness_after >= _niced(os.getpriority(os.PRIO_PROCESS, 0))
    finally:
        built.close()


def test_a_full_pool_refuses_at_once_with_a_retry_hint(pool: Pool) -> None:
    callers = [Caller(), Caller()]
    running = [_in_thread(pool, Job("sleep", b"30", 30, 60), caller) for caller in callers]
    _wait(lambda: pool._admitted == pool.capacity and pool._slots[0].busy_until > 0)
    with pytest.raises(Refusal) as early:  # asked before any work for the pool is done
        pool.refuse_when_full()
    assert (early.value.code, early.value.reason) == (Code.RESOURCE_EXHAUSTED, Reason.ENGINE_BUSY)
    before = time.monotonic()
    with pytest.raises(Refusal) as refused:
        pool.run(Job("echo", b"x", 1, 30), Caller())
    after = time.monotonic()
    # Refused at once: not queued behind the jobs, which all still run (a queued call would
    # have waited for the first to end).
    assert pool._admitted == pool.capacity and all(t.is_alive() for t, _o in running)
    assert (refused.value.code, refused.value.reason) == (
        Code.RESOURCE_EXHAUSTED,
        Reason.ENGINE_BUSY,
    )
    # The running search ends in up to 30 s, and the queued one takes as long again: the
    # hint is the running job's end (as seen between `before` and `after`) plus 30 s.
    retry_after = refused.value.retry_after
    assert retry_after is not None and 30 < retry_after <= 60
    ends = pool._slots[0].busy_until
    assert ends - after + 30 - 0.001 <= retry_after <= ends - before + 30 + 0.001
    # The metadata says the same in milliseconds (RetryInfo carries it as a duration).
    assert refused.value.metadata == {"retry_after_ms": str(round(retry_after * 1000))}
    for caller in callers:
        caller.there = False
    for thread, outcome in running:
        thread.join(30)
        assert isinstance(outcome[0], CallerGoneError)


def test_a_caller_that_leaves_frees_its_process_at_once(pool: Pool) -> None:
    caller = Caller()
    thread, outcome = _in_thread(pool, Job("sleep", b"30", 30, 60), caller)
    _wait(lambda: all(slot.busy_until for slot in pool._slots))
    pool.refuse_when_full()  # one running, the queue's one place free: room for a call
    caller.there = False
    thread.join(10)
    assert isinstance(outcome[0], CallerGoneError)
    assert pool.run(Job("echo", b"again", 1, 30), Caller()) == b"again"


def test_refusals_cross_intact_and_a_dead_process_is_replaced(pool: Pool) -> None:
    with pytest.raises(Refusal) as refused:
        pool.run(Job("refuse", b"", 1, 30), Caller())
    assert refused.value.reason == Reason.ILLEGAL_ACTION
    assert refused.value.metadata["rule"] == "7.1"
    with pytest.raises(Refusal) as later:
        pool.run(Job("refuse later", b"", 1, 30), Caller())
    assert (later.value.code, later.value.reason, later.value.message) == (
        Code.UNAVAILABLE,
        Reason.ENGINE_BUSY,
        "later",
    )
    assert (later.value.fields, later.value.retry_after) == ((("state", "later"),), 2.5)
    with pytest.raises(RuntimeError, match=r"^a pool process died during a call$"):
        pool.run(Job("die", b"", 1, 30), Caller())
    assert pool.run(Job("echo", b"alive", 1, 30), Caller()) == b"alive"


def test_a_call_running_as_the_pool_closes_is_told_to_go_elsewhere() -> None:
    """The engine stops (its pool closes) while a search runs: the call is refused as
    UNAVAILABLE with a retry hint, never an internal error from a pool half gone; a call
    that comes after is refused the same way."""
    pool = Pool(stand_in, (), processes=1, queue=1, log_format="console", log_level="error")
    thread, outcome = _in_thread(pool, Job("sleep", b"30", 30, 60), Caller())
    _wait(lambda: all(slot.busy_until for slot in pool._slots))
    pool.close()
    thread.join(30)
    with pytest.raises(Refusal) as after:
        pool.run(Job("echo", b"", 1, 30), Caller())
    for refused in (outcome[0], after.value):
        assert isinstance(refused, Refusal), refused
        assert (refused.code, refused.reason) == (Code.UNAVAILABLE, Reason.ENGINE_UNAVAILABLE)
        assert refused.retry_after


def test_work_past_its_limit_is_stopped(pool: Pool) -> None:
    with pytest.raises(Refusal) as refused:
        pool.run(Job("sleep", b"30", 0.2, 0.5), Caller())
    assert (refused.value.code, refused.value.reason, refused.value.message) == (
        Code.RESOURCE_EXHAUSTED,
        Reason.ENGINE_BUSY,
        "the work took longer than its limit of 0.5 s and was stopped; retry later",
    )
    assert pool.run(Job("echo", b"next", 1, 30), Caller()) == b"next"


def test_work_starved_of_cpu_is_not_stopped_at_its_limit(pool: Pool) -> None:
    """The limit counts the time the work ran, not the time a saturated machine kept it
    waiting for a CPU: a niced search starved by busier processes is not overrunning, and
    stopping it left a bot or a hint with no answer at all."""
    pid = int(pool.run(Job("pid", b"", 1, 30), Caller()))
    cpu = {min(os.sched_getaffinity(0))}
    os.sched_setaffinity(pid, cpu)
    os.setpriority(os.PRIO_PROCESS, pid, 19)  # starved harder than at the pool's nice 10
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(3)]
    try:
        for hog in hogs:
            os.sched_setaffinity(hog.pid, cpu)
        started = time.monotonic()
        # 0.02 s of CPU, at nice 19 beside three processes at nice 0 on its one CPU: it runs
        # a few ms at a time and waits far longer than its limit between (Linux counts a
        # wait only once it ends: the limit must not count one still going on as running).
        assert pool.run(Job("spin", b"0.02", 1, 0.2), Caller()) == b"0.02"
        assert time.monotonic() - started > 0.2, "the work was not starved past its limit"
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


# A pool started in its own interpreter, with the TMPDIR given.
_POOL_IN_A_PROCESS = """
import sys
from engine_service.pool import Job, Pool
from tests.engine_service.test_pool import Caller, stand_in
pool = Pool(stand_in, (), processes=1, queue=0, log_format="console", log_level="error")
try:
    print(pool.run(Job("echo", b"answered", 5.0, 10.0), Caller()).decode())
except Exception as error:
    print("failed:", error)
finally:
    pool.close()
"""


def test_a_long_tmpdir_still_gives_a_working_pool(tmp_path: Path) -> None:
    # A forkserver's socket path (at most 107 bytes) would not fit under this TMPDIR.
    long = tmp_path / ("t" * 60) / ("m" * 60)
    long.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _POOL_IN_A_PROCESS],
        env={**os.environ, "TMPDIR": str(long)}, cwd=ROOT,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.stdout.strip() == "answered", done.stdout + done.stderr


def test_a_pool_that_cannot_start_fails_calls_at_once(tmp_path: Path) -> None:
    # Processes that cannot start (here: the spawner's forks fail, as at the system's limit
    # of processes) are reported, and a call fails at once instead of waiting for a process
    # that never comes.
    script = _POOL_IN_A_PROCESS.replace(
        "from engine_service.pool import Job, Pool",
        "import os\n"
        "from engine_service.pool import Job, Pool\n"
        "forks, fork = [], os.fork\n"
        "def failing_fork():\n"
        "    forks.append(1)\n"
        "    if len(forks) > 1:  # the spawner's own fork, then none\n"
        "        raise BlockingIOError(11, 'Resource temporarily unavailable')\n"
        "    return fork()\n"
        "os.fork = failing_fork",
    )
    # Before, the call waited for as long as its caller did (here: for ever, so the
    # subprocess's timeout would fail the test).
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    logged, answer = done.stdout.strip().splitlines()[-2:]
    assert "the pool's processes could not start" in logged  # for the operator
    assert answer == (
        "failed: the pool's processes could not start: Resource temporarily unavailable"
    )


def _fail_forks(monkeypatch: pytest.MonkeyPatch, fails: Callable[[int], bool]) -> None:
    """`os.fork` refused as at the system's limit of processes when `fails` says so of its
    count of forks (1: the spawner's own; a spawner counts on from its fork's count)."""
    forks: list[int] = []
    fork = os.fork

    def failing_fork() -> int:
        forks.append(1)
        if fails(len(forks)):
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return fork()

    monkeypatch.setattr(os, "fork", failing_fork)


def test_a_pool_whose_forks_fail_says_why_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, in the test's own process (so that mutation runs see the serving side):
    the spawner's forks fail as at the system's limit of processes; the operator is told
    and a call fails at once with the system's reason."""
    _fail_forks(monkeypatch, lambda count: count > 1)  # the spawner's own fork, then none
    with structlog.testing.capture_logs() as logs:
        pool = Pool(stand_in, (), processes=1, queue=0, log_format="console", log_level="error")
        monkeypatch.undo()
        try:
            with pytest.raises(RuntimeError) as failed:
                pool.run(Job("echo", b"never", 5.0, 10.0), Caller())
        finally:
            pool.close()
    assert str(failed.value) == (
        "the pool's processes could not start: Resource temporarily unavailable"
    )
    assert {"event": "the pool's processes could not start", "log_level": "error",
            "error": "Resource temporarily unavailable"}.items() <= logs[0].items()  # fmt: skip


def test_a_spawner_whose_fork_failed_forks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork refused once (the system at its limit of processes for a moment) is reported,
    and the spawner goes on: the next process asked of it starts."""
    _fail_forks(monkeypatch, lambda count: count == 2)  # the spawner's, then its first
    pool = Pool(stand_in, (), processes=1, queue=0, log_format="console", log_level="error")
    monkeypatch.undo()
    try:
        with pytest.raises(RuntimeError, match="Resource temporarily unavailable"):
            pool.run(Job("echo", b"never", 5.0, 10.0), Caller())
        ours, theirs = socket.socketpair()
        try:
            process = pool.spawner.start(theirs)
        finally:
            theirs.close()
        with Connection(ours.detach()) as conn:
            conn.send(("echo", b"forked again", 5.0, ""))
            assert conn.recv() == ("ok", b"forked again")
        pool.spawner.end(process)
    finally:
        pool.close()


@pytest.mark.slow
def test_pools_made_beside_threads_busy_in_grpc_all_start() -> None:
    """A pool forks its spawner, which forks the pool's processes. With gRPC's fork
    handlers on (its default), 1-4 % of the pools made beside threads busy in gRPC could
    not start (the spawner crashed in its first fork; this suite's processes have such
    threads). Prepared for gRPC as the engine prepares its process, 400 such pools in a row
    all start (the script runs outside the `tests` package, which prepares its own)."""
    env = {name: value for name, value in os.environ.items()
           if name != "GRPC_ENABLE_FORK_SUPPORT"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("pools_beside_grpc.py")), "400"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip() == "0 of 400 pools could not start their processes"


def test_a_pool_whose_spawner_is_gone_still_closes(pool: Pool) -> None:
    """The spawner killed (by the system, out of memory): closing the pool asks it to end
    each process and finds it gone, which is no error."""
    assert pool.run(Job("echo", b"up", 1, 30), Caller()) == b"up"
    os.kill(pool.spawner.pid, signal.SIGKILL)
    os.waitpid(pool.spawner.pid, 0)
    pool.close()


def _ended(pid: int) -> bool:
    """Whether a process (not ours: a child of the spawner) has exited, reaped or not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_a_pool_process_whose_pipe_closes_ends_alone() -> None:
    """A pool process ends by itself when the serving process closes its pipe (the first
    half of a slot's stop, or the serving process gone), and only itself: it never runs on
    into the spawner's code it was forked from, which ends the spawner's other processes."""
    pool = Pool(stand_in, (), processes=1, queue=0, reserved=1, log_level="error")
    try:
        _wait(lambda: len(pool._free) + len(pool._free_reserved) == 2)
        first = int(pool.run(Job("pid", b"", 1, 30), Caller()))  # the older, unreserved one
        reserved = pool._slots[1]
        assert reserved.conn is not None and reserved.process is not None
        reserved.conn.close()
        _wait(lambda: _ended(reserved.process.pid))
        assert not _ended(first)
        assert int(pool.run(Job("pid", b"", 1, 30), Caller())) == first
    finally:
        pool.close()
