"""The matchmaker's Redis client: one URL for a standalone Redis, a Redis Cluster or a
managed Redis (TLS with `rediss://`, a password in the URL).

`connect` asks the server at the URL whether it belongs to a cluster (`INFO cluster`) and
builds redis-py's asyncio client for it: `Redis`, or `RedisCluster`, which follows MOVED
and ASK, re-reads the slot map after a failover and sends SCRIPT LOAD to every primary.
Both answer the same commands, so the rest of the matchmaker has one code path; what
differs is kept here:

- **Bounded connections.** Commands beyond `connections` in flight wait (up to
  `POOL_WAIT`) for a free connection instead of failing, first come first served
  (`FairPool`, a `BlockingConnectionPool` with a FIFO semaphore in front; for a cluster, a
  semaphore in front of redis-py's per-node pools, which would raise instead).
- **Confirmed writes.** `run_and_wait` sends a command and `WAIT` on the same connection,
  so the caller learns how many replicas hold the write (`Replication` says how many the
  primary of a key has, read again every few seconds).
- **Checked at start:** Redis 7 or later, `maxmemory-policy noeviction`; a Redis that
  does not answer in time then is asked again (`START_TRIES` in all), one that refuses
  the connection is not.
- **Script calls** on a cluster go to the primary of their first key, found by one slot
  computation (`BoundedCluster._run_script`), not through redis-py's general command path.
- **Transactions** (`pipeline(transaction=True)`) on a cluster run as one script on their
  slot's primary (`_SlotTransaction`), never through redis-py's own, which leaves the
  event loop.
- **A client per use.** `connect` builds a client with pools of its own: the replica's
  commands use one, its watchers' reads another (`name` tells them apart in CLIENT LIST),
  so a burst of spectators never takes the connections of moves, clocks, bots or pairing.
- **Dedicated connections** for the live-update listeners (`listener_connection`), one per
  primary, outside the pools.
- **Transient errors** (`TRANSIENT_ERRORS`): a failover or a lost connection, answered
  UNAVAILABLE with a retry hint.

A pipeline handed to a cluster may span slots only with plain commands: scripts and TIME
are sent on their own (redis-py refuses EVALSHA and TIME in cluster pipelines, and a
script's keys must share one slot anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NamedTuple, TypeAlias, TypeVar

import hiredis
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.crc import REDIS_CLUSTER_HASH_SLOTS
from redis.exceptions import (
    ClusterError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from matchmaker import keys

Client: TypeAlias = "Redis | RedisCluster"
T = TypeVar("T")

# Named after the newest key layout this release knows (`schema.old_replicas`).
CLIENT_NAME = f"wargame-matchmaker-s{keys.SCHEMA}"
WATCH_CLIENT_NAME = f"{CLIENT_NAME}-watch"  # the connections of the watchers' reads
# The longest a command waits for a free connection (a burst of calls queues rather than
# fails); beyond, it fails as Redis being unreachable would (UNAVAILABLE, retry hint).
POOL_WAIT = 10.0
MIN_VERSION = (7, 0)  # sharded pub/sub (SPUBLISH) carries the live updates
NO_EVICTION = "noeviction"  # the only eviction policy that loses no game
# Redis is asked this many times in all at start-up while its answers time out (a busy
# machine, a Redis stalled by its fork or its disk), before start-up fails (`_asked_again`);
# a refused connection fails at once.
START_TRIES = 3
PROBE_TIMEOUT = 5.0  # seconds for each of the probe's answers when the caller sets none

# Failures that pass: a node failing over, a connection lost, a slot on the move. The
# caller answers UNAVAILABLE with a retry hint; a retried request finds the new primary.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterError,  # CLUSTERDOWN, MASTERDOWN, "TTL exhausted" (redirected too often)
    TryAgainError,
    ReadOnlyError,  # a write reached a primary demoted a moment ago
    RedisClusterException,  # a slot not covered while the cluster heals
)


# Everything redis-py raises.
REDIS_ERRORS: tuple[type[Exception], ...] = (RedisError, RedisClusterException)


class RedisSetupError(Exception):
    """The URL's Redis cannot be used (unreachable, too old, a database other than 0 on a
    cluster); the message says why in one line."""


class BadRedisUrlError(RedisSetupError):
    """The URL itself is wrong."""


# Set while a command of a bounded cluster client runs, so that the commands redis-py
# itself sends meanwhile (a pipeline's redirected command) do not wait for a second slot.
_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("redis_slot", default=False)


class _BoundedPipeline(ClusterPipeline):
    """A cluster pipeline that takes one of its client's slots while it runs."""

    async def execute(
        self, raise_on_error: bool = True, allow_redirections: bool = True
    ) -> list[Any]:
        client = self.cluster_client
        assert isinstance(client, BoundedCluster)
        async with client.slot(), _lost_connection():
            return await super().execute(raise_on_error, allow_redirections)


