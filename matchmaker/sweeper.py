"""The sweeper: every replica's background worker for work that is due without a call.

Clock flags, abandoned games, bot turns, pending ratings and open games nobody joined all
live in one index, `keys.due()` (game id -> when, ms). A sweeper claims due games with
`claim_due.lua`, which pushes each claimed game a lease ahead, so replicas never work on
one game at once while the lease lasts, and a replica killed mid-work leaves its games to
the others when the lease runs out. Whatever it does goes through the ordinary version-
checked commit, so even an expired lease cannot corrupt a game.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog
from prometheus_client import Counter

from matchmaker.errors import ServiceError
from matchmaker.sessions import Sessions
from matchmaker.settings import Settings
from matchmaker.store import Store

log = structlog.get_logger(component="matchmaker")

SWEPT = Counter("wargame_matchmaker_sweeps_total", "Due games worked on by the sweeper", ["result"])
RETRY_MS = 2000  # a game whose work failed (engine or Redis away) is tried again after this


class Sweeper:
    """Claims due games and does their work, a bounded number at a time."""

    def __init__(self, store: Store, sessions: Sessions, settings: Settings) -> None:
        self.store = store
        self.sessions = sessions
        self.settings = settings
        self.poke = asyncio.Event()
        self._slots = asyncio.Semaphore(settings.sweep_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Sweep every interval (at once when poked) until `stop` is set."""
        lease_ms = int(self.settings.sweep_lease * 1000)
        while not stop.is_set():
            free = self.settings.sweep_concurrency - len(self._tasks)
            try:
                if free > 0:
                    lease, game_ids = await self.store.claim_due(
                        lease_ms, min(free, self.settings.sweep_batch)
                    )
                    for game_id in game_ids:
                        task = asyncio.create_task(
                            self._work(game_id, lease), name=f"sweep-{game_id}"
                        )
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("sweep failed", error=str(error) or type(error).__name__)
            self.poke.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.poke.wait(), self.settings.sweep_interval)

    async def _work(self, game_id: str, lease: int) -> None:
        async with self._slots:
            with structlog.contextvars.bound_contextvars(game_id=game_id, worker="sweeper"):
                try:
                    when = await self.sessions.work_on(game_id)
                    SWEPT.labels("ok").inc()
                except asyncio.CancelledError:
                    raise
                except Exception as error:
                    SWEPT.labels("failed").inc()
                    level = log.info if isinstance(error, ServiceError) else log.warning
                    level(
                        "due work failed; retrying later",
                        error=str(error) or type(error).__name__,
                        exc_info=not isinstance(error, ServiceError),
                    )
                    try:
                        when = await self.store.time_ms() + RETRY_MS
                    except Exception:
                        return  # Redis away: the lease runs out and a sweeper retries
                try:
                    await self.store.reschedule(game_id, lease, when)
                except Exception as error:
                    log.warning("reschedule failed", error=str(error) or type(error).__name__)

    async def drain(self, timeout: float) -> None:
        """Let the games being worked on finish (at shutdown), up to `timeout` s."""
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in pending:
                task.cancel()
