"""Full garbage collections on a clock (`wargame.runtime.collection`), in this process's
own collector: none started by allocation while paced, one per period, all as before after."""

from __future__ import annotations

import asyncio
import gc

from wargame.runtime.collection import pace_full_collections

WAIT_S = 60.0  # generous: the condition is awaited, not a duration


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _survivors() -> list[list[_Cycle]]:
    """More surviving containers than a full collection waits for by default (a quarter of
    those held), made in young-collection-sized steps."""
    lists = len(gc.get_objects()) // 1_000 + 100
    return [[_Cycle() for _ in range(1_000)] for _ in range(lists)]


def test_the_allocator_starts_no_full_collection_the_clock_does_and_all_is_restored() -> None:
    before = gc.get_threshold()
    full: list[dict[str, int]] = []  # the full collections started, as the collector says

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(info)

    gc.callbacks.append(seen)

    async def scenario() -> None:
        stop = asyncio.Event()
        frozen = gc.get_freeze_count()  # (the test run froze what collection built)
        pacing = asyncio.create_task(pace_full_collections(stop, every=3600.0))
        await asyncio.sleep(0)  # it froze what exists and took the full ones over
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold()[:2] == before[:2]
        kept = _survivors()
        assert not full, "the allocator started a full collection while paced"
        stop.set()
        await pacing
        del kept

    async def on_the_clock() -> None:
        stop = asyncio.Event()
        pacing = asyncio.create_task(pace_full_collections(stop, every=0.01))
        async with asyncio.timeout(WAIT_S):
            while len(full) < 2:
                await asyncio.sleep(0.01)
        stop.set()
        await pacing

    try:
        asyncio.run(scenario())
        assert gc.get_threshold() == before
        asyncio.run(on_the_clock())
        assert gc.get_threshold() == before
        # And the allocator's own full collections are back (as the same survivors show).
        full.clear()
        kept = _survivors()
        assert full, "no full collection after the pacing stopped"
        del kept
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*before)