@contextlib.asynccontextmanager
async def _lost_connection() -> AsyncIterator[None]:
    """A connection closed under a command, as the ConnectionError it is.

    After a node fails, redis-py 8.1's cluster client closes its idle connections to that
    node while other commands may be taking one of them: the command then meets a cleared
    writer or reader (AttributeError, TypeError) instead of a ConnectionError (redis-py
    issue 4217, fixed after 8.1). Both are answered UNAVAILABLE, and a retry succeeds.
    """
    try:
        yield
    except (AttributeError, TypeError) as error:
        if "NoneType" not in str(error):
            raise
        raise RedisConnectionError(f"connection closed under the command: {error}") from error


class FairPool(BlockingConnectionPool):
    """redis-py's `BlockingConnectionPool`, its waiters served first come, first served.

    redis-py's pool waits on a condition: a released connection goes to whichever task
    asks next, and a woken waiter that finds it gone goes back to the end of the line. With
    more commands in flight than connections (64 games' submissions on 16 connections) some
    wait many turns, which is the tail of their latency, and each wake-up that finds nothing
    costs the event loop a round. Here a FIFO semaphore of `max_connections` slots comes
    first: a task holding a slot always finds a connection, and a released one goes to the
    longest waiter.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = asyncio.Semaphore(self.max_connections)
        self._held: set[AbstractConnection] = set()

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        if self._slots.locked():
            try:
                await asyncio.wait_for(self._slots.acquire(), self.timeout)
            except TimeoutError:
                raise RedisConnectionError("No connection available.") from None
        else:
            await self._slots.acquire()  # at once: no waiter is passed
        try:
            connection: AbstractConnection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        except BaseException:
            self._slots.release()  # (a connection redis-py gave back itself held no slot)
            raise
        self._held.add(connection)
        return connection

    async def release(self, connection: AbstractConnection) -> None:
        try:
            await super().release(connection)
        finally:
            if connection in self._held:
                self._held.discard(connection)
                self._slots.release()


class BoundedCluster(RedisCluster):
    """`RedisCluster` with at most `limit` commands (or pipelines) in flight; more wait.

    redis-py's cluster nodes raise MaxConnectionsError when their pool is exhausted; with
    the semaphore in front, no node ever holds more than `limit` connections (a pipeline
    holds at most one per node), so the pools are sized `limit` plus a margin for
    connections redis-py is still closing after a topology change.
    """

    def __init__(self, *args: Any, limit: int, **kwargs: Any) -> None:
        kwargs["max_connections"] = limit + 8
        super().__init__(*args, **kwargs)
        self._slots = asyncio.Semaphore(limit)
        # Every node's connections pack commands with hiredis (`packed`).
        options = self.nodes_manager.connection_kwargs
        options["connection_class"] = packed(options["connection_class"])
        for node in self.nodes_manager.startup_nodes.values():
            node.connection_class = options["connection_class"]

    def slot(self) -> _Slot:
        """Hold one of the client's slots (re-entrant within one command)."""
        return _Slot(self._slots)

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.slot(), _lost_connection():
            if kwargs or not _names_keys(args):
                return await super().execute_command(*args, **kwargs)
            return await self._run_script(args)

    async def _run_script(self, args: tuple[Any, ...]) -> Any:
        """Run a script call on the primary serving its first key.

        Every script's keys share one slot (`scripts`), so a call goes where its first key
        is served, found by one slot computation and one look-up, where redis-py's general
        path resolves the command's policies and node flags and hashes every key (five for
        a commit) on every call. Failures are met as there: redirections (MOVED, ASK)
        followed on the way, a failover's errors retried as often, the slot map read
        again before each retry.
        """
        retries = self.retry.get_retries()
        failed_node = None
        while True:
            if self._initialize:
                await self.initialize(last_failed_node_name=failed_node)
                failed_node = None
            try:
                node = self.nodes_manager.get_node_from_slot(self.keyslot(args[3]))
                return await self._execute_command(node, *args)
            except Exception as error:
                if not retries or type(error) not in self.ERRORS_ALLOW_RETRY:
                    raise
                retries -= 1
                failed_node = getattr(error, "last_failed_node_name", None)

    def pipeline(self, transaction: Any | None = None, shard_hint: Any | None = None) -> Any:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # refused by redis-py
        if transaction:
            return _SlotTransaction(self)  # type: ignore[abstract]
        return _BoundedPipeline(self)  # type: ignore[abstract]


