"""What an update costs a replica per stream: its messages are built and serialized once
per side that watches and the same bytes written to every stream of that side; waiting for
the next update starts no task per stream (`watch.py`, `Service.WatchGame`). Counted, not
timed: the serializations of WatchGameResponse and the tasks WatchGame calls start while an
update reaches 1 stream, then 21."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Coroutine, Generator
from typing import Any

import pytest
import structlog

from matchmaker.server import Replica
from tests.matchmaker.conftest import Client, WarReplica
from tests.matchmaker.helpers import Watcher, play_moves, start_game, wait_for
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

MORE = 20  # spectators opened for the second count


class Counts:
    """Serializations of WatchGameResponse in this process, and tasks started by WatchGame
    calls (the replica's log context names the call), since `reset`."""

    def __init__(self) -> None:
        self.serialized = 0
        self.tasks = 0
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.serialized = self.tasks = 0

    def serializing(self, serialize: Callable[..., bytes]) -> Callable[..., bytes]:
        def counted(message: Any, **options: Any) -> bytes:
            with self._lock:
                self.serialized += 1
            return serialize(message, **options)

        return counted

    def task_factory(
        self,
        loop: asyncio.AbstractEventLoop,
        coroutine: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        **options: Any,
    ) -> asyncio.Task[Any]:
        if structlog.contextvars.get_contextvars().get("rpc") == "WatchGame":
            with self._lock:
                self.tasks += 1
        return asyncio.Task(coroutine, loop=loop, **options)


def test_an_update_costs_each_stream_no_serialization_and_no_task(
    war_replica: WarReplica,
    clients: Callable[..., Client],
    engine_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, two = war_replica()
    counts = Counts()
    monkeypatch.setattr(
        mm.WatchGameResponse,
        "SerializeToString",
        counts.serializing(mm.WatchGameResponse.SerializeToString),
    )

    async def count_tasks(_: Replica) -> None:
        asyncio.get_running_loop().set_task_factory(counts.task_factory)

    server.call(count_tasks)
    game = start_game(two, "war")
    watchers: list[Watcher] = []
    rng = random.Random(7)

    def one_update_with(streams: int) -> tuple[int, int]:
        """What the next update costs with `streams` spectators, each live already."""
        while len(watchers) < streams:
            watchers.append(Watcher(clients(server.address), game.id, after=game.version))
        assert server.replica is not None
        hub = server.replica.hub
        wait_for(lambda: hub.watchers == streams)
        played = play_moves(engine_stub, two, game.id, 1, rng)  # every stream goes live
        for watcher in watchers:
            watcher.until(played.version)
        counts.reset()
        played = play_moves(engine_stub, two, game.id, 1, rng)
        for watcher in watchers:
            assert watcher.until(played.version)[-1].game.version == played.version
        return counts.serialized, counts.tasks

    serialized_one, tasks_one = one_update_with(1)
    serialized_many, tasks_many = one_update_with(1 + MORE)
    for watcher in watchers:
        watcher.close()
    # One set of messages for the spectators, however many: the same count as for one.
    assert serialized_many == serialized_one, (serialized_one, serialized_many)
    # The streams start no task of their own to wait for it: the same count as for one.
    assert tasks_many == tasks_one, (tasks_one, tasks_many)
