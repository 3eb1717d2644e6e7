"""Matchmaker fixtures: settings for tests, an in-process replica on port 0, real processes.

The in-process replica runs its own asyncio loop in a thread (the tests themselves are
synchronous gRPC clients); processes are real `python -m matchmaker.main serve` runs.
Timeouts are short so clocks, abandonment and sweeps happen in seconds.

`redis_url` is the session's standalone Redis, flushed; a test marked `@both_stores` runs
twice, the second time on a real 3-primary Redis Cluster (`redis_cluster`), through the
same URL-only configuration.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import warnings
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest
import redis

from matchmaker.server import Replica
from matchmaker.settings import Settings
from tests.servers import (
    RedisClusterServers,
    RedisServer,
    ServiceProcess,
    start_engine,
    start_redis_cluster,
    start_service,
)
from wargame.v1 import engine_pb2_grpc, matchmaker_pb2, matchmaker_pb2_grpc

T = TypeVar("T")
SERVICE = "wargame.v1.Matchmaker"


# Runs a test on a standalone Redis and on a Redis Cluster.
both_stores = pytest.mark.parametrize("redis_url", ["standalone", "cluster"], indirect=True)


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterServers]:
    """A real Redis Cluster of 3 primaries for the session, on free loopback ports."""
    cluster = start_redis_cluster(tmp_path_factory.mktemp("redis-cluster"), primaries=3)
    yield cluster
    cluster.stop()


def flush_cluster(cluster: RedisClusterServers) -> None:
    """Empty every primary of a cluster (replicas follow)."""
    client = redis.RedisCluster.from_url(cluster.url)
    try:
        client.flushall(target_nodes=redis.RedisCluster.PRIMARIES)
    finally:
        client.close()


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, redis_server: RedisServer) -> str:
    """The session's Redis (or, parametrized "cluster", its Redis Cluster), flushed."""
    if getattr(request, "param", "standalone") == "cluster":
        cluster: RedisClusterServers = request.getfixturevalue("redis_cluster")
        flush_cluster(cluster)
        return cluster.url
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


# The matchmaker secret key of the in-process replicas (32 distinct bytes, not a placeholder).
TEST_SECRET_KEY = bytes(range(101, 133))


def fast_settings(redis_url: str, engine: str = "127.0.0.1:1", **changes: Any) -> Settings:
    """Settings for tests: fast sweeps, pairing and presence, no rate limits unless asked."""
    base = Settings(
        redis_url=redis_url,
        engine=engine,
        secret_key=TEST_SECRET_KEY,
        rate_limit=0.0,
        register_peer_rate=0.0,
        register_rate=0.0,
        presence_interval=0.2,
        presence_ttl=3.0,  # a busy machine may hold a renewal up for a second
        presence_check=0.5,
        sweep_interval=0.05,
        pair_interval=0.05,
        queue_status_interval=0.1,
        match_create_grace=1.0,
        engine_timeout=10.0,
        retry_hint=0.5,
        grace=2.0,
        watch_block=1.0,
        bot_time=0.05,
    )
    return dataclasses.replace(base, **changes)


