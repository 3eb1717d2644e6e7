"""Live updates: every watcher of a replica served over one Redis connection per primary.

A game's stream (`keys.game_stream`) holds its updates, entry id ``<version>-0``, and the
notices after one (a player left or came back, a rematch offered), ``<version>-<n>``; every
script that appends to it also announces the append on the game's shard channel
(SPUBLISH in `commit.lua`, `presence.lua`, `notice.lua`). A replica keeps one `Feed` per
watched game (its watchers' queues and the last entry read) and one `Listener` per Redis
primary (the one server of a standalone Redis): a dedicated connection subscribed
(SSUBSCRIBE) to the channels of the watched games that primary serves. An announcement
wakes the game's feed, which reads the new entries (XRANGE after its last id, sealed
notations opened) and the game as it stands, once, and hands that batch to every watcher.
The messages of a batch are built and serialized once per side that watches
(`Batch.messages`: the spectators share one set), so an update costs one read, one build
and one serialization per side, whatever the number of watchers; what is left to each
stream is writing those bytes (`Service.WatchGame`), and waiting for the next batch costs
it one future, no task (`Watcher.next`). A feed keeps its last `BUFFER` batches and each
watcher only how many of them it took; handing a batch out wakes the watchers waiting for
one, `WAKE_SLICE` per turn of the event loop (`Feed.hand`), and no other: a stream still
writing its last message (gRPC asks for the next only once a write completed, and a
write waits while the client's transport takes no more) costs nothing per update. Asking
again, it takes the batches it missed from the feed or, having missed more, reads its
way back from the game's stream by version. A stream whose client does not read still
costs what a reader costs as long as the client's transport takes its writes (its
flow-control window, which gRPC's bandwidth probing widens on a fast link): the server
cannot tell it from a reader (measured: `tests/bench/bench_strangers.py`).

Nothing is lost between announcement and stream: a feed reads the stream itself, the
announcement only wakes it; every (re)subscription wakes the feed too, so it catches up on
what was announced while it was not listening; a listener whose primary failed over, or
whose slot moved, re-homes its channels on the new primary.

Admission (`Hub.admit`, `Hub.reading`): a replica holds at most `max_watchers` streams, of
which spectators may take all but `watch_seat_reserve` (a seated player presenting its
token gets in while spectators fill the rest), one address (an IPv6 one by its /64, a
trusted proxy's caller by x-forwarded-for: `limits.caller_address`) at most
`max_watchers_per_address` spectator streams and one player at most
`max_watchers_per_player`. The reads of the watchers (token, game, catching up, feeds) go
over the hub's own Redis connections (`watch_connections` per node, apart from the pool
of moves, clocks, bots and pairing: `server.py`). Stream openings without a token wait in a
queue of at most `watch_queue`, one address's at most `max_watchers_per_address`
(`Hub.arriving`). Every refusal is RESOURCE_EXHAUSTED (TOO_MANY_WATCHERS) with a retry hint.

A burst of openings never holds moves back (README, "A cluster: Kubernetes"). gRPC queues
each method's new calls apart (`register_service`), so a SubmitActions is taken up at once,
however many WatchGame calls wait; all calls then share one event loop, so the openings'
work is kept small and gives way: the streams that open on one game at one position while a
read waits share that read and what is built of it (`Hub.shared`: the game, the catch-up);
gRPC takes a burst's calls up a few at a time, so the spectators of one game mostly open
one after another, not while a read waits: the game's feed keeps their last read
(`Feed.kept`) for those opening after it until it hands out the next batch (`KEEP_SECONDS`
at most), and a burst costs one read and one build per game and position, not one per
stream; `watch_openings` reads go at a time, and only one while other (unary) calls are
being handled (`Hub.reading`, `handling.Traffic`); the streams a shared read wakes at once
then go on one per turn of the event loop (`Hub.turn`), not all in the turn that woke them:
a move's reply that arrives meanwhile waits behind one opening's step, never behind the
burst (measured: `tests/bench/bench_watch_burst.py`, which also prints how long the
matchmaker itself took to handle the moves)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter as Tally
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
from prometheus_client import Counter, Gauge
from redis.asyncio.connection import AbstractConnection
from redis.crc import key_slot
from redis.exceptions import MovedError

from matchmaker import keys
from matchmaker.handling import Traffic
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
from matchmaker.tokens import Tokens
from matchmaker.workers import stopped
from wargame.runtime.refusal import Code, Reason, Refusal

log = structlog.get_logger(component="matchmaker")

FEEDS = Gauge("wargame_matchmaker_watched_games", "Games with live watchers on this replica")
WATCHERS = Gauge("wargame_matchmaker_watchers", "Open WatchGame streams on this replica")
LISTENERS = Gauge(
    "wargame_matchmaker_update_listeners", "Redis connections listening for live updates"
)
REFUSED = Counter(
    "wargame_matchmaker_watchers_refused",
    "WatchGame streams refused (the replica, an address, a player or the queue was full)",
    ["limit"],
)
BUILT = Counter(
    "wargame_matchmaker_watch_builds", "Sets of live-update messages built (once per side)"
)
WOKEN = Counter(
    "wargame_matchmaker_watchers_woken",
    "Streams woken with a live update (only those waiting for one: one busy writing is not)",
)
BEHIND = Counter(
    "wargame_matchmaker_watchers_behind",
    "Times a watcher that did not read its stream was left to read its way back",
)

# What a feed or a listener meets when Redis fails over, restarts or cannot be reached.
FAILURES: tuple[type[Exception], ...] = (*REDIS_ERRORS, OSError)
READ_COUNT = 200  # stream entries read at once by a feed
SUBSCRIBE_BATCH = 500  # channels per SSUBSCRIBE (of one slot)
BUFFER = 16  # batches a feed holds; a watcher that missed more is behind (reads the stream)
WAKE_SLICE = 32  # watchers woken per turn of the event loop when a batch is handed out
KEEP_SECONDS = 60.0  # how long a feed keeps a spectators' read for the streams opening after it
KEPT = 8  # spectators' reads a feed keeps at most (by position: resumed streams ask from theirs)

T = TypeVar("T")


@dataclass(frozen=True)
class Batch:
    """New stream entries and the game read right after them (None: Redis failed); with
    `behind`, word to a watcher that batches were dropped for it."""

    entries: tuple[StreamEntry, ...]
    game: GameRecord | None
    now_ms: int
    error: Exception | None = None
    behind: bool = False
    made: dict[str, asyncio.Future[Any]] = field(default_factory=dict, compare=False, repr=False)
    read_at: float = field(default_factory=time.monotonic, compare=False)  # this process's clock

    def delivery(self, entry: StreamEntry) -> float | None:
        """Seconds from the commit of `entry` to now, when it is the update of the game's
        newest version (the one whose commit time the batch holds; None otherwise): Redis's
        clock up to the read, this process's since."""
        if self.game is None or entry.seq or entry.version != self.game.version:
            return None
        return max(0, self.now_ms - self.game.updated_ms) / 1000 + time.monotonic() - self.read_at

    async def messages(self, side: str, make: Callable[[], Awaitable[T]]) -> T:
        """What `make` builds of this batch for the watchers on `side` ("" spectators):
        built once, by the first of them to ask, and shared by all."""
        built = self.made.get(side)
        if built is None or (built.done() and (built.cancelled() or built.exception())):
            built = self.made[side] = asyncio.ensure_future(make())
            BUILT.inc()
        result: T = await asyncio.shield(built)
        return result


