"""What an update costs a replica per stream: its messages are built and serialized once
per side that watches and the same bytes written to every stream of that side; waiting for
the next update starts no task per stream (`watch.py`, `Service.WatchGame`). Counted, not
timed: the serializations of WatchGameResponse and the tasks that WatchGame calls make
(the replica's log context names the call) while an update reaches 21 spectators."""

from __future__ import annotations

import asyncio
import random
import threading
from collections import Counter
from collections.abc import Callable, Coroutine, Generator
from typing import Any

import pytest
import structlog

from matchmaker.server import Replica
from tests.matchmaker.conftest import Client, WarReplica
from tests.matchmaker.helpers import Watcher, play_moves, start_game, wait_for
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

STREAMS = 21


def in_watch_game() -> bool:
    return structlog.contextvars.get_contextvars().get("rpc") == "WatchGame"


class Counts:
    """The bytes of each WatchGameResponse serialized (by any call), and the tasks WatchGame
    calls started, since `reset`."""

    def __init__(self) -> None:
        self.serialized: Counter[bytes] = Counter()
        self.tasks = 0
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.serialized.clear()
            self.tasks = 0

    def serializing(self, serialize: Callable[..., bytes]) -> Callable[..., bytes]:
        def counted(message: Any, **options: Any) -> bytes:
            data = serialize(message, **options)
            with self._lock:
                self.serialized[data] += 1
            return data

        return counted

    def task_factory(
        self,
        loop: asyncio.AbstractEventLoop,
        coroutine: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        **options: Any,
    ) -> asyncio.Task[Any]:
        if in_watch_game():
            with self._lock:
                self.tasks += 1
        return asyncio.Task(coroutine, loop=loop, **options)


def test_an_update_costs_each_stream_no_serialization_and_no_task(
    war_replica: WarReplica,
    clients: Callable[..., Client],
    engine_stub: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = Counts()
    monkeypatch.setattr(  # before the replica takes it up as the responses' serializer
        mm.WatchGameResponse,
        "SerializeToString",
        counts.serializing(mm.WatchGameResponse.SerializeToString),
    )
    server, two = war_replica()

    async def count_tasks(_: Replica) -> None:
        asyncio.get_running_loop().set_task_factory(counts.task_factory)

    server.call(count_tasks)
    game = start_game(two, "war")
    watchers = [
        Watcher(clients(server.address), game.id, after=game.version) for _ in range(STREAMS)
    ]
    assert server.replica is not None
    hub = server.replica.hub
    wait_for(lambda: hub.watchers == STREAMS)
    rng = random.Random(7)
    played = play_moves(engine_stub, two, game.id, 1, rng)  # every stream goes live
    for watcher in watchers:
        watcher.until(played.version)
    counts.reset()
    played = play_moves(engine_stub, two, game.id, 1, rng)
    for watcher in watchers:
        assert watcher.until(played.version)[-1].game.version == played.version
        watcher.close()
    # Every message was serialized once (the update the move committed, the spectators'
    # message), not once per stream.
    assert counts.serialized and max(counts.serialized.values()) == 1, counts.serialized.values()
    # No stream started a task to wait for it (the build's own reads start a few).
    assert counts.tasks < STREAMS, counts.tasks
