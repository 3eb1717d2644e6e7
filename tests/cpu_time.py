"""The CPU time of each test, for the suite's budget (docs/developing.md).

    .venv/bin/pytest -p tests.cpu_time --cpu-durations=30 -m "not slow" -n 2

lists the tests that took the most CPU time: user + system of the test's process (the
xdist worker) and of the processes it started and waited for, from the start of its set-up
to the end of its tear-down. Servers a module or the session shares are counted with the
test that stops them; processes that outlive their parent (a `make run` stack) are not
counted at all. Unlike `--durations` (wall-clock time), it holds on a busy machine.

With `--cpu-cgroup` each test process runs in a control group of its own (cgroup v1's
cpuacct or v2; it takes the right to make one: root), and a test is charged the CPU time of
every process in it over the test: its own and that of every process the worker started,
waited for or not (servers, browsers, stacks), work left running by earlier tests included.
Summed over a run, nothing is left out; per test, a server is charged with whatever runs
while it works.

Where things are: `pytest_runtest_setup` and `pytest_runtest_makereport` measure (in each
worker), `pytest_runtest_logreport` gathers (where the reports arrive) and
`pytest_terminal_summary` prints; `Group` is the control group.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Generator
from pathlib import Path

import pytest

KEY = "cpu_seconds"
START = pytest.StashKey[float]()
MEASURED: dict[str, float] = {}
CGROUPS = Path("/sys/fs/cgroup")
# Where a CPU accounting hierarchy may be mounted, and the file of its usage: cgroup v1's
# cpuacct (nanoseconds), alone or beside cpu, then v2, whole or beside v1 ("unified").
HIERARCHIES = (
    (CGROUPS / "cpuacct", "cpuacct.usage"),
    (CGROUPS / "cpu,cpuacct", "cpuacct.usage"),
    (CGROUPS, "cpu.stat"),
    (CGROUPS / "unified", "cpu.stat"),
)


class Group:
    """A control group of this process's own, `wargame-tests-<pid>` under the first
    hierarchy found: every process it starts from now on is in it too."""

    def __init__(self) -> None:
        for root, usage in HIERARCHIES:
            if (root / usage).is_file() and os.access(root, os.W_OK):
                break
        else:
            raise pytest.UsageError(
                "--cpu-cgroup: no cgroup CPU accounting this process may write to "
                f"(looked for {', '.join(str(root / usage) for root, usage in HIERARCHIES)})"
            )
        self.root, self.usage = root, usage
        self.path = root / f"wargame-tests-{os.getpid()}"
        self.path.mkdir(exist_ok=True)
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        """The CPU time of every process that ran in the group."""
        text = (self.path / self.usage).read_text()
        if self.usage == "cpuacct.usage":
            return int(text) / 1e9
        return int(dict(line.split() for line in text.splitlines())["usage_usec"]) / 1e6

    def leave(self) -> None:
        """Back to the hierarchy's root; the group goes once no process is left in it."""
        (self.root / "cgroup.procs").write_text(str(os.getpid()))
        with contextlib.suppress(OSError):  # a process that outlived its test is in it
            self.path.rmdir()


GROUP = pytest.StashKey[Group]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("cpu time").addoption(
        "--cpu-durations",
        type=int,
        default=30,
        metavar="N",
        help="show the N tests that took the most CPU time (0: all)",
    )
    parser.getgroup("cpu time").addoption(
        "--cpu-cgroup",
        action="store_true",
        help="charge each test with every process its worker started, waited for or not "
        "(a control group per test process; needs root)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("cpu_cgroup", False):
        config.stash[GROUP] = Group()


def pytest_unconfigure(config: pytest.Config) -> None:
    if GROUP in config.stash:
        config.stash[GROUP].leave()


def cpu_seconds(config: pytest.Config) -> float:
    """User + system time of this process and of its children it has waited for; with
    `--cpu-cgroup`, of every process in the process's control group."""
    if GROUP in config.stash:
        return config.stash[GROUP].seconds()
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[START] = cpu_seconds(item.config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if call.when == "teardown" and START in item.stash:
        report.user_properties.append((KEY, cpu_seconds(item.config) - item.stash[START]))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == KEY and isinstance(value, float):
            MEASURED[report.nodeid] = value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not MEASURED:
        return
    shown = terminalreporter.config.getoption("cpu_durations") or len(MEASURED)
    terminalreporter.write_sep("=", f"{shown} most CPU time (of {sum(MEASURED.values()):.0f} s)")
    for nodeid, seconds in sorted(MEASURED.items(), key=lambda kv: -kv[1])[:shown]:
        terminalreporter.write_line(f"{seconds:8.2f}s {nodeid}")
