"""Live updates: every watcher of a replica served over one Redis connection per primary.

A game's stream (`keys.game_stream`) holds its updates, entry id ``<version>-0``, and the
notices after one (a player left or came back, a rematch offered), ``<version>-<n>``; every
script that appends to it also announces the append on the game's shard channel
(SPUBLISH in `commit.lua`, `presence.lua`, `notice.lua`). A replica keeps one `Feed` per
watched game (its watchers' queues and the last entry read) and one `Listener` per Redis
primary (the one server of a standalone Redis): a dedicated connection subscribed
(SSUBSCRIBE) to the channels of the watched games that primary serves. An announcement
wakes the game's feed, which reads the new entries (XRANGE after its last id, sealed
notations opened) and the game as it stands, once, and hands that batch to every watcher's
queue, where each watcher attaches its own view of the newest version.
Thousands of watchers thus cost one connection per primary and one read per update.

Nothing is lost between announcement and stream: a feed reads the stream itself, the
announcement only wakes it; every (re)subscription wakes the feed too, so it catches up on
what was announced while it was not listening; a listener whose primary failed over, or
whose slot moved, re-homes its channels on the new primary. A replica holds at most
`max_watchers` watchers; one more is refused with RESOURCE_EXHAUSTED and a retry hint.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from prometheus_client import Gauge
from redis.asyncio.connection import AbstractConnection
from redis.crc import key_slot
from redis.exceptions import MovedError

from matchmaker import keys
from matchmaker.record import GameRecord, GameStatus
from matchmaker.redis_client import (
    REDIS_ERRORS,
    Client,
    is_cluster,
    listener_connection,
    refresh,
)
from matchmaker.settings import Settings
from matchmaker.store import Store, StreamEntry, text
from wargame.runtime.refusal import Code, Reason, Refusal

log = structlog.get_logger(component="matchmaker")

FEEDS = Gauge("wargame_matchmaker_watched_games", "Games with live watchers on this replica")
WATCHERS = Gauge("wargame_matchmaker_watchers", "Open WatchGame streams on this replica")
LISTENERS = Gauge(
    "wargame_matchmaker_update_listeners", "Redis connections listening for live updates"
)

# What a feed or a listener meets when Redis fails over, restarts or cannot be reached.
FAILURES: tuple[type[Exception], ...] = (*REDIS_ERRORS, OSError)
READ_COUNT = 200  # stream entries read at once by a feed
SUBSCRIBE_BATCH = 500  # channels per SSUBSCRIBE (of one slot)


@dataclass(frozen=True)
class Batch:
    """New stream entries and the game read right after them (None: Redis failed)."""

    entries: tuple[StreamEntry, ...]
    game: GameRecord | None
    now_ms: int
    error: Exception | None = None


class Feed:
    """The watchers of one game on this replica, and what they have been handed."""

    def __init__(self, hub: Hub, game_id: str, last_id: str) -> None:
        self.hub = hub
        self.game_id = game_id
        self.channel = keys.game_channel(game_id).encode()
        self.last_id = last_id  # the newest stream entry handed to the watchers
        self.queues: set[asyncio.Queue[Batch]] = set()
        self.listener: Listener | None = None
        self._stale = False  # woken since the last read began
        self._reading: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Something may have been appended: read it (once, however often woken)."""
        self._stale = True
        if self._reading is None or self._reading.done():
            self._reading = asyncio.create_task(self._read(), name=f"feed-{self.game_id}")

    async def _read(self) -> None:
        while self._stale and self.queues:
            self._stale = False
            try:
                batch = await self._next()
            except asyncio.CancelledError:
                raise
            except FAILURES as error:
                batch = Batch((), None, 0, error)
            if batch is not None:
                for queue in list(self.queues):
                    queue.put_nowait(batch)

    async def _next(self) -> Batch | None:
        """The entries after the last one handed out, with the game (None: nothing new)."""
        rows: Any = await self.hub.redis.xrange(
            keys.game_stream(self.game_id), f"({self.last_id}", "+", count=READ_COUNT
        )
        if not rows:
            return None
        game, now, _ = await self.hub.store.load(self.game_id)
        self.last_id = text(rows[-1][0])
        if len(rows) == READ_COUNT:
            self._stale = True  # there may be more
        return Batch(tuple(self.hub.store.entries(self.game_id, rows)), game, now)

    def close(self) -> None:
        """Stop reading."""
        if self._reading is not None:
            self._reading.cancel()


