"""`make run` / `make status` / `make stop`: the local stack, on private ports and folders.

Each test gives the stack its own addresses (the README's variables), run folder, temporary
folder and home (`make run` links the commands into ~/.local/bin), and checks only those.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.servers import ROOT, local_stack_variables, start_redis, user_environment

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("local-stack")]


def _make(
    target: str, env: dict[str, str], *, silent: bool = True
) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    return subprocess.run(
        [make, *(["-s"] if silent else []), target, f"RUN_DIR={env['RUN_DIR']}"],
        cwd=ROOT,
        env={**user_environment(), **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = local_stack_variables(tmp_path)
    yield env
    _make("stop", env)


def _pids(run_dir: Path) -> dict[str, int]:
    return {path.stem: int(path.read_text().split()[0]) for path in run_dir.glob("*.pid")}


def _alive(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" not in status.read_text()
    except OSError:
        return False


def _serving(address: str, service: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=10
        )
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _metrics_status(address: str) -> int:
    import urllib.request

    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as page:
        return int(page.status)


def test_run_status_stop(stack_env: dict[str, str], tmp_path: Path) -> None:
    run_dir = Path(stack_env["RUN_DIR"])
    started = _make("run", stack_env)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "the local stack runs" in started.stdout
    # The way to stop it names its run folder: a plain `make stop` would stop the stack of
    # the default folder instead.
    assert f"`make stop RUN_DIR={run_dir.resolve()}` stops it" in started.stdout
    pids = _pids(run_dir)
    assert set(pids) == {"redis", "engine", "matchmaker", "web"} and all(map(_alive, pids.values()))
    engine, matchmaker = stack_env["WARGAME_ENGINE_LISTEN"], stack_env["WARGAME_MATCHMAKER_LISTEN"]
    assert _serving(engine, "wargame.v1.RulesEngine")
    assert _serving(matchmaker, "wargame.v1.Matchmaker")
    for address, service in (
        (engine, "wargame.v1.RulesEngine"),
        (matchmaker, "wargame.v1.Matchmaker"),
    ):
        with grpc.insecure_channel(address) as channel:
            assert service in ProtoReflectionDescriptorDatabase(channel).get_services()
    # Every part listens where the README's variables say, metrics included.
    assert _metrics_status(stack_env["WARGAME_ENGINE_METRICS_LISTEN"]) == 200
    assert _metrics_status(stack_env["WARGAME_MATCHMAKER_METRICS_LISTEN"]) == 200
    assert redis.Redis.from_url(stack_env["WARGAME_REDIS_URL"]).ping()

    again = _make("run", stack_env)
    assert again.returncode == 0 and "the local stack already runs" in again.stdout
    assert _pids(run_dir) == pids
    moved = _make("run", {**stack_env, "WARGAME_ENGINE_LISTEN": "127.0.0.1:1"})
    assert moved.returncode != 0
    assert "already runs with engine listen" in moved.stderr
    assert f"`make stop RUN_DIR={run_dir.resolve()}` it first" in moved.stderr
    # A second stack in another run folder finds the ports taken, and by whom.
    clash = _make("run", {**stack_env, "RUN_DIR": str(tmp_path / "other")})
    assert clash.returncode != 0 and "nothing was started" in clash.stderr
    assert f"pid {pids['engine']} " in clash.stderr
    assert f"`make stop RUN_DIR={run_dir}` stops that stack" in clash.stderr

    status = _make("status", stack_env, silent=False)
    assert status.returncode == 0, status.stderr
    assert "the local stack runs" in status.stdout and engine in status.stdout
    assert f"pid {pids['matchmaker']}" in status.stdout

    children = [
        int(child)
        for pid in pids.values()
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    ]
    stopped = _make("stop", stack_env)
    assert stopped.returncode == 0 and "stopped web, matchmaker, engine, redis" in stopped.stdout
    assert not any(_alive(pid) for pid in [*pids.values(), *children])
    assert list(run_dir.glob("*.pid")) == []
    assert {p.name for p in run_dir.iterdir()} <= {
        "logs",
        "redis",
        "engine-metrics",
        "seal.key",
        "matchmaker-secret.key",
        "caller.key",
    }
    assert list(Path(stack_env["TMPDIR"]).iterdir()) == []  # everything stayed in the run folder

    # `make status` answers in its own words, without make's "Error 1" line.
    down = _make("status", stack_env, silent=False)
    assert down.returncode == 0
    assert down.stdout.startswith("the local stack is not running")
    assert f"`make run RUN_DIR={run_dir.resolve()}` starts it" in down.stdout
    assert "Error" not in down.stdout + down.stderr and down.stderr == ""
    assert _make("stop", stack_env).stdout.strip() == "the local stack was not running"


def test_every_busy_port_is_reported_before_anything_starts(
    stack_env: dict[str, str],
) -> None:
    taken = [stack_env["WARGAME_ENGINE_METRICS_LISTEN"], stack_env["WARGAME_MATCHMAKER_LISTEN"]]
    holders = []
    for address in taken:
        host, _, port = address.rpartition(":")
        holder = socket.socket()
        holder.bind((host, int(port)))
        holder.listen()
        holders.append(holder)
    try:
        failed = _make("run", stack_env)
    finally:
        for holder in holders:
            holder.close()
    assert failed.returncode != 0
    problems = [line for line in failed.stderr.splitlines() if line.startswith("  - ")]
    assert len(problems) == 2, failed.stderr
    for problem, address, variable in zip(
        problems,
        taken,
        ("WARGAME_ENGINE_METRICS_LISTEN", "WARGAME_MATCHMAKER_LISTEN"),
        strict=True,
    ):
        assert f"cannot listen on {address}, which is in use" in problem
        assert f"held by pid {os.getpid()} " in problem  # this test holds them
        assert f"set {variable} to a free host:port" in problem
    assert "nothing was started" in failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr
    assert "starting" not in failed.stdout and "runs" not in failed.stdout
    assert _pids(Path(stack_env["RUN_DIR"])) == {}


def test_a_process_that_dies_at_start_is_reported_at_once_with_its_error(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    # A start timeout far beyond what a busy machine takes to start the stack (a paired run
    # took 32 s), below `_make`'s own bound: a dead engine waited for as if it might still
    # answer keeps `make run` that long.
    start_timeout = 150
    env = {
        **stack_env,
        "WARGAME_ENGINE_SEAL_KEY_FILE": str(tmp_path / "no-such.key"),
        "WARGAME_START_TIMEOUT": str(start_timeout),
    }
    began = time.monotonic()
    failed = _make("run", env)
    took = time.monotonic() - began
    assert failed.returncode != 0
    assert took < start_timeout, "the dead engine was waited for as if it might still answer"
    lines = failed.stderr.strip().splitlines()
    assert re.match(
        r"make run: the engine exited at start \(status 2\); its log \(.*\) says:", lines[0]
    )
    assert (
        lines[1]
        .strip()
        .startswith(
            f"wargame-engine: error: cannot read the seal key from {tmp_path / 'no-such.key'}"
        )
    )
    assert "serving" not in failed.stdout + failed.stderr  # nothing that reads like success
    assert "the local stack runs" not in failed.stdout
    # What did start (Redis) was stopped again; the run folder shows nothing running.
    run_dir = Path(stack_env["RUN_DIR"])
    assert _pids(run_dir) == {} and not (run_dir / "stack.json").exists()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(stack_env["WARGAME_REDIS_URL"], socket_connect_timeout=2).ping()


def test_a_part_too_slow_to_answer_is_stopped_with_the_way_to_wait_longer(
    stack_env: dict[str, str],
) -> None:
    # No engine imports its rules in a hundredth of a second: it is alive, and too slow.
    failed = _make("run", {**stack_env, "WARGAME_START_TIMEOUT": "0.01"})
    assert failed.returncode != 0
    lines = failed.stderr.strip().splitlines()
    assert re.match(r"make run: the (redis|engine) did not answer within 0.01 s; its log", lines[0])
    way_out = "way out: a busy machine may need longer: set WARGAME_START_TIMEOUT=120 (seconds)"
    assert [line.strip() for line in lines if "way out" in line] == [f"{way_out} and run it again"]
    assert "held by" not in failed.stderr  # its own ports are not someone else's
    assert _pids(Path(stack_env["RUN_DIR"])) == {}  # what started was stopped again


def test_a_start_timeout_that_is_no_number_of_seconds_is_refused(
    stack_env: dict[str, str],
) -> None:
    failed = _make("run", {**stack_env, "WARGAME_START_TIMEOUT": "soon"})
    assert failed.returncode != 0
    assert "WARGAME_START_TIMEOUT='soon' is not a number of seconds above 0" in failed.stderr
    assert "starting" not in failed.stdout
    assert _pids(Path(stack_env["RUN_DIR"])) == {}


def test_a_redis_that_already_answers_is_used_and_left_running(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    existing = start_redis(tmp_path / "existing-redis")
    try:
        env = {**stack_env, "WARGAME_REDIS_URL": existing.url}
        started = _make("run", env)
        assert started.returncode == 0, started.stdout + started.stderr
        assert "starting the local stack (engine, matchmaker, web)" in started.stdout
        assert re.search(rf"redis +127\.0\.0\.1:{existing.port} +external", started.stdout)
        assert set(_pids(Path(env["RUN_DIR"]))) == {"engine", "matchmaker", "web"}
        assert re.search(r"redis +\S+ +external", _make("status", env).stdout)
        stopped = _make("stop", env)
        assert stopped.stdout.strip() == "stopped web, matchmaker, engine"
        assert redis.Redis.from_url(existing.url).ping()
    finally:
        existing.stop()


def test_variables_that_disagree_are_refused(stack_env: dict[str, str]) -> None:
    env = {**stack_env, "WARGAME_ENGINE": "127.0.0.1:1"}
    failed = _make("run", env)
    assert failed.returncode != 0
    assert (
        f"WARGAME_ENGINE=127.0.0.1:1 and WARGAME_ENGINE_LISTEN={env['WARGAME_ENGINE_LISTEN']} "
        "name different ports"
    ) in failed.stderr
    assert _pids(Path(env["RUN_DIR"])) == {}


def _readme_block(after: str) -> str:
    """The first ```sh block of the README after the text `after`."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```sh\n", readme.index(after)) + len("```sh\n")
    return readme[start : readme.index("```", start)]


