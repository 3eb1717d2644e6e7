"""Game clocks: base time plus an increment, for every side the rules let act.

A clock runs for each side in `GameState.to_act`, so Napoleonic Chess's defender spends
its own time on supports in the middle of the opponent's turn, and both clocks run during
a simultaneous deployment. A side gets its increment when its stretch of acting ends (it
leaves `to_act`), not per small action of a multi-step turn.

Times are milliseconds of Redis's clock (`TIME`), so every replica agrees on them. Pure
functions over `Clock` values; the game hash stores them as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Clock:
    """Time left per side at `at_ms`, and the sides whose clocks run from then on."""

    base_ms: int
    increment_ms: int
    remaining: dict[str, int] = field(default_factory=dict)
    at_ms: int = 0
    running: tuple[str, ...] = ()

    def to_json(self) -> str:
        """The stored form."""
        return json.dumps(
            {
                "b": self.base_ms,
                "i": self.increment_ms,
                "r": self.remaining,
                "at": self.at_ms,
                "run": list(self.running),
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Clock:
        """A clock from its stored form."""
        data = json.loads(text)
        return cls(
            int(data["b"]),
            int(data["i"]),
            {k: int(v) for k, v in data["r"].items()},
            int(data["at"]),
            tuple(data["run"]),
        )


def start(
    base_ms: int, increment_ms: int, sides: Iterable[str], now_ms: int, running: Iterable[str]
) -> Clock:
    """A fresh clock: every side at the base time, the sides to act running from now."""
    return Clock(base_ms, increment_ms, {side: base_ms for side in sides}, now_ms, tuple(running))


def remaining_at(clock: Clock, now_ms: int) -> dict[str, int]:
    """Each side's time left at `now_ms` (running clocks counted down; may be negative)."""
    elapsed = max(0, now_ms - clock.at_ms)
    return {
        side: left - elapsed if side in clock.running else left
        for side, left in clock.remaining.items()
    }


def fallen(clock: Clock, now_ms: int) -> tuple[str, ...]:
    """The running sides whose time ran out first, by `now_ms` (none: nobody's has).

    Running clocks tick together, so the side with the least time left ran out first and
    alone loses on time. Sides whose clocks ran out at the same moment (both deploying at
    once, neither in time) are all returned: the game is then drawn, never decided by
    their names.
    """
    left = remaining_at(clock, now_ms)
    out = [side for side in clock.running if left.get(side, 1) <= 0]
    if not out:
        return ()
    first = min(left[side] for side in out)
    return tuple(sorted(side for side in out if left[side] == first))


def advance(clock: Clock, now_ms: int, running_after: Iterable[str]) -> Clock:
    """The clock after a commit at `now_ms` that leaves `running_after` to act.

    Running sides are charged the time since the last commit; a side that stops acting
    gets its increment.
    """
    after = tuple(running_after)
    left = remaining_at(clock, now_ms)
    for side in clock.running:
        if side not in after and side in left:
            left[side] += clock.increment_ms
    return replace(clock, remaining=left, at_ms=now_ms, running=after)


def stop(clock: Clock, now_ms: int) -> Clock:
    """The clock frozen at `now_ms` (the game is over): time charged, nothing running."""
    return replace(clock, remaining=remaining_at(clock, now_ms), at_ms=now_ms, running=())


def deadline(clock: Clock) -> int | None:
    """When the first running side runs out of time (ms), or None if none runs."""
    times = [
        clock.at_ms + clock.remaining[side] for side in clock.running if side in clock.remaining
    ]
    return min(times) if times else None
