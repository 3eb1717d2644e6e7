"""The loop of every background worker of a replica (the sweeper, the pairer), and how a
replica's tasks are stopped.

A worker does one round of its work every interval, sooner when poked, until the replica
stops; a failed round is logged and the next one tried, so a Redis or engine outage
pauses the work instead of ending it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger(component="matchmaker")

STOP_AGAIN = 0.5  # seconds a cancelled task may take to end before it is cancelled again


async def stopped(task: asyncio.Task[Any]) -> None:
    """Cancel `task` and wait until it has ended, cancelling it again if it goes on: in
    Python 3.11, `asyncio.wait_for` (redis-py's socket writes) drops a cancellation that
    lands as the write it waits for completes, and the task carries on. Its exception, if
    any, is its own to have logged; a cancellation of the caller meanwhile is raised once
    the task has ended."""
    interrupted = False
    while not task.done():
        task.cancel()
        try:
            await asyncio.wait({task}, timeout=STOP_AGAIN)
        except asyncio.CancelledError:
            interrupted = True
    if not task.cancelled():
        task.exception()  # (retrieved)
    if interrupted:
        raise asyncio.CancelledError


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