class Listener:
    """One dedicated connection to a Redis primary, subscribed to the channels of the
    watched games it serves; it wakes their feeds."""

    def __init__(self, hub: Hub, node: str, connect: Callable[[], AbstractConnection]) -> None:
        self.hub = hub
        self.node = node
        self.connect = connect
        self.feeds: dict[bytes, Feed] = {}  # by channel
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self.task = asyncio.create_task(self._run(), name=f"listener-{node}")
        LISTENERS.inc()
        self.task.add_done_callback(lambda _: LISTENERS.dec())

    def add(self, feed: Feed) -> None:
        """Listen for the feed's game from now on (subscribed in the background; the
        confirmation wakes the feed, which then reads what came meanwhile)."""
        feed.listener = self
        self.feeds[feed.channel] = feed
        self._outbox.put_nowait(("SSUBSCRIBE", feed.channel))

    def drop(self, feed: Feed) -> None:
        """Stop listening for the feed's game."""
        if self.feeds.get(feed.channel) is feed:
            del self.feeds[feed.channel]
            self._outbox.put_nowait(("SUNSUBSCRIBE", feed.channel))

    async def _run(self) -> None:
        """Connect, subscribe and listen; after a failure re-home the channels (the primary
        may have changed) and connect again, until no feed is left here."""
        pause = 0.1
        while True:
            connection = self.connect()
            try:
                await connection.connect()  # type: ignore[no-untyped-call]
                self._outbox = asyncio.Queue()
                for channel in self.feeds:
                    self._outbox.put_nowait(("SSUBSCRIBE", channel))
                pause = 0.1
                await self._listen(connection)
            except asyncio.CancelledError:
                raise
            except FAILURES as error:
                log.info("update listener lost", node=self.node, error=str(error) or repr(error))
            finally:
                with contextlib.suppress(Exception):
                    await connection.disconnect(nowait=True)
            await asyncio.sleep(pause)
            pause = min(2.0, pause * 2)
            with contextlib.suppress(*FAILURES):
                await self.hub.rehome(self, moved=list(self.feeds.values()))
            if not self.feeds:
                self.hub.forget(self)
                return

    async def _listen(self, connection: AbstractConnection) -> None:
        sender = asyncio.create_task(self._send(connection), name=f"subscriber-{self.node}")
        try:
            await self._receive(connection, sender)
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    async def _send(self, connection: AbstractConnection) -> None:
        """Send what the outbox holds, channels of one slot per command."""
        while True:
            batch = [await self._outbox.get()]
            while not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            for command in ("SSUBSCRIBE", "SUNSUBSCRIBE"):
                wanted = command == "SSUBSCRIBE"
                channels = {c for op, c in batch if op == command and (c in self.feeds) == wanted}
                by_slot: dict[int, list[bytes]] = {}
                for channel in channels:
                    by_slot.setdefault(key_slot(channel), []).append(channel)
                for group in by_slot.values():
                    for start in range(0, len(group), SUBSCRIBE_BATCH):
                        chunk = group[start : start + SUBSCRIBE_BATCH]
                        await connection.send_command(command, *chunk, check_health=False)

    async def _receive(self, connection: AbstractConnection, sender: asyncio.Task[None]) -> None:
        """Wake feeds on announcements and confirmations; PING after a silence, give up
        after a second one (a connection cut without a word)."""
        silent = False
        while not sender.done():
            try:
                message = await connection.read_response(
                    timeout=self.hub.settings.watch_block,
                    disconnect_on_error=True,
                    push_request=True,  # RESP3 delivers announcements as push messages
                )
            except MovedError as moved:  # a slot moved away before its channel was subscribed
                await self.hub.rehome(
                    self, moved=[f for c, f in self.feeds.items() if key_slot(c) == moved.slot_id]
                )
                continue
            if message is None:
                if silent:
                    raise TimeoutError("no answer to PING")
                silent = True
                await connection.send_command("PING", check_health=False)
                continue
            silent = False
            if not isinstance(message, list) or len(message) < 2:
                continue  # the answer to PING
            kind, channel = bytes(message[0]), message[1]
            feed = self.feeds.get(channel) if isinstance(channel, bytes) else None
            if kind in (b"smessage", b"ssubscribe") and feed is not None:
                feed.wake()
            elif kind == b"sunsubscribe" and feed is not None:
                # Redis unsubscribed a channel we still want: its slot moved elsewhere.
                await self.hub.rehome(self, moved=[feed])
        sender.result()  # the sender failed: its error ends the connection


