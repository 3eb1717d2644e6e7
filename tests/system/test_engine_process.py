"""The real `wargame-engine` process: serving, workers, metrics, shutdown, bad configuration."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.security.engine import pool_started, wait_idle, wait_until, wait_working
from tests.servers import (
    ROOT,
    ServiceProcess,
    busy_port,
    free_port,
    held_sockets,
    listening_sockets,
    listens,
    start_engine,
)
from wargame.runtime.config import host_port
from wargame.v1 import engine_pb2, engine_pb2_grpc

pytestmark = pytest.mark.system

ENGINE = [sys.executable, "-m", "engine_service.main"]


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _bound(engine: ServiceProcess, workers: list[int]) -> int:
    """The engine's port, once each of its `workers` listens there: the engine counts as
    ready once one worker answers, and a worker binds the shared port only once its server
    is built."""
    port = host_port(engine.address)[1]
    assert wait_until(lambda: all(listens(pid, port) for pid in workers), 60)
    return port


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def test_serves_health_and_reflection_and_stops_gracefully_mid_call(tmp_path: Path) -> None:
    # A grace longer than the search: a busy machine may slow it past its budget.
    engine = start_engine(tmp_path, "--grace", "60")
    try:
        with grpc.insecure_channel(engine.address) as channel:
            services = ProtoReflectionDescriptorDatabase(channel).get_services()
            assert "wargame.v1.RulesEngine" in services and "grpc.health.v1.Health" in services
            stub = engine_pb2_grpc.RulesEngineStub(channel)
            state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
            answer: dict[str, object] = {}

            # A search of 2 s of CPU time, seen working (`wait_working`) after 0.3 s: the
            # signal comes mid-search however busy the machine (asserted below).
            def long_call() -> None:
                request = engine_pb2.SuggestActionRequest(
                    state=state, time_budget=duration_pb2.Duration(seconds=2), max_depth=50
                )
                try:
                    answer["reply"] = stub.SuggestAction(request, timeout=90)
                except grpc.RpcError as error:
                    answer["error"] = error

            # The search runs in a pool process, which starts in the background: the signal
            # comes once the search is working, not while it waits for its process.
            pid = engine.process.pid
            assert wait_until(lambda: pool_started(pid), 60), "the pool did not start"
            assert wait_idle(pid, 30)
            caller = threading.Thread(target=long_call)
            caller.start()
            assert wait_working(pid, 30), "the search did not start"
            engine.process.send_signal(signal.SIGTERM)
            assert not answer, "the search ended before the signal"
            caller.join(90)
        assert "reply" in answer, answer.get("error")
        assert engine.process.wait(60) == 0
        log = engine.log()
        assert '"event": "stopping"' in log and '"event": "engine stopped"' in log
        assert "Traceback" not in log
    finally:
        if engine.process.poll() is None:  # a failed assertion leaves no engine behind
            engine.kill()


def test_workers_share_one_port_and_all_stop_on_sigterm(tmp_path: Path) -> None:
    metrics = free_port()
    engine = start_engine(tmp_path, workers=2, metrics=f"127.0.0.1:{metrics}")
    deadline = time.monotonic() + 20
    while len(_children(engine.process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = _children(engine.process.pid)
    assert len(workers) == 2
    _bound(engine, workers)
    before = {pid: _cpu_ticks(pid) for pid in workers}
    for _ in range(30):  # each new connection goes to one worker, chosen by the kernel
        with grpc.insecure_channel(
            engine.address, options=[("grpc.use_local_subchannel_pool", 1)]
        ) as channel:
            stub = engine_pb2_grpc.RulesEngineStub(channel)
            state = stub.NewGame(engine_pb2.NewGameRequest(game="battle")).state
            for _ in range(5):
                stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state), timeout=10)
    assert all(_cpu_ticks(pid) > before[pid] for pid in workers), "both workers serve"
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10).read().decode()
    counted = [
        line
        for line in text.splitlines()
        if line.startswith('wargame_engine_rpcs_total{code="OK",rpc="ListLegalActions"}')
    ]
    assert counted and float(counted[0].split()[-1]) == 150.0  # merged over both workers
    assert engine.stop() == 0
    assert not any(_alive(pid) for pid in workers)


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1]


def _ask_rules(address: str) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        stub.NewGame(engine_pb2.NewGameRequest(game="war"), timeout=30)


def test_workers_are_forked_with_the_rules_loaded_and_a_dead_one_is_started_afresh(
    tmp_path: Path,
) -> None:
    """The supervisor loads the rules once and forks its first workers (they
    run its command line, not a worker's); a worker killed is replaced by a new process."""
    engine = start_engine(tmp_path, workers=2)
    assert wait_until(lambda: len(_children(engine.process.pid)) == 2, 60)
    supervisor = _command_line(engine.process.pid)
    first = _children(engine.process.pid)
    assert [_command_line(pid) for pid in first] == [supervisor, supervisor]
    port = _bound(engine, first)
    killed = held_sockets(first[0]) & listening_sockets(port)
    os.kill(first[0], signal.SIGKILL)
    # Its socket is closed once its last thread is gone (a connection the kernel gave it
    # before is reset): from then on the survivor serves the port alone.
    assert wait_until(lambda: not killed & listening_sockets(port), 60)
    _ask_rules(engine.address)

    def replaced() -> bool:
        now = _children(engine.process.pid)
        return len(now) == 2 and first[0] not in now

    assert wait_until(replaced, 60)
    (new,) = set(_children(engine.process.pid)) - {first[1]}
    # A new interpreter, started as a worker: until its exec the child still shows the
    # supervisor's command line, so wait for the exec rather than read it at once.
    assert wait_until(lambda: "--worker" in _command_line(new), 60), _command_line(new)
    assert wait_until(lambda: listens(new, port), 60), "the new worker never bound the port"
    for _ in range(10):  # both serve: each new connection goes to one, chosen by the kernel
        _ask_rules(engine.address)
    assert engine.stop() == 0
    assert not any(_alive(pid) for pid in (first[1], new))


def _run(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ENGINE, *args],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "WARGAME_LOG_FORMAT": "json"},
    )


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_ends_with_one_line(workers: str) -> None:
    with busy_port() as port:
        done = _run(
            [
                "serve",
                "--listen",
                f"127.0.0.1:{port}",
                "--workers",
                workers,
                "--metrics-listen",
                "off",
            ]
        )
    assert done.returncode == 2
    assert done.stderr.strip() == f"wargame-engine: error: cannot listen on 127.0.0.1:{port}: " + (
        "address in use or not available" if workers == "1" else "Address already in use"
    )
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["serve", "--workers", "zero"], "argument --workers: invalid int value: 'zero'"),
        (["serve", "--listen", "nowhere"], "argument --listen: 'nowhere' is not host:port"),
        (
            ["serve", "--seal-key-file", "/no/such/key"],
            "cannot read the seal key from /no/such/key",
        ),
    ],
)
def test_bad_configuration_ends_with_one_line(args: list[str], message: str) -> None:
    done = _run(args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_perft_command_prints_counts_per_depth() -> None:
    done = _run(["perft", "war", "--depth", "2"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("depth 1: 102 nodes") and lines[1].startswith("depth 2: ")
    divide = _run(["perft", "war", "--depth", "1", "--divide"])
    assert divide.stdout.strip().splitlines()[-1] == "total: 102"
    bad = _run(["perft", "war", "--depth", "1", "--option", "compulsion=sometimes"])
    assert (
        bad.returncode == 2
        and "compulsion" in bad.stderr
        and len(bad.stderr.strip().splitlines()) == 1
    )