_SCRIPT_CALLS = frozenset({"EVALSHA", "EVAL", "evalsha", "eval"})


def _names_keys(args: tuple[Any, ...]) -> bool:
    """True for a script call (EVALSHA, EVAL) naming at least one key."""
    return args[0] in _SCRIPT_CALLS and len(args) >= 4 and int(args[2]) > 0


# Runs the commands in ARGV (each: its word count, then its words) in order, atomically.
_TRANSACTION = """
local replies, at = {}, 1
while at <= #ARGV do
  local words = tonumber(ARGV[at])
  replies[#replies + 1] = redis.call(unpack(ARGV, at + 1, at + words))
  at = at + words + 1
end
return replies
"""


class _SlotTransaction(_BoundedPipeline):
    """A transaction of a cluster client: commands on keys of one slot, queued as in a
    pipeline and run all at once, atomically, as one script on the slot's primary.

    redis-py 8.1's own cluster transactions (`pipeline(transaction=True)`, its
    `TransactionStrategy`) queue every command through `asyncio.run` in a thread of its
    own, a second event loop, which re-initialises the client from there after a
    topology change (its locks and connections belong to the server's loop: "bound to a
    different event loop"). Here nothing leaves the caller's loop. Every command names
    its key first; the replies are Redis's own (no redis-py parsing).
    """

    def __init__(self, client: BoundedCluster) -> None:
        super().__init__(client)
        self._commands: list[tuple[Any, ...]] = []

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        self._commands.append(args)
        return self

    async def execute(
        self, raise_on_error: bool = True, allow_redirections: bool = True
    ) -> list[Any]:
        commands, self._commands = self._commands, []
        if not commands:
            return []
        client = self.cluster_client
        names = list(dict.fromkeys(command[1] for command in commands))
        if len({client.keyslot(name) for name in names}) > 1:
            raise RedisClusterException("the keys of a transaction must share one slot")
        words = [word for command in commands for word in (len(command), *command)]
        replies: list[Any] = await client.eval(_TRANSACTION, len(names), *names, *words)
        return replies


class _Slot:
    """One slot of a bounded client, taken unless this task already holds one."""

    def __init__(self, semaphore: asyncio.Semaphore) -> None:
        self.semaphore = semaphore
        self.token: contextvars.Token[bool] | None = None

    async def __aenter__(self) -> None:
        if _HOLDING.get():
            return
        if self.semaphore.locked():  # wait, at most POOL_WAIT
            try:
                await asyncio.wait_for(self.semaphore.acquire(), POOL_WAIT)
            except TimeoutError:
                raise RedisConnectionError("no Redis connection free") from None
        else:  # free: taken at once (no task and timer of `wait_for` per command)
            await self.semaphore.acquire()
        self.token = _HOLDING.set(True)

    async def __aexit__(self, *exc: object) -> None:
        if self.token is not None:
            _HOLDING.reset(self.token)
            self.semaphore.release()
            self.token = None


