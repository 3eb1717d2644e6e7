"""The sweeper: every replica's background worker for work that is due without a call.

Clock flags, abandoned games, bot turns, pending ratings and open games nobody joined all
live in one index, sharded by game id: `keys.due(shard)` (game id -> when, ms;
`schedule.py` says when). The sweeper does that work (`work_on`): it flags clocks,
forfeits abandoned games, moves for bots (a bot that cannot move resigns), settles pending
ratings and closes open games nobody joined.

It claims due games shard by shard, starting each round one shard further, with
`claim_due.lua`, which pushes each claimed game a short lease ahead (`sweep_lease`), so
replicas never work on one game at once. While the work runs the claim is renewed every
third of the lease (`renew_due.lua`); a replica that dies stops renewing, and the others
take its games over within one lease. Whatever a sweeper does goes through the ordinary
version-checked commit, so even a lease that ran out cannot corrupt a game.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import structlog
from prometheus_client import Counter

from matchmaker import clocks
from matchmaker.engine import Engine, EngineError
from matchmaker.play import Play, Played, resignation
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.redis_client import TRANSIENT_ERRORS
from matchmaker.schedule import abandoned_at, next_due, open_until
from matchmaker.sessions import Sessions
from matchmaker.settings import Settings
from matchmaker.store import Store
from matchmaker.workers import every
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2

log = structlog.get_logger(component="matchmaker")

SWEPT = Counter("wargame_matchmaker_sweeps_total", "Due games worked on by the sweeper", ["result"])
RETRY_MS = 2000  # a game whose work failed (engine or Redis away) is tried again after this


def bot_seed(game_id: str, side: str) -> int:
    """A stable search seed per game and side, so the engine can derive a bot's secret
    deployment again when it must reveal it (the engine keeps nothing between calls)."""
    return int.from_bytes(hashlib.sha256(f"{game_id}/{side}".encode()).digest()[:8], "big") or 1


@dataclass
class Claim:
    """A game this replica works on: the due-index shard it was claimed from and the lease
    score it holds there (renewed while the work runs)."""

    shard: int
    game_id: str
    lease: int


class Sweeper:
    """Claims due games and does their work, a bounded number at a time."""

    def __init__(
        self, store: Store, engine: Engine, play: Play, sessions: Sessions, settings: Settings
    ) -> None:
        self.store = store
        self.engine = engine
        self.play = play
        self.sessions = sessions
        self.settings = settings
        self.poke = asyncio.Event()
        self._slots = asyncio.Semaphore(settings.sweep_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._first_shard = 0  # where the next round starts claiming (every shard in turn)

    async def run(self, stop: asyncio.Event) -> None:
        """Sweep every interval (at once when poked) until `stop` is set."""
        await every(self.settings.sweep_interval, self.poke, stop, self._claim, "sweep failed")

    async def _claim(self) -> None:
        """Claim as many due games as there are free slots, shard by shard, and start their
        work."""
        free = self.settings.sweep_concurrency - len(self._tasks)
        shards = self.store.read_shards
        start, self._first_shard = self._first_shard % shards, self._first_shard + 1
        lease_ms = int(self.settings.sweep_lease * 1000)
        for step in range(shards):
            if free <= 0:
                return
            shard = (start + step) % shards
            lease, game_ids = await self.store.claim_due(
                shard, lease_ms, min(free, self.settings.sweep_batch)
            )
            free -= len(game_ids)
            for game_id in game_ids:
                claim = Claim(shard, game_id, lease)
                task = asyncio.create_task(self._work(claim), name=f"sweep-{game_id}")
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _work(self, claim: Claim) -> None:
        """Work on a claimed game under a renewed lease, then set when it is next due."""
        with structlog.contextvars.bound_contextvars(game_id=claim.game_id, worker="sweeper"):
            log.debug("due game claimed", shard=claim.shard, lease=claim.lease)
            try:
                async with self._renewing(claim):
                    when = await self._attempt(claim.game_id)
                await self.store.reschedule(claim.shard, claim.game_id, claim.lease, when)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis away: the lease runs out and a sweeper retries
                log.warning("reschedule failed", error=str(error) or type(error).__name__)

    async def _attempt(self, game_id: str) -> int | None:
        """Do a game's due work: when it is next due (soon again after a failure)."""
        async with self._slots:
            try:
                when = await self.work_on(game_id)
                SWEPT.labels("ok").inc()
                return when
            except asyncio.CancelledError:
                raise
            except Exception as error:
                SWEPT.labels("failed").inc()
                expected = isinstance(error, (Refusal, *TRANSIENT_ERRORS))  # Redis failing over
                level = log.info if expected else log.warning
                level(
                    "due work failed; retrying later",
                    error=str(error) or type(error).__name__,
                    exc_info=not expected,
                )
                return await self.store.time_ms() + RETRY_MS

    @contextlib.asynccontextmanager
    async def _renewing(self, claim: Claim) -> AsyncIterator[None]:
        """Renew the claim's lease every third of it for as long as the context lasts (the
        heartbeat); a claim lost meanwhile (a writer made the game due sooner) is left."""
        stop = asyncio.Event()
        lease_ms = int(self.settings.sweep_lease * 1000)

        async def beat() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.settings.sweep_lease / 3)
                if stop.is_set():
                    return
                try:
                    lease = await self.store.renew(
                        claim.shard, claim.game_id, claim.lease, lease_ms
                    )
                except Exception as error:  # Redis away: try again at the next beat
                    log.info("lease not renewed", error=str(error) or type(error).__name__)
                    continue
                if not lease:
                    return
                claim.lease = lease

        heartbeat = asyncio.create_task(beat(), name=f"lease-{claim.game_id}")
        try:
            yield
        finally:
            stop.set()
            await heartbeat

    # -- the work ---------------------------------------------------------------------------

    async def work_on(self, game_id: str) -> int | None:
        """Do what is due for a game; returns when it is next due (None: never)."""
        game, now, _ = await self.store.load(game_id)
        if game is None:
            return None
        if game.status == GameStatus.OPEN:
            if now >= open_until(game, self.settings):
                await self.sessions.close_open(game, now)
                return None
            return next_due(game, now, self.settings)
        if game.status == GameStatus.FINISHED:
            if game.rating_status == RatingStatus.PENDING:
                await self.play.settle_ratings(game)
            return None
        played: Played | None = None
        try:
            played = await self._timeouts(game, now)
            if played is None:
                bot = game.seated_to_act(SeatKind.BOT)
                if bot is not None:
                    played = await self._bot_move(game, bot)
        except Refusal as error:
            if error.reason == Reason.VERSION_CONFLICT:
                return now  # someone moved meanwhile: look again at once
            raise
        if played is None:
            return next_due(game, now, self.settings)
        if (
            played.game.status == GameStatus.FINISHED
            and played.game.rating_status != RatingStatus.PENDING
        ):
            return None
        return next_due(played.game, played.now_ms, self.settings)

    async def _timeouts(self, game: GameRecord, now: int) -> Played | None:
        """A side whose clock ran out loses on time; a silent human side, as abandoned."""
        if game.clock is not None:
            side = clocks.flagged(game.clock, now)
            if side is not None:
                log.info("lost on time", game_id=game.id, side=side)
                return await self.play.forfeit(game, now, side, game_pb2.OUTCOME_REASON_TIME)
        if now >= abandoned_at(game, self.settings):
            seat = game.seated_to_act(SeatKind.HUMAN)
            if seat is not None:
                log.info("abandoned", game_id=game.id, side=seat.side)
                return await self.play.forfeit(
                    game, now, seat.side, game_pb2.OUTCOME_REASON_ABANDONED
                )
        return None

    async def _bot_move(self, game: GameRecord, seat: Seat) -> Played:
        """The engine's suggestion for a bot's side; a bot that cannot move resigns."""
        seconds = (game.bot_ms or int(self.settings.bot_time * 1000)) / 1000
        started = time.perf_counter()
        try:
            reply = await self.engine.suggest(
                game.state, seat.side, seconds, bot_seed(game.id, seat.side)
            )
            action = game_pb2.Action()
            action.CopyFrom(reply.action)
            if not action.side:
                action.side = seat.side
        except EngineError as refusal:
            # A bot that cannot find an action would hold the game forever: it resigns.
            log.warning(
                "bot resigns: no suggestion",
                game_id=game.id,
                reason=refusal.details.reason,
                message=refusal.details.message,
            )
            action = resignation(seat.side)
        now = await self.store.time_ms()
        try:
            played = await self.play.commit(game, now, [action])
        except Refusal as error:
            if error.code not in (Code.FAILED_PRECONDITION, Code.INVALID_ARGUMENT):
                raise
            if (
                error.reason in (Reason.VERSION_CONFLICT, Reason.GAME_OVER)
                or action.WhichOneof("kind") == "resign"
            ):
                raise
            # The engine refused its own suggestion: resigning beats holding the game forever.
            log.warning(
                "bot resigns: its action was refused",
                game_id=game.id,
                reason=error.reason,
                message=error.message,
            )
            played = await self.play.commit(game, now, [resignation(seat.side)])
        log.debug(
            "bot moved",
            game_id=game.id,
            side=seat.side,
            notation=list(played.notations),
            think_ms=round((time.perf_counter() - started) * 1000),
        )
        return played

    # -- shutdown ---------------------------------------------------------------------------

    async def drain(self, timeout: float) -> None:
        """Let the games being worked on finish (at shutdown), up to `timeout` s."""
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in pending:
                task.cancel()
