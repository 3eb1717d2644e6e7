"""Full garbage collections on a clock, for a server that holds many live objects.

CPython starts a full (generation 2) collection once the objects that survived the young
collections grow by a quarter of those it holds, and each full collection walks every live
container. A replica taking up thousands of streams (each with its call, tasks and
buffers) grows by a quarter again and again, each pause longer than the last: measured on
a matchmaker taking 5,000 WatchGame streams at once, six full collections in 13 s, of 21
to 230 ms, every call in flight waiting through them.

`pace_full_collections` keeps the young collections as they are (they free most of what
a call leaves, in well under a millisecond) and takes the full ones off the allocator:
one every `every` seconds, whatever the number of objects. What only a full collection
frees (reference cycles that outlived two young collections) waits that long at most: a
matchmaker taking 530 moves a second held 68-69 MB over 130 s.
`gc.freeze()` first moves what the process built to start (modules, descriptors, the
handlers) out of every collection for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

import structlog

FULL_EVERY_S = 60.0
SLOW_FULL_S = 0.5  # a full collection longer than this is logged
_NEVER = 2**31 - 1  # a generation-2 threshold the young collections never reach

log = structlog.get_logger(component="collection")


async def pace_full_collections(stop: asyncio.Event, every: float = FULL_EVERY_S) -> None:
    """Freeze what exists now, then run the full collections every `every` seconds until
    `stop` is set (the allocator's own full collections are off meanwhile)."""
    gc.freeze()
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    try:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
            if stop.is_set():
                break
            started = time.perf_counter()
            gc.collect(2)
            took = time.perf_counter() - started
            if took > SLOW_FULL_S:
                log.warning("a full garbage collection was slow", seconds=round(took, 3))
    finally:
        gc.set_threshold(young, middle, full)