_PACKED: dict[type[AbstractConnection], type[AbstractConnection]] = {}


def packed(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """`connection_class` packing commands with hiredis's C packer (redis-py's own packer,
    in Python, was the larger part of a commit's cost on the client side)."""
    if connection_class in _PACKED or connection_class in _PACKED.values():
        return _PACKED.get(connection_class, connection_class)

    class Packed(connection_class):  # type: ignore[valid-type,misc]
        def pack_command(self, *args: Any) -> list[bytes]:
            first = args[0]
            if isinstance(first, str):  # "CONFIG GET": the words go as separate arguments
                args = (*first.encode().split(), *args[1:])
            elif b" " in first:
                args = (*first.split(), *args[1:])
            try:
                return [hiredis.pack_command(args)]
            except TypeError:  # a value hiredis cannot send: redis-py's error for it
                return list(super().pack_command(*args))

    Packed.__name__ = Packed.__qualname__ = f"Packed{connection_class.__name__}"
    _PACKED[connection_class] = Packed
    return Packed


def _options(socket_timeout: float | None, connect_timeout: float, name: str) -> dict[str, Any]:
    """Connection options of every client: fail fast when Redis is away (a short retry,
    then an error the caller answers UNAVAILABLE), keep idle connections checked."""
    return {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": connect_timeout,
        "health_check_interval": 30,
        "client_name": name,
    }


async def _asked_again(ask: Callable[[], Awaitable[T]]) -> T:
    """`ask()`, asked again while its answer times out, up to `START_TRIES` times in all;
    any other failure fails at once."""
    tries = 1
    while True:
        try:
            return await ask()
        except (RedisClusterException, RedisTimeoutError) as error:
            timed_out = isinstance(error, RedisTimeoutError) or isinstance(
                error.__cause__, RedisTimeoutError
            )
            if not timed_out or tries == START_TRIES:
                raise
            tries += 1


async def _probe(
    url: str, timeout: float, connect_timeout: float
) -> tuple[bool, tuple[int, ...], str]:
    """(cluster?, server version, eviction policy) of the Redis at `url`, over one
    short-lived connection."""
    probe = Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=connect_timeout)
    try:
        info: Any = await probe.info("server")
        version = tuple(int(part) for part in str(info.get("redis_version", "0")).split(".")[:2])
        memory: Any = await probe.info("memory")
        policy = str(memory.get("maxmemory_policy", NO_EVICTION))
        try:
            cluster: Any = await probe.info("cluster")
            enabled = bool(int(cluster.get("cluster_enabled", 0)))
        except ResponseError:  # INFO cluster disabled (some managed services): no cluster
            enabled = False
        return enabled, version, policy
    finally:
        await probe.aclose()


async def connect(
    url: str,
    *,
    socket_timeout: float | None,
    connections: int,
    name: str = CLIENT_NAME,
    connect_timeout: float = 2.0,
) -> Client:
    """A client of the Redis (or Redis Cluster) at `url`, checked: it answers, it is
    Redis 7 or later, it never evicts keys, a cluster is used through database 0; its
    connections (at most `connections` per node, its own) are named `name`, and a new one
    that is not connected within `connect_timeout` seconds is an error."""
    timeout = PROBE_TIMEOUT if socket_timeout is None else socket_timeout
    try:
        enabled, version, policy = await _asked_again(lambda: _probe(url, timeout, connect_timeout))
    except ValueError as error:
        raise BadRedisUrlError(str(error)) from None
    except RedisError as error:
        raise RedisSetupError(str(error) or type(error).__name__) from None
    if version < MIN_VERSION:
        raise RedisSetupError(
            f"Redis {'.'.join(map(str, version))} is too old: the matchmaker needs 7.0 or later"
        )
    if policy != NO_EVICTION:
        raise RedisSetupError(
            f"maxmemory-policy is {policy}: Redis would evict games and players when full; "
            f"the matchmaker needs {NO_EVICTION} (writes refused when full, nothing lost)"
        )
    try:
        if enabled:
            return await _cluster(url, connections, _options(socket_timeout, connect_timeout, name))
        pool = FairPool.from_url(
            url,
            max_connections=connections,
            timeout=POOL_WAIT,
            retry=Retry(ExponentialWithJitterBackoff(base=0.02, cap=0.2), 2),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
            **_options(socket_timeout, connect_timeout, name),
        )
        pool.connection_class = packed(pool.connection_class)
        return Redis.from_pool(pool)
    except RedisClusterException as error:  # a database other than 0, no node answering
        raise RedisSetupError(str(error).splitlines()[0]) from None
    except ValueError as error:
        raise BadRedisUrlError(str(error)) from None
    except RedisError as error:
        raise RedisSetupError(str(error) or type(error).__name__) from None