class Hub:
    """The feeds and listeners of this replica."""

    def __init__(self, store: Store, redis: Client, settings: Settings) -> None:
        self.store = store
        self.redis = redis
        self.settings = settings
        self.feeds: dict[str, Feed] = {}
        self.listeners: dict[str, Listener] = {}
        self.watchers = 0

    def admit(self) -> None:
        """RESOURCE_EXHAUSTED (with a retry hint) when the replica holds its most watchers
        (asked before a watcher counts as present, and again by `subscribe`)."""
        if self.watchers >= self.settings.max_watchers:
            hint = self.settings.retry_hint
            raise Refusal(
                Code.RESOURCE_EXHAUSTED,
                Reason.TOO_MANY_WATCHERS,
                f"this server holds its most live streams ({self.settings.max_watchers}); "
                f"retry in {hint:g} s",
                metadata={"retry_after_ms": str(round(hint * 1000))},
                retry_after=hint,
            )

    @contextlib.asynccontextmanager
    async def subscribe(self, game_id: str) -> AsyncIterator[asyncio.Queue[Batch]]:
        """A queue of the game's new entries from now on, for as long as the context lasts;
        refused when the replica holds its most watchers (`admit`)."""
        self.admit()
        self.watchers += 1
        WATCHERS.inc()
        queue: asyncio.Queue[Batch] = asyncio.Queue()
        feed: Feed | None = None
        try:
            feed = self.feeds.get(game_id)
            if feed is None:
                last_id = await self.store.last_update_id(game_id)
                feed = self.feeds.get(game_id)  # another watcher may have started it meanwhile
                if feed is None:
                    feed = Feed(self, game_id, last_id)
                    self.feeds[game_id] = feed
                    FEEDS.inc()
                    self._place(feed)
            feed.queues.add(queue)
            yield queue
        finally:
            self.watchers -= 1
            WATCHERS.dec()
            if feed is not None:
                feed.queues.discard(queue)
                if not feed.queues and self.feeds.get(game_id) is feed:
                    del self.feeds[game_id]
                    FEEDS.dec()
                    feed.close()
                    if feed.listener is not None:
                        feed.listener.drop(feed)

    def _place(self, feed: Feed) -> None:
        """Hand a feed to the listener of the primary serving its channel."""
        node, connect = listener_connection(self.redis, feed.channel.decode())
        listener = self.listeners.get(node)
        if listener is None or listener.task.done():
            listener = self.listeners[node] = Listener(self, node, connect)
        listener.add(feed)

    async def rehome(self, listener: Listener, moved: list[Feed]) -> None:
        """Read the cluster's slot map again and move feeds whose primary is no longer the
        listener's to the right listener (a standalone Redis has one: nothing moves)."""
        if not moved or not is_cluster(self.redis):
            return
        await refresh(self.redis)
        for feed in moved:
            node, _ = listener_connection(self.redis, feed.channel.decode())
            if node != listener.node and listener.feeds.get(feed.channel) is feed:
                del listener.feeds[feed.channel]
                self._place(feed)
            feed.wake()

    def forget(self, listener: Listener) -> None:
        """A listener that has no feeds left and lost its connection is dropped."""
        if self.listeners.get(listener.node) is listener:
            del self.listeners[listener.node]

    async def close(self) -> None:
        """Stop every listener and feed."""
        for feed in self.feeds.values():
            feed.close()
        tasks = [listener.task for listener in self.listeners.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.feeds.clear()
        self.listeners.clear()


def finished_at(game: GameRecord | None, version: int) -> bool:
    """True when `version` is the last version of a finished game."""
    return game is not None and game.status == GameStatus.FINISHED and version >= game.version
