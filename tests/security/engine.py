"""What the engine security suites share: an engine process of the test's own, its CPU and
memory as the system sees them, and long records."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.rules.record import write_record
from tests import servers
from tests.servers import ServiceProcess


def start_engine(directory: Path, *flags: str, name: str = "engine") -> ServiceProcess:
    """A real `wargame-engine` (one worker) with `flags`, on a free port."""
    return servers.start_engine(directory, *flags, name=name)


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (a worker's pool processes hang off its spawner)."""
    found = [pid]
    for current in found:
        children = Path(f"/proc/{current}/task/{current}/children")
        try:
            found += [int(child) for child in children.read_text().split()]
        except OSError:
            continue
    return found


def pool_started(pid: int, processes: int = 2) -> bool:
    """Whether the worker `pid` has its pool's `processes` forked (they start in the
    background after the engine serves; a memory figure taken before would count them as
    growth)."""
    for member in process_tree(pid)[1:]:  # the spawner: a child of the worker
        try:
            forked = Path(f"/proc/{member}/task/{member}/children").read_text().split()
        except OSError:
            continue
        if len(forked) >= processes:
            return True
    return False


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of `pid` and its descendants so far."""
    ticks = 0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / 100


def resident_mb(pid: int) -> float:
    """Resident memory of `pid` and its descendants, in MB."""
    total = 0
    for member in process_tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


# Moves out and back again, for ever (no draw rule is on): two Horses in the Game of War,
# two Infantry units in Napoleonic Chess.
DANCES = {
    "war": (("south", "Hi1-h3"), ("north", "Hi10-h8"), ("south", "Hh3-i1"), ("north", "Hh8-i10")),
    "napoleonic": tuple(
        (side, text)
        for side, move in (
            ("red", "move a3-a4"),
            ("black", "move a6-a5"),
            ("red", "move a4-a3"),
            ("black", "move a5-a6"),
        )
        for text in (move, "end", "end")
    ),
}
DRAWS_OFF = {"war": {"repetition_draw": "off", "no_progress_limit": "off"}, "napoleonic": {}}


def long_record(plies: int, game: str = "war") -> str:
    """The record of a game `plies` actions long that never ends (see `DANCES`)."""
    ruleset = rulesets()[game]
    options = ruleset.resolve_options(DRAWS_OFF[game])
    initial: Game[Any] = Game(ruleset, ruleset.new_game(options))
    dance = DANCES[game]
    lines = [dance[ply % len(dance)] for ply in range(plies)]
    return write_record(game, options.as_text(), ruleset.setup_text(initial.state), lines)


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether `condition` holds within `timeout` seconds (looked at every 50 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def wait_idle(pid: int, timeout: float) -> bool:
    """Whether the process tree stops using CPU (under 0.05 s in a second) within `timeout`."""
    deadline = time.monotonic() + timeout
    before = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now - before < 0.05:
            return True
        before = now
    return False


def pool_runnable_seconds(pid: int) -> float:
    """Seconds the processes below the worker `pid` (its pool's, which sit blocked while
    idle) have run or waited for a CPU so far, in Linux's schedstat: a search counts from
    its start even while a busy machine starves it, where its CPU time would hardly grow."""
    total = 0
    for member in process_tree(pid)[1:]:
        for task in Path(f"/proc/{member}/task").glob("*/schedstat"):
            try:
                ran, waited = task.read_text().split()[:2]
            except (OSError, ValueError):
                continue
            total += int(ran) + int(waited)
    return total / 1e9


def wait_working(pid: int, timeout: float) -> bool:
    """Whether the pool of the worker `pid` is at work within `timeout`: runnable for 0.3 s
    (running, or ready to run and starved by a busy machine)."""
    start = pool_runnable_seconds(pid)
    return wait_until(lambda: pool_runnable_seconds(pid) - start >= 0.3, timeout)
