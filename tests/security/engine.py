"""What the engine security suites share: an engine process of the test's own, its CPU and
memory as the system sees them, and long records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_service.rules import rulesets
from engine_service.rules.game import Game
from engine_service.rules.record import write_record
from tests.servers import ServiceProcess, start_service

SERVICE = "wargame.v1.RulesEngine"


def start_engine(directory: Path, *flags: str, name: str = "engine") -> ServiceProcess:
    """A real `wargame-engine` (one worker) with `flags`, on a free port."""
    return start_service(
        "engine_service.main",
        ["--workers", "1", "--metrics-listen", "off", *flags],
        log_path=directory / f"{name}.log",
        service=SERVICE,
        timeout=60,
    )


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (a worker's pool processes hang off its forkserver)."""
    found = [pid]
    for current in found:
        children = Path(f"/proc/{current}/task/{current}/children")
        try:
            found += [int(child) for child in children.read_text().split()]
        except OSError:
            continue
    return found


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


# Two Horses leaping out and back: a War game that never ends with the draw rules off.
HORSE_DANCE = (("south", "Hi1-h3"), ("north", "Hi10-h8"), ("south", "Hh3-i1"), ("north", "Hh8-i10"))


def long_record(plies: int) -> str:
    """The record of a Game of War `plies` actions long (Horses leaping out and back)."""
    ruleset = rulesets()["war"]
    options = ruleset.resolve_options({"repetition_draw": "off", "no_progress_limit": "off"})
    initial: Game[Any] = Game(ruleset, ruleset.new_game(options))
    lines = [HORSE_DANCE[ply % len(HORSE_DANCE)] for ply in range(plies)]
    return write_record(
        "war", options.as_text(), ruleset.setup_text(initial.state), lines, tags={}
    )
