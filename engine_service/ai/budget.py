"""A search's budget: work measured in CPU time, with the wall clock only as a safety cap.

A level must play at the same strength on any machine at any load, so what a search may
spend is the CPU time of the thread that searches (`time.thread_time`): on a busy machine
it takes longer by the clock but looks as deep. The wall clock still caps it (the caller's
deadline, the pool's hard limit); when the cap ends a search before its CPU budget is
spent, the search was cut short and played below its level, which the answer says
(`cut_short`) so that the service logs it and counts it.
"""

from __future__ import annotations

import time

# Without a cap of the caller's, a search may take this many times its budget by the clock
# (and a second more) before the cap cuts it short.
DEFAULT_WALL_FACTOR = 3.0
DEFAULT_WALL_EXTRA = 1.0


def default_wall_cap(seconds: float) -> float:
    """The wall-clock cap of a budget of `seconds` of CPU time when the caller sets none."""
    return seconds * DEFAULT_WALL_FACTOR + DEFAULT_WALL_EXTRA


class Budget:
    """`seconds` of the current thread's CPU time, from now, capped at `wall` seconds of
    the clock (0: the default cap)."""

    __slots__ = ("cpu_deadline", "cut_short", "wall_deadline")

    def __init__(self, seconds: float, wall: float = 0.0) -> None:
        self.cpu_deadline = time.thread_time() + seconds
        self.wall_deadline = time.perf_counter() + (wall or default_wall_cap(seconds))
        self.cut_short = False  # the wall-clock cap ended the work before its budget

    def spent(self) -> bool:
        """Whether the work must stop now: its CPU time is spent, or the cap is reached
        first (then `cut_short` is set)."""
        if time.thread_time() > self.cpu_deadline:
            return True
        if time.perf_counter() > self.wall_deadline:
            self.cut_short = True
            return True
        return False