class InProcessMatchmaker:
    """A matchmaker replica served on a free port by an asyncio loop in a thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.address = ""
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="matchmaker", daemon=True)
        self.replica: Replica | None = None

    def start(self) -> InProcessMatchmaker:
        """Start serving; returns when the server is up."""
        self._thread.start()
        if not self._ready.wait(30):
            raise TimeoutError("the in-process matchmaker did not start")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # reported to the starting thread
            self._error = error
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        replica = await Replica.connect(self.settings)
        self.replica = replica
        serving = replica.server("127.0.0.1:0")
        await serving.start()
        replica.start_workers()
        self.address = f"127.0.0.1:{serving.port}"
        self._ready.set()
        await self._stop.wait()
        await replica.shutdown(serving, grace=self.settings.grace)

    def call(self, function: Callable[[Replica], Coroutine[Any, Any, T]], timeout: float = 30) -> T:
        """Run `function(replica)` on the server's loop (to reach its parts directly)."""
        assert self._loop is not None and self.replica is not None
        future = asyncio.run_coroutine_threadsafe(function(self.replica), self._loop)
        return future.result(timeout)

    def stop(self) -> None:
        """Stop gracefully and wait for the thread (once; later calls do nothing). A stop
        that takes longer than 30 s (a grace of 2 s) is left behind with a warning that says
        where its tasks wait, for the suite's summary."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        if self._thread.is_alive() and self._loop is not None:
            tasks = [  # (read from another thread: a look, for the warning)
                f"{task.get_name()}: {chain}"
                for task in asyncio.all_tasks(self._loop)
                if (chain := awaiting(task.get_coro()))
            ]
            warnings.warn(
                "the in-process matchmaker did not stop within 30 s; its tasks wait in\n"
                + "\n".join(sorted(tasks) or ["(none: the loop's own ending, asyncio.run's)"]),
                stacklevel=2,
            )


def awaiting(coroutine: Any) -> str:
    """Where a suspended Python coroutine waits: each function of its chain of awaits,
    outermost first, with its line ("" for gRPC's own, compiled)."""
    chain = []
    while coroutine is not None and getattr(coroutine, "cr_frame", None) is not None:
        frame = coroutine.cr_frame
        if not frame.f_code.co_filename.endswith(".py"):
            break
        chain.append(
            f"{frame.f_code.co_name} ({Path(frame.f_code.co_filename).name}:{frame.f_lineno})"
        )
        coroutine = coroutine.cr_await
    return " > ".join(chain)


@pytest.fixture
def make_matchmaker(redis_url: str) -> Iterator[Callable[..., InProcessMatchmaker]]:
    """Start in-process replicas on the flushed Redis: `make_matchmaker(engine=..., **settings)`."""
    started: list[InProcessMatchmaker] = []

    def make(engine: str = "127.0.0.1:1", **changes: Any) -> InProcessMatchmaker:
        server = InProcessMatchmaker(fast_settings(redis_url, engine, **changes)).start()
        started.append(server)
        return server

    yield make
    for server in reversed(started):
        server.stop()


@pytest.fixture
def replica(
    make_matchmaker: Callable[..., InProcessMatchmaker], engine_address: str
) -> Callable[..., InProcessMatchmaker]:
    """Start replicas with the in-process engine and these settings: `replica(**settings)`."""

    def make(**changes: Any) -> InProcessMatchmaker:
        return make_matchmaker(engine=engine_address, **changes)

    return make


@pytest.fixture
def matchmaker(replica: Callable[..., InProcessMatchmaker]) -> InProcessMatchmaker:
    """One in-process replica with the in-process engine."""
    return replica()


class Client:
    """A player's view of the matchmaker: a stub and its token."""

    def __init__(self, address: str, name: str = "", token: str = "") -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(self.channel)
        self.token = token
        self.player_id = ""
        if name:
            reply = self.stub.RegisterPlayer(
                matchmaker_pb2.RegisterPlayerRequest(display_name=name), timeout=10
            )
            self.token = reply.token
            self.player_id = reply.player.id
            self.token_id = reply.token_id

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The authorization metadata of this player."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.stub, name)

        def call(request: Any, timeout: float = 30, **kwargs: Any) -> Any:
            return method(request, metadata=self.metadata, timeout=timeout, **kwargs)

        return call

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()


@pytest.fixture
def clients() -> Iterator[Callable[..., Client]]:
    """Make registered clients of an address; closed after the test."""
    made: list[Client] = []

    def make(address: str, name: str = "") -> Client:
        client = Client(address, name)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def players_of(address: str, clients: Callable[..., Client], *sides: str) -> dict[str, Client]:
    """Players registered at `address`, one a side, each named after its side ("South")."""
    return {side: clients(address, side.capitalize()) for side in sides}


@pytest.fixture
def war_players(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> dict[str, Client]:
    """South and North, registered on `matchmaker`, by the Game of War side each will play."""
    return players_of(matchmaker.address, clients, "south", "north")


@pytest.fixture
def napoleonic_players(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> dict[str, Client]:
    """Red and Black, registered on `matchmaker`, by the Napoleonic side each will play."""
    return players_of(matchmaker.address, clients, "red", "black")


WarReplica = Callable[..., tuple[InProcessMatchmaker, dict[str, Client]]]


@pytest.fixture
def war_replica(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> WarReplica:
    """Start a replica with these settings and register South and North on it:
    `server, players = war_replica(**settings)`."""

    def make(**changes: Any) -> tuple[InProcessMatchmaker, dict[str, Client]]:
        server = replica(**changes)
        return server, players_of(server.address, clients, "south", "north")

    return make


@pytest.fixture
def ada(matchmaker: InProcessMatchmaker, clients: Callable[..., Client]) -> Client:
    """Ada, registered on `matchmaker`: the player of tests that need one."""
    return clients(matchmaker.address, "Ada")


def start_matchmaker_process(
    directory: Path,
    redis_url: str,
    engine: str,
    *extra: str,
    name: str = "matchmaker",
    env: dict[str, str] | None = None,
) -> ServiceProcess:
    """A real `wargame-matchmaker serve` process with fast test timings."""
    args = [
        "--redis-url", redis_url, "--engine", engine, "--metrics-listen", "off",
        "--rate-limit", "0", "--sweep-interval", "0.05", "--pair-interval", "0.05",
        "--queue-status-interval", "0.1", "--match-create-grace", "1", "--retry-hint", "0.5",
        "--watch-block", "1", "--bot-time", "0.05", "--grace", "5",
        "--register-peer-rate", "0", "--register-rate", "0", "--presence-interval", "0.2",
        "--presence-ttl", "3", "--presence-check", "0.5", *extra,
    ]  # fmt: skip
    return start_service(
        "matchmaker.main", args, log_path=directory / f"{name}.log", service=SERVICE, env=env
    )


@pytest.fixture(scope="session")
def engine_stub(engine_address: str) -> Iterator[Any]:
    """A RulesEngine stub for tests to choose legal actions and replay records."""
    with grpc.insecure_channel(engine_address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)


def start_engine_process(
    directory: Path, seal_key_file: Path, port: int | None = None
) -> ServiceProcess:
    """A real `wargame-engine` process (one worker) of the test's own."""
    return start_engine(directory, "--seal-key-file", str(seal_key_file), port=port)