def test_the_readmes_try_tls_recipe_starts_a_tls_stack_a_client_reaches(tmp_path: Path) -> None:
    # The recipe as printed, run from the repository's root, with its folder `run/tls` moved
    # to one of the test's own (named relative to the root, as the recipe names it) and
    # the stack on the test's ports.
    env = local_stack_variables(tmp_path)
    folder = tmp_path / "tls"
    relative = os.path.relpath(folder, ROOT)
    engine = env["WARGAME_ENGINE_LISTEN"]
    prelude = (
        f'make() {{ command make -s RUN_DIR="$RUN_DIR" "$@"; }}\n'
        f'export PATH="{ROOT / ".venv" / "bin"}:$PATH" WARGAME_ENGINE={engine}\n'
        "set -euo pipefail\n"
    )
    recipe = _readme_block("**Try TLS on this machine.**")
    assert recipe.count("run/tls") == 7 and "cd ../..\n" in recipe and "make stop" in recipe
    recipe = recipe.replace("cd ../..", f'cd "{ROOT}"').replace("run/tls", relative)
    try:
        done = subprocess.run(
            ["bash", "-c", prelude + recipe.replace("make stop", "")],
            cwd=ROOT, env={**user_environment(), **env},
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "the local stack runs" in done.stdout
        # The hint for other shells reaches it over TLS, trusting the recipe's CA.
        ca = folder / "ca.crt"
        assert f"WARGAME_ENGINE=grpcs://{engine}" in done.stdout
        assert f"WARGAME_TLS_CA_FILE={ca}" in done.stdout
        assert "The Game of War" in done.stdout  # the client, over TLS
        # Both services speak TLS only: a plaintext health check gets no answer.
        for address in (engine, env["WARGAME_MATCHMAKER_LISTEN"]):
            with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError):
                health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=5
                )
            credentials = grpc.ssl_channel_credentials(ca.read_bytes())
            with grpc.secure_channel(address, credentials) as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=10
                )
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        _make("stop", env)
