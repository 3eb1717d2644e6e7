"""The layout of the matchmaker's keys in Redis, recorded there, and moving Redis to a newer
one during a rolling upgrade (`wargame-matchmaker migrate`).

Redis holds the layout's number (`keys.schema`; none means 1, and a Redis no replica has
used yet starts at the newest layout of the first replica that uses it). A replica reads
every layout up to `keys.SCHEMA` and writes the one Redis holds, so replicas of two
releases share a Redis during a rollout: the newer writes as the older until the operator,
once no replica of an older release is left, runs `migrate`. A replica that finds a
layout it does not know refuses to start, and refuses writes if it appears while it runs
(it never writes what it cannot read). Layouts:

1. every game's due time in `keys.due` shards (a game's slot and its shard's differ);
2. the due time of a game created by a layout-2 release (`keys.new_game_id`) in its own
   slot (`keys.game_due`), so a commit is one script on one node; other games keep 1's.

`migrate` is idempotent and resumable, and safe while games are played: it refuses while
a replica that does not know the new layout is connected (replicas name their connections
after the newest layout they know, `redis_client.CLIENT_NAME`; older releases name theirs
`UNVERSIONED_NAME`), records the layout, waits until every replica has read it again
(`Layout.FRESH`), then moves the due times of the games layout 2 places (made by newer
replicas before) out of the old shards, each only if no sweeper claimed it meanwhile
(`MOVE_DUE`; a claimed one is left for the next run).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from matchmaker import keys
from matchmaker.redis_client import REDIS_ERRORS, Client, is_cluster
from wargame.runtime.refusal import Reason, unavailable

# The connections of matchmakers of releases before layouts were recorded.
UNVERSIONED_NAME = "wargame-matchmaker"


class UnknownLayoutError(Exception):
    """Redis holds a layout this release does not know; the message says what to do."""


# What reading the layout at start-up may raise (the start fails with its one line).
SETUP_ERRORS: tuple[type[Exception], ...] = (*REDIS_ERRORS, UnknownLayoutError)


def unknown(version: int) -> str:
    """The refusal of a layout this release does not know."""
    return (
        f"Redis holds key layout {version}, newer than this matchmaker knows "
        f"(up to {keys.SCHEMA}): run a release that knows it"
    )


async def stored_layout(redis: Client) -> int:
    """The layout Redis holds (1 when none is recorded)."""
    value = await redis.get(keys.schema())
    return int(value) if value is not None else 1


class Layout:
    """The layout Redis holds, as this replica last read it (never older than `FRESH`
    seconds when `fresh` is awaited)."""

    FRESH = 5.0

    def __init__(self, redis: Client, retry_hint: float = 1.0) -> None:
        self.redis = redis
        self.retry_hint = retry_hint
        self.version = 1
        self._read_at = -float("inf")
        self._reading = asyncio.Lock()

    async def read(self) -> int:
        """Read the layout now; UnknownLayoutError for one this release does not know."""
        async with self._reading:
            version = await stored_layout(self.redis)
            self._read_at = time.monotonic()
            self.version = version
        if version > keys.SCHEMA:
            raise UnknownLayoutError(unknown(version))
        return version

    async def fresh(self) -> int:
        """The layout, read again when older than `FRESH`; a layout this release does not
        know refuses the write (UNAVAILABLE: a replica of the newer release takes it)."""
        if time.monotonic() - self._read_at >= self.FRESH:
            try:
                return await self.read()
            except UnknownLayoutError as error:
                raise unavailable(Reason.STORE_UNAVAILABLE, str(error), self.retry_hint) from None
        if self.version > keys.SCHEMA:
            raise unavailable(Reason.STORE_UNAVAILABLE, unknown(self.version), self.retry_hint)
        return self.version


MOVE_DUE = """
-- KEYS[1] an old due shard; ARGV[1] game id, ARGV[2] the score it was read with.
-- Removes the entry only if it is unchanged (no sweeper claimed it meanwhile).
if redis.call("ZSCORE", KEYS[1], ARGV[1]) == ARGV[2] then
  return redis.call("ZREM", KEYS[1], ARGV[1])
end
return 0
"""


async def old_replicas(redis: Client) -> list[str]:
    """The addresses of connected matchmakers that do not know `keys.SCHEMA` (on every
    node of a cluster)."""
    found: list[str] = []
    if is_cluster(redis):
        listed: Any = await redis.client_list(target_nodes="all")
        clients = [client for node in listed.values() for client in node]
    else:
        clients = await redis.client_list()
    for client in clients:
        name = str(client.get("name", ""))
        knows = name.removeprefix(f"{UNVERSIONED_NAME}-s")
        if name == UNVERSIONED_NAME or (knows.isdigit() and int(knows) < keys.SCHEMA):
            found.append(str(client.get("addr", "?")))
    return sorted(set(found))


async def migrate(redis: Client, say: Callable[[str], None], wait: float = 2 * Layout.FRESH) -> int:
    """Move Redis to layout `keys.SCHEMA` (see the module's text): the due times moved."""
    version = await stored_layout(redis)
    if version > keys.SCHEMA:
        raise UnknownLayoutError(unknown(version))
    if version < keys.SCHEMA:
        old = await old_replicas(redis)
        if old:
            raise UnknownLayoutError(
                f"matchmakers of an older release are connected ({', '.join(old)}): "
                "upgrade every replica first"
            )
        await redis.set(keys.schema(), keys.SCHEMA)
        say(
            f"key layout {keys.SCHEMA} recorded (was {version}); the replicas read it in {wait:g} s"
        )
        await asyncio.sleep(wait)
    else:
        say(f"key layout {keys.SCHEMA} already recorded; finishing any move left undone")
    shards: Any = await redis.smembers(keys.shard_counts())
    moved = left = 0
    for shard in range(max([1, *(int(count) for count in shards)])):
        old_key = keys.due(shard)
        entries: Any = await redis.zrange(old_key, 0, -1, withscores=True)
        for member, score in entries:
            game_id = member.decode()
            new_key = keys.game_due(game_id)
            if new_key is None:
                continue  # a game of an older release: layout 1 for as long as it lives
            await redis.zadd(new_key, {game_id: score}, lt=True)  # adds it if absent
            done = await redis.eval(MOVE_DUE, 1, old_key, game_id, _score(score))
            moved += int(done)
            left += 1 - int(done)
    say(f"due times moved to the games' own slots: {moved}")
    if left:
        say(f"{left} claimed by a sweeper meanwhile: run migrate again to move them")
    return moved


def _score(score: float) -> str:
    """A sorted set score as ZSCORE sends it (integers without a fraction)."""
    return str(int(score)) if score == int(score) else repr(score)
