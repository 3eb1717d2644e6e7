"""The loop of the background workers (`matchmaker/workers.py`): a round every interval,
one more when poked, failures logged and survived, until the replica stops; and a task
stopped until it has ended."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from matchmaker.workers import every, stopped
from tests.matchmaker.conftest import run
from tests.matchmaker.helpers import captured_logs, until

HOUR = 3600.0  # an interval no test waits out: only pokes bring the next round


async def settle() -> None:
    """Give every ready task many turns of the loop (a worker that ran on by itself would
    run several rounds meanwhile)."""
    for _ in range(50):
        await asyncio.sleep(0)


def counting(rounds: list[int]) -> Callable[[], Awaitable[object]]:
    async def round_of_work() -> None:
        rounds.append(len(rounds) + 1)

    return round_of_work


def test_a_worker_works_at_once_then_once_per_poke_until_stopped() -> None:
    async def scenario() -> None:
        poke, stop = asyncio.Event(), asyncio.Event()
        rounds: list[int] = []
        task = asyncio.create_task(every(HOUR, poke, stop, counting(rounds), "failed"))
        await until(lambda: len(rounds) == 1)  # the first round needs no poke
        await settle()
        assert rounds == [1]  # then it waits for the interval
        poke.set()
        await until(lambda: len(rounds) == 2)
        await settle()
        assert rounds == [1, 2] and not poke.is_set()  # one poke, one round
        poke.set()
        await until(lambda: len(rounds) == 3)
        stop.set()
        poke.set()  # the stop is seen as soon as the wait ends
        await asyncio.wait_for(task, 10)
        assert rounds == [1, 2, 3]

    run(scenario())


def test_a_stopped_replica_starts_no_round() -> None:
    async def scenario() -> None:
        poke, stop = asyncio.Event(), asyncio.Event()
        rounds: list[int] = []
        stop.set()
        await asyncio.wait_for(every(HOUR, poke, stop, counting(rounds), "failed"), 10)
        assert rounds == []

    run(scenario())


def test_a_worker_waits_its_interval_between_rounds() -> None:
    async def scenario() -> None:
        poke, stop = asyncio.Event(), asyncio.Event()
        rounds: list[int] = []
        task = asyncio.create_task(every(0.01, poke, stop, counting(rounds), "failed"))
        await until(lambda: len(rounds) >= 3)  # no poke: the interval alone brings rounds
        stop.set()
        await asyncio.wait_for(task, 10)

    run(scenario())


def test_a_failed_round_is_logged_and_the_next_one_runs() -> None:
    async def scenario() -> list[dict[str, object]]:
        poke, stop = asyncio.Event(), asyncio.Event()
        calls: list[int] = []

        async def flaky() -> None:
            calls.append(1)
            if len(calls) == 1:
                raise ConnectionError("redis went away")
            if len(calls) == 2:
                raise KeyError  # no message: its type names it

        with captured_logs() as logs:
            task = asyncio.create_task(every(HOUR, poke, stop, flaky, "sweep failed"))
            await until(lambda: len(calls) == 1)
            poke.set()
            await until(lambda: len(calls) == 2)
            poke.set()
            await until(lambda: len(calls) == 3)
            stop.set()
            poke.set()
            await asyncio.wait_for(task, 10)
            return [dict(entry) for entry in logs]

    entries = run(scenario())
    failures = [entry for entry in entries if entry["event"] == "sweep failed"]
    assert [(entry["log_level"], entry["error"]) for entry in failures] == [
        ("warning", "redis went away"),
        ("warning", "KeyError"),
    ]
    assert all(entry.get("component") == "matchmaker" for entry in failures)


def test_a_cancelled_worker_ends_instead_of_logging_a_failure() -> None:
    async def scenario() -> list[dict[str, object]]:
        poke, stop = asyncio.Event(), asyncio.Event()
        started = asyncio.Event()

        async def endless() -> None:
            started.set()
            await asyncio.Event().wait()  # a round still at work when the replica stops

        with captured_logs() as logs:
            task = asyncio.create_task(every(HOUR, poke, stop, endless, "sweep failed"))
            await asyncio.wait_for(started.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 10)
            return [dict(entry) for entry in logs]

    assert [entry for entry in run(scenario()) if entry["event"] == "sweep failed"] == []


def stubborn(lost: int) -> tuple[Callable[[], Coroutine[Any, Any, None]], list[int]]:
    """A task's work that carries on after its first `lost` cancellations, as Python
    3.11's `asyncio.wait_for` lets a task carry on when one lands as the write it waits for
    completes (redis-py's writes); the list counts the cancellations it met."""
    met: list[int] = []

    async def work() -> None:
        while True:
            try:
                await asyncio.sleep(HOUR)
            except asyncio.CancelledError:
                met.append(1)
                if len(met) > lost:
                    raise

    return work, met


def test_a_task_that_carries_on_after_a_cancellation_is_cancelled_until_it_ends() -> None:
    """`stopped` cancels again until the task has ended: a hub's update listener cancelled
    once waited for its sender that way for ever (a replica's stop took 30 s in a test run,
    the hub's close waiting on it)."""

    async def scenario() -> None:
        work, met = stubborn(lost=2)
        task = asyncio.create_task(work())
        await settle()
        await asyncio.wait_for(stopped(task), 30)
        assert task.cancelled() and len(met) == 3

    run(scenario())


def test_a_caller_cancelled_while_it_stops_a_task_is_cancelled_once_the_task_has_ended() -> None:
    async def scenario() -> None:
        work, met = stubborn(lost=1)
        task = asyncio.create_task(work())
        await settle()
        stopping = asyncio.create_task(stopped(task))
        await settle()
        stopping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(stopping, 30)
        assert task.cancelled() and len(met) == 2

    run(scenario())