async def _cluster(url: str, limit: int, options: dict[str, Any]) -> RedisCluster:
    """A cluster client with the slot map and the command table read (asked again while the
    nodes' answers time out: on a busy machine the command table alone is a large read)."""

    async def initialized() -> RedisCluster:
        cluster = BoundedCluster.from_url(
            url,
            limit=limit,
            retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), 3),
            **options,
        )
        try:
            await cluster.initialize()
        except Exception:
            await cluster.aclose()
            raise
        return cluster

    return await _asked_again(initialized)


def is_cluster(client: Client) -> bool:
    """True for a Redis Cluster client."""
    return isinstance(client, RedisCluster)


async def refresh(client: Client) -> None:
    """Read the cluster's slot map again (after a failover or a moved slot)."""
    if isinstance(client, RedisCluster):
        await client.nodes_manager.initialize()


def listener_connection(client: Client, key: str) -> tuple[str, Callable[[], AbstractConnection]]:
    """The name of the primary serving `key`, and a factory of dedicated connections to it
    (outside every pool: for a subscriber, which holds its connection and reads only
    pushed messages, so no health-check PING may be slipped in by redis-py)."""
    factory: type[AbstractConnection]
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        if node is None:
            raise RedisClusterException(f"no node serves {key}")
        name, factory, options = node.name, node.connection_class, dict(node.connection_kwargs)
    else:
        pool = client.connection_pool
        name, factory, options = "redis", pool.connection_class, dict(pool.connection_kwargs)
    options["health_check_interval"] = 0
    options["retry"] = Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), 0)
    return name, lambda: factory(**options)


class Replication:
    """How many replicas hold a copy of a key's primary, never older than `FRESH` seconds.

    On a cluster, a primary's replicas are the nodes CLUSTER NODES lists as its replicas,
    failing ones included: a replica that stopped answering may come back and be promoted
    in its primary's place, so a commit it has not confirmed is not acknowledged (a shard
    whose replica is gone for good refuses commits until the replica is replaced or
    forgotten, `CLUSTER FORGET`). A standalone Redis reports its connected replicas (INFO
    replication; a backup's snapshot taker is none: `standalone_replicas`). The count is
    read again every `FRESH` seconds, after a write was not confirmed in time, and on a
    cluster whenever it says none (at most every `RETRY_NONE` seconds): a primary promoted
    in a failover has none until its old primary rejoins as its replica, and commits must
    be confirmed again from then on. A write sent while the count says none asks its
    primary for its replicas in the same round trip (`run_and_wait`): one that joined
    since the count was read is known at once (`joined`), never a second later.
    """

    FRESH = 5.0
    RETRY_NONE = 1.0

    def __init__(self, client: Client) -> None:
        self.client = client
        self._standalone: int | None = None
        self._by_slot = bytearray()  # replicas of each slot's primary (a cluster)
        self._read_at = -math.inf
        self._reading = asyncio.Lock()

    async def of(self, key: str) -> int:
        """The replicas of the primary that serves `key`."""
        await self._fresh(self.FRESH)
        client = self.client
        if isinstance(client, RedisCluster):
            slot = client.keyslot(key)
            if not self._by_slot[slot]:
                await self._fresh(self.RETRY_NONE)
            return self._by_slot[slot]
        return self._standalone or 0

    def joined(self, key: str, replicas: int) -> None:
        """The primary that serves `key` said it has `replicas` (more than counted)."""
        if isinstance(self.client, RedisCluster):
            self._by_slot[self.client.keyslot(key)] = min(255, replicas)
        else:
            self._standalone = replicas

    async def _fresh(self, age: float) -> None:
        """Read the replicas again if the count is older than `age` seconds."""
        if time.monotonic() - self._read_at >= age:
            await self.refresh()

    async def refresh(self) -> None:
        """Read the replicas again (callers at the same time share one read)."""
        asked = time.monotonic()
        async with self._reading:
            if self._read_at >= asked:  # read while this caller waited its turn
                return
            if isinstance(self.client, RedisCluster):
                self._by_slot = bytearray(replicas_by_slot(await self.client.cluster_nodes()))
            else:
                self._standalone = standalone_replicas(await self.client.info("replication"))
            self._read_at = time.monotonic()


