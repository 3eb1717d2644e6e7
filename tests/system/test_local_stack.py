"""`make run` / `make status` / `make stop`: the local stack, on private ports and run folder."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.servers import ROOT, free_port

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("local-stack")]


def _make(target: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    return subprocess.run(
        [make, "-s", target, f"RUN_DIR={env['RUN_DIR']}"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {
        "WARGAME_ENGINE": f"127.0.0.1:{free_port()}",
        "WARGAME_MATCHMAKER": f"127.0.0.1:{free_port()}",
        "WARGAME_LOCAL_REDIS_PORT": str(free_port()),
        "RUN_DIR": str(tmp_path / "run"),
    }
    yield env
    _make("stop", env)


def _pids(run_dir: Path) -> dict[str, int]:
    return {path.stem: int(path.read_text()) for path in run_dir.glob("*.pid")}


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def _serving(address: str, service: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=10
        )
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def test_run_status_stop(stack_env: dict[str, str]) -> None:
    run_dir = Path(stack_env["RUN_DIR"])
    temp_before = set(os.listdir(tempfile.gettempdir()))
    started = _make("run", stack_env)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "the local stack runs" in started.stdout
    pids = _pids(run_dir)
    assert set(pids) == {"redis", "engine", "matchmaker"} and all(map(_alive, pids.values()))
    engine, matchmaker = stack_env["WARGAME_ENGINE"], stack_env["WARGAME_MATCHMAKER"]
    assert _serving(engine, "wargame.v1.RulesEngine")
    assert _serving(matchmaker, "wargame.v1.Matchmaker")
    for address, service in (
        (engine, "wargame.v1.RulesEngine"),
        (matchmaker, "wargame.v1.Matchmaker"),
    ):
        with grpc.insecure_channel(address) as channel:
            assert service in ProtoReflectionDescriptorDatabase(channel).get_services()

    again = _make("run", stack_env)
    assert again.returncode == 0 and "the local stack already runs" in again.stdout
    assert _pids(run_dir) == pids
    assert _make("status", stack_env).returncode == 0

    children = [
        int(child)
        for pid in pids.values()
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    ]
    stopped = _make("stop", stack_env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not any(_alive(pid) for pid in [*pids.values(), *children])
    assert list(run_dir.glob("*.pid")) == []
    assert {p.name for p in run_dir.iterdir()} <= {
        "logs",
        "redis",
        "engine-metrics",
        "seal.key",
        "matchmaker-secret.key",
        "bench",
    }
    assert set(os.listdir(tempfile.gettempdir())) - temp_before == set()
    assert _make("status", stack_env).returncode != 0


def test_a_busy_port_is_reported_in_one_line(stack_env: dict[str, str]) -> None:
    host, _, port = stack_env["WARGAME_MATCHMAKER"].rpartition(":")
    with socket.socket() as holder:
        holder.bind((host, int(port)))
        holder.listen()
        failed = _make("run", stack_env)
    assert failed.returncode != 0
    assert f"{stack_env['WARGAME_MATCHMAKER']} is in use by another program" in failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr
    assert _pids(Path(stack_env["RUN_DIR"])) == {}