BEHIND_BATCH = Batch((), None, 0, behind=True)


class Watcher:
    """One stream's place in its game's feed: the batches of the feed it has taken (or
    skipped). The batches themselves are the feed's (its last `BUFFER`), and handing one
    out wakes only the watchers waiting for one (`Feed.hand`): a stream busy elsewhere (one
    whose client has not taken its last message: gRPC pulls the next only once a write
    completed) costs nothing per update, and takes what it missed when it asks again (from
    the feed's last batches or, fallen out of them, word that it is behind). Its shutdown is
    watched by one task for the stream's whole life."""

    def __init__(self, feed: Feed) -> None:
        self.feed = feed
        self.taken = feed.handed  # the feed's batches handed out before this one's turn
        self.waiting: asyncio.Future[None] | None = None  # while it waits in `next`
        self.stopped = False
        self._stopper: asyncio.Task[Any] | None = None

    async def next(self, shutdown: asyncio.Event, timeout: float | None = None) -> Batch | None:
        """The next batch (`BEHIND_BATCH` when the ones it missed are no longer held: it
        reads its way back, then takes batches again); None on shutdown (`shutdown` is the
        same event on every call) or after `timeout` seconds."""
        if self._stopper is None:
            self._stopper = asyncio.ensure_future(shutdown.wait())
            self._stopper.add_done_callback(self._stop)
        feed = self.feed
        while True:
            missed = feed.handed - self.taken
            if missed > len(feed.log):
                self.taken = feed.handed
                BEHIND.inc()
                return BEHIND_BATCH
            if missed:
                self.taken += 1
                return feed.log[-missed]
            if self.stopped or shutdown.is_set():
                return None
            self.waiting = asyncio.get_running_loop().create_future()
            feed.waiting.add(self)
            try:
                if timeout is None:
                    await self.waiting
                else:
                    await asyncio.wait_for(self.waiting, timeout)
            except TimeoutError:
                return None
            finally:
                self.waiting = None
                feed.waiting.discard(self)

    def wake(self) -> None:
        """Let `next` look again (a batch was handed out, or the server shuts down)."""
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result(None)

    def _stop(self, stopper: asyncio.Task[Any]) -> None:
        if not stopper.cancelled():
            self.stopped = True
            self.wake()

    def close(self) -> None:
        """Stop watching for shutdown."""
        if self._stopper is not None:
            self._stopper.cancel()


