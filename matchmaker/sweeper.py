"""The sweeper: every replica's background worker for work that is due without a call.

Clock flags, abandoned games, bot turns and draw offers to bots, pending ratings and open
games nobody joined all live in one index, sharded by game id: `keys.due(shard)` (game id
-> when, ms; `schedule.py` says when). The sweeper does that work (`work_on`): it flags
clocks, looks at who is present and forfeits a side that left and did not come back after
its warning (`presence.py`), has the bot answer draw offers and move (a bot that cannot
move resigns), settles pending ratings and closes open games nobody joined. Each piece of
work has its own request id, sent to the engine with every call it makes.

Each round it looks at every shard's earliest entry at once (`Store.due_now`, one
pipelined read), then claims due games in the shards that have one, starting each round one
shard further, with `claim_due.lua`, which pushes each claimed game a short lease ahead
(`sweep_lease`), so replicas never work on one game at once. While the work runs the claim
is renewed every third of the lease (`renew_due.lua`); a replica that dies stops renewing,
and the others take its games over within one lease. Whatever a sweeper does goes through
the ordinary version-checked commit, so even a lease that ran out cannot corrupt a game.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import structlog
from prometheus_client import Counter

from matchmaker import clocks
from matchmaker.bot import Bot
from matchmaker.engine import EngineError, EngineFailure, refusal_status
from matchmaker.metrics import BOT_REPLY
from matchmaker.play import Play, Played, resignation
from matchmaker.presence import Presence
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.redis_client import TRANSIENT_ERRORS
from matchmaker.schedule import next_due, offered_to_bot, open_until
from matchmaker.seating import Seating
from matchmaker.settings import Settings
from matchmaker.store import Store
from matchmaker.workers import every
from wargame.runtime.calls import new_request_id
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2

log = structlog.get_logger(component="matchmaker")

SWEPT = Counter("wargame_matchmaker_sweeps_total", "Due games worked on by the sweeper", ["result"])
RETRY_MS = 2000  # a game whose work failed (Redis away, a bug) is tried again after this
# ... and one whose work found the engine away, sooner: a bot moves within this (and the
# channels' reconnection, `engine.MAX_RECONNECT_MS`) of the engine's return.
ENGINE_RETRY_MS = 500


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
        self,
        *,
        store: Store,
        bot: Bot,
        play: Play,
        seating: Seating,
        presence: Presence,
        settings: Settings,
    ) -> None:
        self.store = store
        self.bot = bot
        self.play = play
        self.seating = seating
        self.presence = presence
        self.settings = settings
        self.poke = asyncio.Event()
        self._slots = asyncio.Semaphore(settings.sweep_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._first_shard = 0  # where the next round starts claiming (every shard in turn)

    async def run(self, stop: asyncio.Event) -> None:
        """Sweep every interval (at once when poked) until `stop` is set."""
        await every(self.settings.sweep_interval, self.poke, stop, self._claim, "sweep failed")

    async def _claim(self) -> None:
        """Claim as many due games as there are free slots, shard by shard (of the shards
        with a game due, looked at first), and start their work."""
        free = self.settings.sweep_concurrency - len(self._tasks)
        if free <= 0:
            return
        shards = len(self.store.due_keys)
        start, self._first_shard = self._first_shard % shards, self._first_shard + 1
        lease_ms = int(self.settings.sweep_lease * 1000)
        for shard in sorted(await self.store.due_now(), key=lambda due: (due - start) % shards):
            if free <= 0:
                return
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
        with structlog.contextvars.bound_contextvars(
            game_id=claim.game_id, worker="sweeper", request_id=new_request_id()
        ):
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
                if isinstance(error, EngineFailure):
                    log.error("due work failed: engine", error=str(error), engine=error.engine)
                    return await self.store.time_ms() + ENGINE_RETRY_MS
                # A refusal, or Redis failing over: no traceback.
                expected = isinstance(error, (Refusal, *TRANSIENT_ERRORS))
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
                await self.seating.close_open(game, now)
                return None
            return next_due(game, now, self.settings)
        if game.status == GameStatus.FINISHED:
            if game.rating_status == RatingStatus.PENDING:
                await self.play.settle_ratings(game)
            return None
        played: Played | None = None
        try:
            played, game = await self._timeouts(game, now)
            if played is None:
                played = await self._bot_turn(game)
        except Refusal as error:
            if error.reason == Reason.VERSION_CONFLICT:
                return now  # someone moved meanwhile: look again at once
            raise
        if played is None:
            return next_due(game, await self.store.time_ms(), self.settings)
        if (
            played.game.status == GameStatus.FINISHED
            and played.game.rating_status != RatingStatus.PENDING
        ):
            return None
        return next_due(played.game, played.now_ms, self.settings)

    async def _timeouts(self, game: GameRecord, now: int) -> tuple[Played | None, GameRecord]:
        """Clocks that ran out end the game; a side to act that left and was warned loses
        as abandoned once its deadline has passed. Returns what was played, if anything,
        and the game with its presence brought up to date."""
        if game.clock is not None:
            fallen = clocks.fallen(game.clock, now)
            if fallen:
                log.info("time ran out", game_id=game.id, sides=list(fallen))
                return await self.play.flag(game, now, fallen), game
        reviewed = await self.presence.review(game)
        if reviewed is None:
            raise Refusal(Code.ABORTED, Reason.VERSION_CONFLICT, "the game changed meanwhile")
        now = await self.store.time_ms()
        for seat in reviewed.seats:
            deadline = reviewed.warned.get(seat.side)
            if (
                seat.kind == SeatKind.HUMAN
                and seat.side in reviewed.to_act()
                and deadline is not None
                and now >= deadline
            ):
                log.info("abandoned", game_id=game.id, side=seat.side)
                played = await self.play.forfeit(
                    reviewed, now, seat.side, game_pb2.OUTCOME_REASON_ABANDONED
                )
                return played, reviewed
        return None, reviewed

    async def _bot_turn(self, game: GameRecord) -> Played | None:
        """The bot answers a draw offer made to it, or plays when it is to act."""
        offered = offered_to_bot(game)
        if offered is not None:
            action = await self.bot.answer_draw(game, offered)
            log.info(
                "the bot answers a draw offer", game_id=game.id, action=action.WhichOneof("kind")
            )
            return await self.play.commit(game, await self.store.time_ms(), [action])
        bot = game.seated_to_act(SeatKind.BOT)
        if bot is not None:
            return await self._bot_move(game, bot)
        return None

    async def _bot_move(self, game: GameRecord, seat: Seat) -> Played:
        """The bot's action for its side; a bot that cannot move resigns."""
        started = time.perf_counter()
        try:
            action = await self.bot.action(game, seat)
        except EngineError as refusal:
            if refusal.details.reason == Reason.ENGINE_BUSY:
                # The engine is busy (its search pool full, or the search stopped at its
                # limit on a starved machine): the bot thinks again when the game is due
                # again; resigning would lose a game to a busy server.
                raise refusal_status(refusal, stored_session=True) from None
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
        BOT_REPLY.observe(max(0, played.now_ms - game.updated_ms) / 1000)
        log.debug(
            "bot moved",
            game_id=game.id,
            side=seat.side,
            moves=[entry.public for entry in played.game.moves[len(game.moves) :]],
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
