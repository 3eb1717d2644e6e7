"""A pytest plugin for mutation runs: what a forked process runs counts for its test.

mutmut learns which tests run a function while it gathers its stats: each mutated
function's trampoline records its name in the test's process (`mutmut.state()._stats`), and
after each test mutmut files the names recorded under that test. A function run only in a
process the test forked (the engine pool's processes: `pool.py`'s `_serve`, `_answer`,
`_spawn`) records its name in that process, where it is lost: mutmut then reads its
mutants "no tests", though the fork does run each mutant (it inherits the switch,
MUTANT_UNDER_TEST) and the test checks what it does. Here a forked process also writes the
names it records to a file, which the test's process reads back at the test's teardown,
before mutmut files them: those mutants are judged by the tests that run them, as any other.

Loaded with `-p tools.mutate.forked` (pyproject's `[tool.mutmut]`); it does something only
while mutmut gathers stats (MUTANT_UNDER_TEST=stats). Each process writes a name once per
test (a shared counter of tests tells it when the test changed), so a fork that runs a
search writes a few lines, not one per call. What calls what inside a fork (mutmut's
`function_dependencies`, for its incremental runs) is not passed back.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from dataclasses import dataclass

import pytest
from mutmut.state import state

STATS = "stats"  # MUTANT_UNDER_TEST while mutmut gathers its stats


@dataclass
class _Channel:
    """The file forks write names to, and the count of tests ended (shared memory)."""

    fd: int
    path: str
    tests_ended: mmap.mmap  # anonymous, so shared with every fork made after it
    read_to: int = 0  # how far the test's process has read the file

    def ended(self) -> int:
        return int.from_bytes(self.tests_ended[:8], "little")

    def end_test(self) -> None:
        self.tests_ended[:8] = (self.ended() + 1).to_bytes(8, "little")


class _Relay(set[str]):
    """A forked process's record of the functions it ran: a name new in this test is
    also written to the channel."""

    def __init__(self, channel: _Channel) -> None:
        super().__init__()
        self.channel = channel
        self.test = -1  # the test (a count of tests ended) whose names the set holds

    def add(self, name: str) -> None:
        if self.test != (now := self.channel.ended()):
            self.clear()
            self.test = now
        if name not in self:
            super().add(name)
            os.write(self.channel.fd, f"{name}\n".encode())


_channel: _Channel | None = None
_registered = False


def _in_fork() -> None:
    """In a process just forked: relay the names it records, while stats are gathered."""
    if _channel is not None and os.environ.get("MUTANT_UNDER_TEST") == STATS:
        state()._stats = _Relay(_channel)


def pytest_configure(config: pytest.Config) -> None:
    """Open the channel when mutmut gathers stats."""
    global _channel, _registered
    if os.environ.get("MUTANT_UNDER_TEST") != STATS:
        return
    fd, path = tempfile.mkstemp(prefix="mutmut-forked-")
    os.close(fd)
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    _channel = _Channel(fd, path, mmap.mmap(-1, 8))
    if not _registered:
        os.register_at_fork(after_in_child=_in_fork)
        _registered = True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Add what the test's forks ran to what mutmut files under the test (before it does)."""
    if _channel is None:
        return
    size = os.fstat(_channel.fd).st_size
    written = os.pread(_channel.fd, size - _channel.read_to, _channel.read_to)
    whole = written[: written.rfind(b"\n") + 1]  # a line being written is read next time
    _channel.read_to += len(whole)
    state()._stats.update(whole.decode().split())
    _channel.end_test()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close the channel: forks made later record as mutmut does."""
    global _channel
    if _channel is not None:
        os.close(_channel.fd)
        os.unlink(_channel.path)
        _channel = None
