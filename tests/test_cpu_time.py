"""The suite's CPU meter (`tests.cpu_time`): with `--cpu-cgroup` a test is charged the CPU
of the processes its worker started and never waited for, which the default meter misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cpu_time import HIERARCHIES
from tests.servers import ROOT

# In a process of its own (a group moves the process that makes it): a group, a child that
# spins for 0.3 s of CPU and is never waited for (its parent leaves it running, as a test
# leaves a `make run` stack), the group's usage once the child is gone, and the waited-for
# children's usage beside it.
MEASURE = """
import json, os, resource, subprocess, sys, time
from tests.cpu_time import Group
group = Group()
before = group.seconds()
spinner = subprocess.Popen([sys.executable, "-c",
    "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass"])
while os.path.exists(f"/proc/{spinner.pid}/cmdline") and open(
        f"/proc/{spinner.pid}/stat").read().split()[2] != "Z":
    time.sleep(0.01)  # until it has ended (a zombie: never reaped, so never waited for)
charged = group.seconds() - before
waited = resource.getrusage(resource.RUSAGE_CHILDREN)
group.leave()
print(json.dumps([charged, waited.ru_utime + waited.ru_stime, group.path.exists()]))
"""


def test_a_process_never_waited_for_is_charged_to_the_test_in_the_cgroup_mode() -> None:
    if not any(
        (root / usage).is_file() and os.access(root, os.W_OK) for root, usage in HIERARCHIES
    ):
        pytest.skip("no cgroup CPU accounting this process may write to (root takes one)")
    measured = subprocess.run(
        [sys.executable, "-c", MEASURE],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    charged, waited, left = json.loads(measured.stdout)
    assert waited == 0  # the default meter sees nothing of it
    assert charged >= 0.3  # the group's meter sees all of it
    assert not left  # the group went with its last process
