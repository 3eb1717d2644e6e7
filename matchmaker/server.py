"""One matchmaker replica: its Redis client, engine client, parts, workers and server.

`Replica.connect` finds out what the URL names (a standalone Redis or a Redis Cluster,
`redis_client.py`), loads the scripts and puts the parts together; `main.py` runs it until
SIGTERM, tests run it in a thread on port 0. Everything a replica holds in memory is a
cache or a connection: all state is in Redis, so replicas come and go freely.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from matchmaker.bot import Bot
from matchmaker.engine import Engine
from matchmaker.handling import set_retry_hint
from matchmaker.limits import Limits
from matchmaker.play import Play
from matchmaker.players import Players
from matchmaker.presence import Presence
from matchmaker.queue import Pairer, Queues
from matchmaker.redis_client import (
    WATCH_CLIENT_NAME,
    BadRedisUrlError,
    Client,
    RedisSetupError,
    connect,
)
from matchmaker.schema import SETUP_ERRORS
from matchmaker.scripts import Scripts
from matchmaker.seating import Seating
from matchmaker.service import SERVICE_NAME, MatchmakerService
from matchmaker.settings import Settings
from matchmaker.store import Store
from matchmaker.sweeper import Sweeper
from matchmaker.tokens import Tokens
from matchmaker.vault import check_secret_key
from matchmaker.watch import Hub
from matchmaker.workers import stopped
from wargame.runtime.config import ConfigError
from wargame.runtime.logs import redact_url, scrub
from wargame.runtime.serving import AioServing, create_aio_server, register_service
from wargame.runtime.tls import ServerTLS
from wargame.v1 import matchmaker_pb2

log = structlog.get_logger(component="matchmaker")


class Replica:
    """The parts of one matchmaker replica, wired together."""

    def __init__(
        self, settings: Settings, redis: Client, watch_redis: Client | None = None
    ) -> None:
        check_secret_key(settings.secret_key)
        self.settings = settings
        set_retry_hint(settings.retry_hint)
        self.redis = redis
        self.scripts = Scripts(self.redis)
        self.store = Store(self.redis, self.scripts, settings, wake=self._wake_sweeper)
        self.engine = Engine(settings.engine, settings)
        self.tokens = Tokens(self.redis, self.scripts, settings)
        self.players = Players(self.redis, self.scripts, settings)
        self.limits = Limits(self.scripts, settings)
        self.presence = Presence(self.store, self.scripts, settings)
        self.seating = Seating(self.store, self.engine, self.players, settings, self.limits)
        self.play = Play(self.store, self.engine, self.players, settings)
        self.bot = Bot(self.engine, self.store.vault, settings)
        self.sweeper = Sweeper(
            store=self.store,
            bot=self.bot,
            play=self.play,
            seating=self.seating,
            presence=self.presence,
            settings=settings,
        )
        self.queues = Queues(
            redis=self.redis,
            scripts=self.scripts,
            engine=self.engine,
            players=self.players,
            seating=self.seating,
            settings=settings,
        )
        self.pairer = Pairer(self.queues, settings.pair_interval)
        # Watchers read over their own connections (`watch_redis`): a burst of spectators
        # never takes those of moves, clocks, bots and pairing.
        self.watch_redis = watch_redis or redis
        watch_scripts = Scripts(self.watch_redis)
        self.hub = Hub(
            Store(self.watch_redis, watch_scripts, settings),
            self.watch_redis,
            settings,
            Tokens(self.watch_redis, watch_scripts, settings),
        )
        self.service = MatchmakerService(
            settings=settings,
            store=self.store,
            engine=self.engine,
            tokens=self.tokens,
            players=self.players,
            seating=self.seating,
            play=self.play,
            queues=self.queues,
            hub=self.hub,
            limits=self.limits,
            presence=self.presence,
        )
        self.service.poke_pairer = self.pairer.poke.set
        self.stopping = asyncio.Event()
        self._workers: list[asyncio.Task[None]] = []

    def _wake_sweeper(self) -> None:
        self.sweeper.poke.set()

    @classmethod
    async def connect(cls, settings: Settings) -> Replica:
        """A replica on the Redis (or Redis Cluster) of `settings.redis_url`, its scripts
        loaded; start-up fails with one clear line when Redis cannot be used."""
        where = f"cannot use Redis at {redact_url(settings.redis_url)}"
        try:
            redis = await connect(
                settings.redis_url,
                socket_timeout=settings.redis_timeout,
                connections=settings.redis_connections,
            )
            watch_redis = await connect(
                settings.redis_url,
                socket_timeout=settings.redis_timeout,
                connections=settings.watch_connections,
                name=WATCH_CLIENT_NAME,
            )
        except BadRedisUrlError as error:
            raise ConfigError(
                f"--redis-url {redact_url(settings.redis_url)}: {scrub(str(error))}"
            ) from None
        except RedisSetupError as error:
            raise ConfigError(f"{where}: {scrub(str(error))}") from None
        replica = cls(settings, redis, watch_redis)
        try:
            await replica.scripts.load()
            await replica.store.agree_shards()
        except SETUP_ERRORS as error:
            await replica.close()
            raise ConfigError(f"{where}: {scrub(str(error))}") from None
        return replica

    def server(
        self, listen: str, *, tls: ServerTLS | None = None, health_listen: str | None = None
    ) -> AioServing:
        """The gRPC server (bound, not started) with health checking and reflection; TLS-only
        with `tls`, and a plaintext health port on `health_listen`; every watcher the
        replica may hold can (re)connect at once."""
        return create_aio_server(
            listen,
            # Registered with tolerant decoding: undecodable bytes become INVALID_ARGUMENT.
            lambda server: register_service(
                server, self.service, matchmaker_pb2.DESCRIPTOR.services_by_name["Matchmaker"]
            ),
            [SERVICE_NAME],
            pending_calls=self.settings.max_watchers + 3000,
            tls=tls,
            health_address=health_listen,
        )

    def start_workers(self) -> None:
        """Start the sweeper, the pairer and the presence renewal of this replica."""
        self._workers = [
            asyncio.create_task(self.sweeper.run(self.stopping), name="sweeper"),
            asyncio.create_task(self.pairer.run(self.stopping), name="pairer"),
            asyncio.create_task(self.presence.run(self.stopping), name="presence"),
        ]

    def begin_shutdown(self) -> None:
        """Stop taking work: streams end, workers stop looking for more."""
        self.service.shutdown.set()
        self.stopping.set()
        self.sweeper.poke.set()
        self.pairer.poke.set()
        self.presence.poke.set()

    async def shutdown(self, serving: AioServing | None, grace: float) -> None:
        """Graceful stop: streams end, in-flight calls and sweeps finish within `grace`."""
        self.begin_shutdown()
        if serving is not None:
            await serving.stop(grace)
        await self.sweeper.drain(grace)
        for task in self._workers:
            await stopped(task)
        await self.close()

    async def close(self) -> None:
        """Close every connection."""
        await self.hub.close()
        for client in {id(self.redis): self.redis, id(self.watch_redis): self.watch_redis}.values():
            with contextlib.suppress(Exception):
                await client.aclose()
        with contextlib.suppress(Exception):
            await self.engine.close()
