"""The test harness's own promises: ports picked for test servers stay theirs, and a
test's Redis Cluster stays up on a busy machine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers import DEFAULT_PORTS, ROOT, _redis_cli, free_ports, start_redis_cluster


def test_picked_ports_lie_below_the_kernels_own_range_and_no_two_processes_share_one() -> None:
    """No outgoing connection (its source port comes from the kernel's range) nor another
    test process can take a port between its pick and its server binding it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    mine = free_ports(20) + free_ports(20)
    assert len(set(mine)) == 40  # never the same port twice, in one call or in two
    assert all(10000 <= port < low for port in mine)
    assert not DEFAULT_PORTS & set(mine)
    other = subprocess.run(
        [sys.executable, "-c", "from tests.servers import free_ports; print(*free_ports(2000))"],
        cwd=ROOT, capture_output=True, text=True, timeout=150, check=True,
    )  # fmt: skip
    theirs = {int(port) for port in other.stdout.split()}
    assert len(theirs) == 2000
    assert not theirs & set(mine)


@pytest.mark.integration
def test_a_cluster_without_replicas_stays_up_while_a_node_answers_nobody_for_seconds(
    tmp_path: Path,
) -> None:
    """A node kept from running for 5 s (as a machine at load 50 can keep it): nothing can
    fail over without replicas, so the cluster goes on serving (at a 2 s node timeout the
    others marked it failed and answered CLUSTERDOWN)."""
    cluster = start_redis_cluster(tmp_path, primaries=3)
    try:
        stopped = cluster.nodes[1].process.pid
        os.kill(stopped, signal.SIGSTOP)
        try:
            states = set()
            until = time.monotonic() + 5
            while time.monotonic() < until:
                info = _redis_cli("-p", str(cluster.nodes[0].port), "cluster", "info")
                states |= {line.strip() for line in info.splitlines() if "cluster_state" in line}
                time.sleep(0.2)
        finally:
            os.kill(stopped, signal.SIGCONT)
        assert states == {"cluster_state:ok"}
    finally:
        cluster.stop()
