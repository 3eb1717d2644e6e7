"""The test harness's own promises: ports picked for test servers stay theirs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.servers import DEFAULT_PORTS, ROOT, free_ports


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