def standalone_replicas(info: dict[str, Any]) -> int:
    """A primary's replicas, from redis-py's parsed INFO replication: those that said where
    they listen, loading their first copy or online. A snapshot taker (`redis-cli --rdb`,
    a backup) connects as a replica too, but announces no port and never acknowledges a
    write, so counting it would refuse every move while the backup runs."""
    return sum(
        1
        for name, replica in info.items()
        if name.startswith("slave") and isinstance(replica, dict) and int(replica.get("port", 0))
    )


def replicas_by_slot(nodes: dict[str, Any]) -> bytes:
    """Each slot's count of replicas (at most 255), from redis-py's parsed CLUSTER NODES:
    the replicas each primary has, up or failing (a node still joining or without an
    address is none)."""
    replicas: dict[str, int] = {}
    for node in nodes.values():
        flags = set(str(node["flags"]).split(","))
        if flags & {"slave", "replica"} and not flags & {"handshake", "noaddr"}:
            replicas[node["master_id"]] = replicas.get(node["master_id"], 0) + 1
    counts = bytearray(REDIS_CLUSTER_HASH_SLOTS)
    for node in nodes.values():
        count = min(255, replicas.get(node["node_id"], 0))
        for bounds in node["slots"]:
            first, last = int(bounds[0]), int(bounds[-1])
            counts[first : last + 1] = bytes([count]) * (last + 1 - first)
    return bytes(counts)


class Sent(NamedTuple):
    """What `run_and_wait` learnt of a write: the command's reply (or the error it met),
    how many replicas confirmed it, and how many its primary has (those asked to confirm
    it; when none were asked, those the primary said it has online)."""

    reply: Any
    confirmed: int
    replicas: int


async def run_and_wait(
    client: Client, key: str, command: Sequence[Any], replicas: int, timeout_ms: int
) -> Sent:
    """Send `command` (about `key`) and, on the same connection, `WAIT replicas timeout_ms`;
    with `replicas` 0, `INFO replication` instead: a replica that joined since the caller
    counted them, even one still loading its first copy, is then known (the write was not
    confirmed: `Sent.confirmed` 0 of `Sent.replicas`).

    WAIT counts the replicas that hold every write this connection made, so it must follow
    the write on its connection: one pipeline to the primary of `key`. If the slot moved
    meanwhile (redis-py then sent the command again, to the new primary) the count said
    nothing about it and is returned as 0.
    """
    after = ("WAIT", replicas, timeout_ms) if replicas else ("INFO", "replication")
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        cluster_pipe = client.pipeline()
        cluster_pipe.execute_command(*command)
        cluster_pipe.execute_command(*after, target_nodes=node)
        reply, answer = await cluster_pipe.execute(raise_on_error=False)
        if client.get_node_from_key(key) != node:
            answer = 0
    else:
        pipe = client.pipeline(transaction=False)
        pipe.execute_command(*command)
        pipe.execute_command(*after)
        reply, answer = await pipe.execute(raise_on_error=False)
    if replicas:
        return Sent(reply, answer if isinstance(answer, int) else 0, replicas)
    return Sent(reply, 0, standalone_replicas(answer) if isinstance(answer, dict) else 0)
