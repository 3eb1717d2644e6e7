"""Live updates: one reader of a game's Redis Stream per replica, shared by its watchers.

A watcher first catches up from its version with XRANGE, then takes live entries from the
game's `Feed`: a task blocking on XREAD for that game only (so it runs on Redis Cluster,
one slot per read), started by the first watcher of the game on this replica and stopped
with the last. Each batch carries the game as it stands, read once per batch, so every
watcher can attach its own view of the newest version. Stream entry ids are
``<version>-0`` for updates and ``<version>-<n>`` for the notices after one: resuming
after version v is reading after id ``v-0``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import structlog
from prometheus_client import Gauge
from redis.asyncio import Redis
from redis.exceptions import RedisError

from matchmaker import keys
from matchmaker.record import GameRecord, GameStatus
from matchmaker.store import Store, StreamEntry

log = structlog.get_logger(component="matchmaker")

FEEDS = Gauge("wargame_matchmaker_watched_games", "Games with a live stream reader on this replica")
WATCHERS = Gauge("wargame_matchmaker_watchers", "Open WatchGame streams on this replica")


@dataclass(frozen=True)
class Batch:
    """New stream entries and the game read right after them (None: Redis failed)."""

    entries: tuple[StreamEntry, ...]
    game: GameRecord | None
    now_ms: int
    error: Exception | None = None


class Feed:
    """The reader of one game's stream on this replica."""

    def __init__(self, hub: Hub, game_id: str, last_id: str) -> None:
        self.hub = hub
        self.game_id = game_id
        self.last_id = last_id
        self.queues: set[asyncio.Queue[Batch]] = set()
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        """Read new entries until no watcher is left."""
        stream = keys.game_stream(self.game_id)
        block_ms = int(self.hub.block_seconds * 1000)
        while self.queues:
            try:
                reply: Any = await self.hub.blocking.xread(
                    {stream: self.last_id}, count=200, block=block_ms
                )
                if not reply:
                    continue
                rows = reply[0][1]
                self.last_id = rows[-1][0].decode()
                entries = tuple(self.hub.store.entries(self.game_id, rows))
                game, now, _ = await self.hub.store.load(self.game_id)
                batch = Batch(entries, game, now)
            except asyncio.CancelledError:
                raise
            except RedisError as error:
                batch = Batch((), None, 0, error)
            for queue in list(self.queues):
                queue.put_nowait(batch)
            if batch.error is not None:
                await asyncio.sleep(0.5)


class Hub:
    """The feeds of this replica, by game id."""

    def __init__(self, store: Store, blocking: Redis, block_seconds: float) -> None:
        self.store = store
        self.blocking = blocking  # a client whose socket timeout outlasts a blocking read
        self.block_seconds = block_seconds
        self.feeds: dict[str, Feed] = {}

    @contextlib.asynccontextmanager
    async def subscribe(self, game_id: str) -> AsyncIterator[asyncio.Queue[Batch]]:
        """A queue of the game's new entries from now on, for as long as the context lasts."""
        queue: asyncio.Queue[Batch] = asyncio.Queue()
        feed = self.feeds.get(game_id)
        if feed is None:
            last_id = await self.store.last_update_id(game_id)
            feed = self.feeds.get(game_id)  # another watcher may have started it meanwhile
            if feed is None:
                feed = Feed(self, game_id, last_id)
                self.feeds[game_id] = feed
        feed.queues.add(queue)
        if feed.task is None or feed.task.done():
            feed.task = asyncio.create_task(feed.run(), name=f"feed-{game_id}")
            FEEDS.inc()
            feed.task.add_done_callback(lambda _: FEEDS.dec())
        WATCHERS.inc()
        try:
            yield queue
        finally:
            WATCHERS.dec()
            feed.queues.discard(queue)
            if not feed.queues:
                if self.feeds.get(game_id) is feed:
                    del self.feeds[game_id]
                if feed.task is not None:
                    feed.task.cancel()

    async def close(self) -> None:
        """Stop every feed."""
        tasks = [feed.task for feed in self.feeds.values() if feed.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.feeds.clear()


def finished_at(game: GameRecord | None, version: int) -> bool:
    """True when `version` is the last version of a finished game."""
    return game is not None and game.status == GameStatus.FINISHED and version >= game.version
