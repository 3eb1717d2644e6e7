"""The CPU time of each test, for the suite's budget (docs/developing.md).

    .venv/bin/pytest -p tests.cpu_time --cpu-durations=30 -m "not slow" -n 2

lists the tests that took the most CPU time: user + system of the test's process (the
xdist worker) and of the processes it started and waited for, from the start of its set-up
to the end of its tear-down. Servers a module or the session shares are counted with the
test that stops them; processes that outlive their parent (a `make run` stack) are not
counted at all. Unlike `--durations` (wall-clock time), it holds on a busy machine.

Where things are: `pytest_runtest_setup` and `pytest_runtest_makereport` measure (in each
worker), `pytest_runtest_logreport` gathers (where the reports arrive) and
`pytest_terminal_summary` prints.
"""

from __future__ import annotations

import resource
from collections.abc import Generator

import pytest

KEY = "cpu_seconds"
START = pytest.StashKey[float]()
MEASURED: dict[str, float] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("cpu time").addoption(
        "--cpu-durations",
        type=int,
        default=30,
        metavar="N",
        help="show the N tests that took the most CPU time (0: all)",
    )


def cpu_seconds() -> float:
    """User + system time of this process and of its children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[START] = cpu_seconds()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if call.when == "teardown" and START in item.stash:
        report.user_properties.append((KEY, cpu_seconds() - item.stash[START]))
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
