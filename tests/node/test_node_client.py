"""The Node client (clients/node) against a real engine and matchmaker process.

It is built only from proto/ (@grpc/grpc-js and @grpc/proto-loader, pinned in its
package-lock.json): it runs the conformance vectors of tests/conformance, plays a whole
game of each kind through the engine and one through the matchmaker (register, create,
join, watch, play to the end), decoding the google.rpc error details of refusals. In
`make test` it runs a sample of the vectors (`VECTORS_EVERY`), under -m slow every vector.
Skipped,
with a line saying so, where `node` is not installed (a failure instead when
WARGAME_REQUIRE_NODE is set, as .ci/run does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import seeds
from tests.matchmaker.conftest import start_matchmaker_process
from tests.servers import RedisServer, ServiceProcess

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("node")]
ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "node"
NODE = shutil.which("node")
# The sample form runs one vector in this many of each game's vectors of each rpc, at least
# one of each rpc (perft, every RPC's answers and refusals: what the Node client decodes),
# which ones turning with the run's seed so that this many days' runs check them all; the
# in-depth form (-m slow) runs every vector. The client's own decoding is the same code for
# every vector of an rpc: a sample finds a defect of it as the whole set does.
VECTORS_EVERY = 8


@pytest.fixture
def matchmaker_address(
    tmp_path: Path, redis_server: RedisServer, engine_process: ServiceProcess
) -> Iterator[str]:
    process = start_matchmaker_process(tmp_path, redis_server.url, engine_process.address)
    yield process.address
    process.stop()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
def test_the_node_client_passes_its_suite(
    engine_process: ServiceProcess, matchmaker_address: str, in_depth: bool, playout_seed: int
) -> None:
    if NODE is None:
        assert not os.environ.get("WARGAME_REQUIRE_NODE"), "node is not installed (CI needs it)"
        pytest.skip("node is not installed: the Node client suite (clients/node) is not run")
    assert (CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir(), (
        "clients/node has no node_modules: run `make setup` (it runs npm ci there)"
    )
    env = {
        **os.environ,
        "WARGAME_ENGINE": engine_process.address,
        "WARGAME_MATCHMAKER": matchmaker_address,
        "WARGAME_VECTORS": str(ROOT / "tests" / "conformance"),
    }
    if in_depth:
        env.pop("WARGAME_VECTORS_SAMPLE", None)
    else:
        env["WARGAME_VECTORS_SAMPLE"] = f"{playout_seed}/{VECTORS_EVERY}"
        print(f"the vectors' sample: WARGAME_VECTORS_SAMPLE={env['WARGAME_VECTORS_SAMPLE']}")
    run = subprocess.run(
        [str(NODE), "--test", "--test-force-exit", "--test-reporter=spec", "test/"],
        cwd=CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = [line for line in run.stdout.splitlines() if line.strip()][-40:]
    print("\n".join(summary))
    assert run.returncode == 0, run.stdout[-8000:] + run.stderr[-4000:]