@dataclass(frozen=True)
class Caller:
    """Who opens a stream: its address (`limits.caller_address`), its player ("" without
    a token) and whether it holds a human seat of the unfinished game it watches."""

    address: str
    player: str = ""
    seated: bool = False


ANYONE = Caller("")  # a spectator from nowhere in particular (the hub's own tests)


class Feed:
    """The watchers of one game on this replica, and what they have been handed."""

    def __init__(self, hub: Hub, game_id: str, last_id: str) -> None:
        self.hub = hub
        self.game_id = game_id
        self.channel = keys.game_channel(game_id).encode()
        self.last_id = last_id  # the newest stream entry handed to the watchers
        self.watchers: set[Watcher] = set()
        self.log: deque[Batch] = deque(maxlen=BUFFER)  # the last batches handed out
        self.handed = 0  # batches handed out
        self.waiting: set[Watcher] = set()  # the watchers waiting for the next one
        self.listener: Listener | None = None
        # Spectators' reads (the game, a catch-up) by their `Hub.shared` key, kept for the
        # streams opening after them until the next batch is handed out (`Hub.shared`).
        self.kept: dict[Hashable, Kept] = {}
        self._stale = False  # woken since the last read began
        self._reading: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Something may have been appended: read it (once, however often woken)."""
        self._stale = True
        if self._reading is None or self._reading.done():
            self._reading = asyncio.create_task(self._read(), name=f"feed-{self.game_id}")

    async def _read(self) -> None:
        while self._stale and self.watchers:
            self._stale = False
            try:
                batch = await self._next()
            except asyncio.CancelledError:
                raise
            except FAILURES as error:
                batch = Batch((), None, 0, error)
            if batch is not None:
                await self.hand(batch)

    async def hand(self, batch: Batch) -> None:
        """Hand out a batch: kept among the last `BUFFER`, and the watchers waiting for one
        woken, `WAKE_SLICE` per turn of the event loop (a call ready meanwhile waits behind
        one slice of them, not all); a watcher not waiting is not touched."""
        self.log.append(batch)
        self.handed += 1
        self.kept.clear()  # read before this batch: a stream opening now would miss it
        waiting, self.waiting = self.waiting, set()
        WOKEN.inc(len(waiting))
        for index, watcher in enumerate(waiting):
            if index and not index % WAKE_SLICE:
                await asyncio.sleep(0)
            watcher.wake()

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


@dataclass(frozen=True)
class Kept:
    """A read kept by a feed: begun when the feed had handed out `handed` batches, at
    `at` (this process's clock)."""

    handed: int
    at: float
    result: Any


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
            await stopped(sender)

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
    """The feeds, listeners and admission of this replica's watchers; `store`, `redis` and
    `tokens` work over the hub's own Redis connections."""

    def __init__(
        self, store: Store, redis: Client, settings: Settings, tokens: Tokens | None = None
    ) -> None:
        self.store = store
        self.redis = redis
        self.tokens = tokens or Tokens(redis, store.scripts, settings)
        self.settings = settings
        self.feeds: dict[str, Feed] = {}
        self.listeners: dict[str, Listener] = {}
        self.watchers = 0  # open streams
        self.seated = 0  # of which seated players'
        self.by_address: Tally[str] = Tally()  # spectator streams by caller address
        self.by_player: Tally[str] = Tally()
        self._reads = asyncio.Semaphore(max(1, settings.watch_openings))
        self._turns = asyncio.Lock()  # the one read at a time while other calls are handled
        self.traffic = Traffic()  # the unary calls being handled (the servicer counts them)
        self._shared: dict[Hashable, asyncio.Task[Any]] = {}  # reads waiting for a permit
        self._line: deque[asyncio.Future[None]] = deque()  # streams waiting for their turn
        self.queued = 0  # stream openings without a token waiting for their first reads
        self.opening: Tally[str] = Tally()  # stream openings waiting or reading, by address

    def refuse(self, limit: str, what: str) -> Refusal:
        """RESOURCE_EXHAUSTED with a retry hint: `what` was full."""
        REFUSED.labels(limit).inc()
        hint = self.settings.retry_hint
        return Refusal(
            Code.RESOURCE_EXHAUSTED,
            Reason.TOO_MANY_WATCHERS,
            f"{what}; retry in {hint:g} s",
            metadata={"retry_after_ms": str(round(hint * 1000))},
            retry_after=hint,
        )

    def admit(self, caller: Caller = ANYONE) -> None:
        """RESOURCE_EXHAUSTED (with a retry hint) when the caller may not open one stream
        more: the replica holds its most (spectators: all but the seats' reserve), the
        caller's address its most spectator streams, or its player its most streams
        (asked before a watcher counts as present, and again by `subscribe`)."""
        s = self.settings
        most = s.max_watchers if caller.seated else max(0, s.max_watchers - s.watch_seat_reserve)
        if self.watchers >= most:
            raise self.refuse("replica", f"this server holds its most live streams ({most})")
        if not caller.seated and self.by_address[caller.address] >= s.max_watchers_per_address:
            raise self.refuse(
                "address",
                f"your address holds its most live streams here ({s.max_watchers_per_address})",
            )
        if caller.player and self.by_player[caller.player] >= s.max_watchers_per_player:
            raise self.refuse(
                "player", f"you hold your most live streams here ({s.max_watchers_per_player})"
            )

    @contextlib.asynccontextmanager
    async def arriving(self, address: str, *, queued: bool) -> AsyncIterator[None]:
        """A stream opening (until its first reads are done), one of its address's, at most
        `max_watchers_per_address`; one without a token (`queued`) also one of at most
        `watch_queue`. Past either: RESOURCE_EXHAUSTED with a retry hint."""
        s = self.settings
        if self.opening[address] >= s.max_watchers_per_address:
            raise self.refuse("address", "your address opens its most live streams at once")
        if queued and self.queued >= s.watch_queue:
            raise self.refuse("queue", "this server opens its most live streams at once")
        self.opening[address] += 1
        self.queued += queued
        try:
            yield
        finally:
            self.queued -= queued
            self.opening[address] -= 1
            if not self.opening[address]:
                del self.opening[address]

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        """Hold one of the `watch_openings` permits while a stream reads (and builds what it
        read: openings and catching up are worked on a few at once); while other calls are
        being handled (`traffic`), only one such read goes at a time."""
        async with self._reads:
            if self.traffic.calls:
                async with self._turns:
                    yield
            else:
                yield

    async def shared(self, key: Hashable, make: Callable[[], Awaitable[T]], game_id: str = "") -> T:
        """What `make` returns, worked out under a read permit (`reading`) once for all the
        streams asking for the same `key` while it waits for one (the watchers of one game
        at one position share one catch-up, built once). A stream asking once the read has
        begun waits for the next one: a read always begins after its streams subscribed.

        With the `game_id` of a watched game (spectators' reads), the read is kept by the
        game's feed, and a stream asking later takes it without a read, as long as the feed
        has handed out no batch since the read began (a stream that subscribed meanwhile
        takes every batch after it, so it misses nothing) and for `KEEP_SECONDS` at most:
        a burst of spectators opening on one game one after another costs one read and
        one build, not one each."""
        feed = self.feeds.get(game_id) if game_id else None
        kept = feed.kept.get(key) if feed is not None else None
        if kept is not None and time.monotonic() - kept.at <= KEEP_SECONDS:
            await self.turn()
            result: T = kept.result
            return result
        task = self._shared.get(key)
        if task is None:
            task = self._shared[key] = asyncio.create_task(self._share(key, make, game_id))
            task.add_done_callback(_retrieved)
        result = await asyncio.shield(task)
        await self.turn()  # the streams it wakes at once go on one at a time
        return result

    async def turn(self) -> None:
        """Wait for this stream's turn to go on while other calls are being handled
        (`traffic`): streams resumed at once (the watchers of one game handed one shared
        read) go on one per turn of the event loop, each letting the next go on the turn
        after its own, so a call that became ready meanwhile (a move's Redis reply) waits
        behind one stream's step, never behind all of them."""
        if not self.traffic.calls and not self._line:
            return
        mine = asyncio.get_running_loop().create_future()
        self._line.append(mine)
        if len(self._line) == 1:
            mine.set_result(None)
        try:
            await mine
        finally:
            if mine.done() and not mine.cancelled():  # its turn came: the next goes on next
                asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        self._line.popleft()
        while self._line and self._line[0].cancelled():  # left the line while waiting
            self._line.popleft()
        if self._line:
            self._line[0].set_result(None)

    async def _share(self, key: Hashable, make: Callable[[], Awaitable[T]], game_id: str) -> T:
        this = asyncio.current_task()
        try:
            async with self.reading():
                if self._shared.get(key) is this:
                    del self._shared[key]  # from now on, streams asking wait for another read
                feed = self.feeds.get(game_id) if game_id else None
                handed, began = (feed.handed if feed else 0), time.monotonic()
                result = await make()
                if feed is not None and self.feeds.get(game_id) is feed and feed.handed == handed:
                    if len(feed.kept) >= KEPT:
                        feed.kept.clear()
                    feed.kept[key] = Kept(handed, began, result)
                return result
        finally:
            if self._shared.get(key) is this:
                del self._shared[key]

    @contextlib.asynccontextmanager
    async def subscribe(self, game_id: str, caller: Caller = ANYONE) -> AsyncIterator[Watcher]:
        """The game's new entries from now on, for as long as the context lasts; refused
        when the caller may not open one stream more (`admit`)."""
        self.admit(caller)
        self._count(caller, 1)
        watcher: Watcher | None = None
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
            watcher = Watcher(feed)
            feed.watchers.add(watcher)
            yield watcher
        finally:
            if watcher is not None:
                watcher.close()
            self._count(caller, -1)
            if feed is not None and watcher is not None:
                feed.watchers.discard(watcher)
                if not feed.watchers and self.feeds.get(game_id) is feed:
                    del self.feeds[game_id]
                    FEEDS.dec()
                    feed.close()
                    if feed.listener is not None:
                        feed.listener.drop(feed)

    def _count(self, caller: Caller, change: int) -> None:
        self.watchers += change
        WATCHERS.inc(change)
        if caller.seated:
            self.seated += change
        else:
            self.by_address[caller.address] += change
            if not self.by_address[caller.address]:
                del self.by_address[caller.address]
        if caller.player:
            self.by_player[caller.player] += change
            if not self.by_player[caller.player]:
                del self.by_player[caller.player]

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
        """Stop every listener, feed and read."""
        for task in list(self._shared.values()):
            task.cancel()
        for feed in self.feeds.values():
            feed.close()
        for listener in list(self.listeners.values()):
            await stopped(listener.task)
        self.feeds.clear()
        self.listeners.clear()


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A shared read's failure is its streams' (and not logged again when they all left)."""
    if not task.cancelled():
        task.exception()


def finished_at(game: GameRecord | None, version: int) -> bool:
    """True when `version` is the last version of a finished game."""
    return game is not None and game.status == GameStatus.FINISHED and version >= game.version
