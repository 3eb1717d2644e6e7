"""The loop of every background worker of a replica (the sweeper, the pairer).

A worker does one round of its work every interval, sooner when poked, until the replica
stops; a failed round is logged and the next one tried, so a Redis or engine outage
pauses the work instead of ending it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger(component="matchmaker")


async def every(
    interval: float,
    poke: asyncio.Event,
    stop: asyncio.Event,
    round_of_work: Callable[[], Awaitable[object]],
    failure: str,
) -> None:
    """Run `round_of_work` every `interval` s (at once when `poke` is set) until `stop` is
    set; a round that fails is logged as `failure`."""
    while not stop.is_set():
        try:
            await round_of_work()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning(failure, error=str(error) or type(error).__name__)
        poke.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(poke.wait(), interval)
