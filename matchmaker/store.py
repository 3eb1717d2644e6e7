"""Game sessions in Redis: loading records, committing their changes, the indexes over games.

A game is a hash (`keys.game`) plus its actions list and its update stream, all under the
game's hash tag. The hash is a `GameRecord` (`record.py` maps one to the other); every
change goes through `Store.commit` (the `commit.lua` compare-and-set on the version),
usually as `commit_change(before, after, ...)`, which derives what to write from the two
records: the changed fields, the update, the keys' TTL and the due time. When the game's
primary has replicas, a commit is answered only once one of them holds it (`WAIT`), so a
failover loses no acknowledged commit.

The indexes (due work, browse lists) are sharded by game id (`keys.shard`), one hash tag
per shard. Writers only lower a game's due time. Where the due index is on the game's
node (a standalone Redis; on a cluster, a game of key layout 2, whose due shard shares its
slot: `keys.game_due`, `schema.py`) `commit.lua` lowers it in the commit itself, so a
commit is one script (and its WAIT); otherwise it is lowered on its shard's node before
the commit (a crash between the two makes a sweeper look early, never late) and again
after it (a sweeper that read the game just before the commit may have pushed its due
time back; lowering it again brings it forward).

Hidden information stays out of plain storage until the rules reveal it: while a secret
deployment is pending (`hidden_pending`), the stored state, the hidden actions, their
notations in `moves` and in the stream are sealed with the matchmaker's key
(`vault.py`); the store opens them as it reads, and the commit that lays the arrays out
writes the `moves` field in the clear again. The stream also carries notices that change
no version (a player left or came back, a rematch offered): their entry ids are
``<version>-<n>`` with n >= 1, after the update ``<version>-0`` of the version they follow.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import structlog
from prometheus_client import Counter

from matchmaker import keys, schedule
from matchmaker.errors import game_not_found
from matchmaker.metrics import UNCONFIRMED
from matchmaker.record import (
    FULL_FIELDS,
    LOAD_FIELDS,
    VERSION,
    ActionEntry,
    GameRecord,
    GameStatus,
    parse_moves,
    rows_json,
)
from matchmaker.redis_client import Client, Replication, is_cluster, run_and_wait
from matchmaker.schema import Layout
from matchmaker.scripts import ScriptCall, Scripts
from matchmaker.settings import Settings
from matchmaker.states import hidden_pending
from matchmaker.vault import Vault, is_sealed
from wargame.runtime.refusal import Reason, missing, unavailable
from wargame.v1 import game_pb2, matchmaker_pb2

log = structlog.get_logger(component="matchmaker")

COMMITS = Counter("wargame_matchmaker_commits_total", "Committed game changes by kind", ["kind"])
CONFLICTS = Counter(
    "wargame_matchmaker_version_conflicts_total", "Commits refused for a stale version"
)


def text(value: Any) -> str:
    """A Redis reply (bytes) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def millis(time_reply: Any) -> int:
    """Redis's TIME reply (seconds, microseconds) in ms."""
    seconds, micros = time_reply
    return int(seconds) * 1000 + int(micros) // 1000


@dataclass(frozen=True)
class Update:
    """A stream entry: the public update message, and the full notations when some of the
    actions hide something (shown to the actor only, until the rules reveal them; sealed
    in the stream meanwhile)."""

    message: bytes  # serialized WatchGameResponse without `game`
    full_notations: Sequence[str] = ()
    side: str = ""
    sealed_full: str = ""  # the full notations sealed (Store.commit_change), or ""

    def fields(self) -> list[Any]:
        """Stream field/value pairs."""
        out: list[Any] = ["u", self.message, "s", self.side]
        if self.sealed_full:
            out += ["f", self.sealed_full]
        elif self.full_notations:
            out += ["f", json.dumps(list(self.full_notations), ensure_ascii=False)]
        return out


@dataclass(frozen=True)
class StreamEntry:
    """One entry read back from a game's stream: the update of a version (`seq` 0), or a
    notice after it (`seq` >= 1, its fields in `notice`)."""

    version: int
    message: bytes
    side: str
    full_notations: tuple[str, ...]
    seq: int = 0
    notice: Mapping[str, str] = field(default_factory=dict)
    sealed_full: str = ""  # full notations still sealed (`Store.open_entry` opens them)

    @property
    def position(self) -> tuple[int, int]:
        """Where the entry stands in the stream: (version, seq)."""
        return (self.version, self.seq)

    @classmethod
    def parse(cls, entry_id: bytes, fields: Mapping[bytes, bytes]) -> StreamEntry:
        """An entry from XRANGE/XREAD output."""
        full = (fields.get(b"f") or b"").decode()
        version, _, seq = entry_id.decode().partition("-")
        if seq not in ("", "0"):
            return cls(
                version=int(version),
                message=b"",
                side=(fields.get(b"s") or b"").decode(),
                full_notations=(),
                seq=int(seq),
                notice={k.decode(): v.decode() for k, v in fields.items()},
            )
        return cls(
            version=int(version),
            message=fields.get(b"u", b""),
            side=(fields.get(b"s") or b"").decode(),
            full_notations=() if not full or is_sealed(full) else tuple(json.loads(full)),
            sealed_full=full if full and is_sealed(full) else "",
        )


class CommitOutcome(StrEnum):
    """What `commit.lua` answered."""

    OK = "ok"  # committed: the version is the new one
    CONFLICT = "conflict"  # the game was not at the expected version: the version is its own
    DUPLICATE = "duplicate"  # the idempotency key was seen: the version it committed then


@dataclass
class Commit:
    """One change of a game for `Store.commit`."""

    game_id: str
    expected_version: int
    fields: Mapping[str, Any]
    actions: Sequence[ActionEntry] = ()
    update: Update | None = None
    ttl: float = 0.0
    idempotency_key: str = ""  # a keys.game_idempotency name, or "" for none
    fingerprint: str = ""
    due_ms: int | None = None  # lower the game's due time to this first (ZADD LT)
    trim_stream_to: int = 0  # keep only this many newest updates (a game that ends)
    stream_ttl: float = 0.0  # the stream's TTL when shorter than `ttl` (0: the same)
    keep_actions: int | None = None  # cut the actions list to this many first (a takeback)


@dataclass(frozen=True)
class CommitResult:
    """What `commit.lua` answered, with the version concerned."""

    outcome: CommitOutcome
    version: int
    fingerprint: str = ""


def _record(game_id: str, names: Sequence[str], values: Sequence[Any]) -> GameRecord | None:
    """A record from HMGET values (None when the game does not exist)."""
    if values[names.index(VERSION)] is None:  # every stored game has a version
        return None
    raw = {
        name.encode(): value for name, value in zip(names, values, strict=True) if value is not None
    }
    return GameRecord.from_hash(game_id, raw)


def _retrieved(task: asyncio.Future[Any]) -> None:
    """A task left behind by a call that failed: its own outcome is dropped, not logged."""
    if not task.cancelled():
        task.exception()


class Store:
    """Redis access for game sessions and the indexes over them."""

    def __init__(
        self,
        redis: Client,
        scripts: Scripts,
        settings: Settings,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.redis = redis
        self.scripts = scripts
        self.settings = settings
        self.wake = wake  # tells this replica's sweeper that a game is due now (a bot's turn)
        self.vault = Vault(settings.secret_key)
        self.replication = Replication(redis)
        self.layout = Layout(redis, settings.retry_hint)
        self.shards = settings.index_shards  # the shards this replica writes to
        self.read_shards = settings.index_shards  # the shards readers cover (`agree_shards`)

    async def agree_shards(self) -> None:
        """Read the key layout (UnknownLayoutError for one this release does not know; a
        Redis no replica has used yet starts at this release's); record this replica's
        index shard count and cover the largest ever used on this Redis when reading the
        indexes (a changed setting strands no game)."""
        if not await self.redis.exists(keys.shard_counts()):
            await self.redis.set(keys.schema(), keys.SCHEMA, nx=True)
        await self.layout.read()
        await self.redis.sadd(keys.shard_counts(), self.shards)
        counts: Any = await self.redis.smembers(keys.shard_counts())
        self.read_shards = max([self.shards, *(int(count) for count in counts)])

    async def time_ms(self) -> int:
        """Redis's clock, in ms (every replica uses it, so they agree on clocks; on a
        cluster it is one node's, and a game's own reads use its node's: the nodes' clocks
        are kept in step by NTP)."""
        return millis(await self.redis.time())

    async def load(
        self,
        game_id: str,
        *,
        idempotency_key: str = "",
        full: bool = False,
    ) -> tuple[GameRecord | None, int, bytes | None]:
        """The game (None if unknown), Redis's time, and the idempotency record if asked,
        in one round trip; `full` adds the fields only records need (the initial state)."""
        record, now, prior, _ = await self.load_with_auth(
            game_id, idempotency_key=idempotency_key, full=full
        )
        return record, now, prior

    async def get(self, game_id: str, *, full: bool = False) -> tuple[GameRecord, int]:
        """The game and Redis's time; MISSING_FIELD without an id, SESSION_NOT_FOUND if the
        game is unknown or expired."""
        if not game_id:
            raise missing("game_id")
        if not keys.plausible_id(game_id):
            raise game_not_found(game_id)
        game, now, _ = await self.load(game_id, full=full)
        if game is None:
            raise game_not_found(game_id)
        return game, now

    async def load_with_auth(
        self,
        game_id: str,
        *,
        idempotency_key: str = "",
        full: bool = False,
        auth: tuple[list[str], list[Any]] | None = None,
    ) -> tuple[GameRecord | None, int, bytes | None, Any]:
        """`load`, plus the reply of the token check (`authenticate.lua`, in the player's
        slot) sent at the same time."""
        names = FULL_FIELDS if full else LOAD_FIELDS
        load_keys = [keys.game(game_id), idempotency_key or keys.game_no_idempotency(game_id)]
        auth_reply: Any = None
        if auth is None:
            reply = await self.scripts.run("load", load_keys, names)
        elif not is_cluster(self.redis):  # one node: both in one round trip
            auth_reply, reply = await self.scripts.run_in_order(
                [ScriptCall("authenticate", auth[0], auth[1]), ScriptCall("load", load_keys, names)]
            )
        else:  # the player's slot and the game's: two nodes, at the same time
            checking = asyncio.ensure_future(self.scripts.run("authenticate", auth[0], auth[1]))
            try:
                reply = await self.scripts.run("load", load_keys, names)
            except BaseException:
                checking.cancel()
                checking.add_done_callback(_retrieved)  # its own failure is not logged
                raise
            auth_reply = await checking
        seconds, micros, prior, values = reply
        return (
            self._opened(_record(game_id, names, values)),
            millis((seconds, micros)),
            prior,
            auth_reply,
        )

    async def actions(self, game_id: str) -> list[game_pb2.Action]:
        """Every committed action of a game, oldest first (for records)."""
        rows: list[Any] = await self.redis.lrange(keys.game_actions(game_id), 0, -1)
        context = f"action|{game_id}"
        return [game_pb2.Action.FromString(self.vault.open(row, context)) for row in rows]

    # -- hidden information at rest ----------------------------------------------------

    def _opened(self, game: GameRecord | None) -> GameRecord | None:
        """A record as read, with what is sealed in it opened (in memory only)."""
        if game is None:
            return None
        if is_sealed(game.state_bytes):
            game.state_bytes = self.vault.open(game.state_bytes, f"state|{game.id}")
        if "\\u0000" in game.moves_raw:
            context = f"moves|{game.id}"
            game._moves = [
                replace(entry, notation=self.vault.open_text(row[3], context))
                if len(row) > 3
                else entry
                for row, entry in zip(
                    json.loads(game.moves_raw), parse_moves(game.moves_raw), strict=True
                )
            ]
        return game

    def moves_after(
        self, game: GameRecord, added: Sequence[ActionEntry], pending: bool
    ) -> tuple[str, list[ActionEntry] | None]:
        """The `moves` field after appending `added`: hidden notations sealed while
        `pending`, and all in the clear once the rules reveal them; with every entry as
        memory holds it when the stored field alone would not say (None: parse the field)."""
        if pending:
            context = f"moves|{game.id}"
            rows = [
                [entry.side, "", entry.public, self.vault.seal_text(entry.notation, context)]
                if entry.hidden
                else entry.row()
                for entry in added
            ]
            return rows_json(game.moves_raw, rows), [*game.moves, *added]
        if "\\u0000" in game.moves_raw:  # laid out now: every notation in the clear again
            entries = [*game.moves, *added]
            return rows_json("", [entry.row() for entry in entries]), entries
        return rows_json(game.moves_raw, [entry.row() for entry in added]), None

    def open_entry(self, game_id: str, entry: StreamEntry) -> StreamEntry:
        """A stream entry with its sealed full notations opened."""
        if not entry.sealed_full:
            return entry
        full = json.loads(self.vault.open_text(entry.sealed_full, f"stream|{game_id}"))
        return replace(entry, full_notations=tuple(full), sealed_full="")

    def entries(self, game_id: str, rows: Any) -> list[StreamEntry]:
        """Stream rows (XRANGE/XREAD output) as opened entries."""
        return [
            self.open_entry(game_id, StreamEntry.parse(entry_id, fields))
            for entry_id, fields in rows
        ]

    async def commit_change(
        self,
        before: GameRecord | None,
        after: GameRecord,
        now_ms: int,
        update: matchmaker_pb2.WatchGameResponse,
        *,
        full_notations: Sequence[str] = (),
        actions: Sequence[ActionEntry] = (),
        idempotency_key: str = "",
        fingerprint: str = "",
        keep_actions: int | None = None,
    ) -> CommitResult:
        """Commit `after` over `before` (None: a new game): the fields that changed, the
        update (stamped with the new version and time), the TTL and due time its status
        asks for; a finished game keeps only its last few updates. A game due now (a
        bot's turn) wakes this replica's sweeper."""
        expected = before.version if before is not None else 0
        if after.version != expected + 1:
            raise ValueError(f"version {after.version} does not follow {expected}")
        fields = after.to_hash() if before is None else after.changed_fields(before)
        fields.pop(VERSION, None)  # commit.lua's to set
        update.version = after.version
        update.at.FromMilliseconds(now_ms)
        stored = Update(update.SerializeToString(), full_notations, update.side)
        if after.state_bytes and hidden_pending(after.state):
            if "state" in fields:
                stored_state = fields["state"]
                assert isinstance(stored_state, bytes)
                fields["state"] = self.vault.seal(stored_state, f"state|{after.id}")
            actions = [
                replace(entry, action=self.vault.seal(entry.action, f"action|{after.id}"))
                if entry.hidden
                else entry
                for entry in actions
            ]
            if full_notations:
                stored = replace(
                    stored,
                    full_notations=(),
                    sealed_full=self.vault.seal_text(
                        json.dumps(list(full_notations), ensure_ascii=False), f"stream|{after.id}"
                    ),
                )
        finished = after.status == GameStatus.FINISHED
        due_ms = schedule.next_due(after, now_ms, self.settings)
        result = await self.commit(
            Commit(
                game_id=after.id,
                expected_version=expected,
                fields=fields,
                actions=actions,
                update=stored,
                ttl=schedule.ttl(after.status, self.settings),
                idempotency_key=idempotency_key,
                fingerprint=fingerprint,
                due_ms=due_ms,
                trim_stream_to=self.settings.finished_stream_keep if finished else 0,
                # A finished game's updates outlive the retries that may ask for one of
                # them (its record holds the whole game): a stream costs 4 KB or more.
                stream_ttl=self.settings.idempotency_ttl if finished else 0,
                keep_actions=keep_actions,
            )
        )
        if result.outcome == CommitOutcome.OK and due_ms == now_ms:
            self.wake()
        return result

    async def commit(self, change: Commit) -> CommitResult:
        """Run `commit.lua`, lowering the game's due time with it when the due index is on
        the game's node (a standalone Redis; on a cluster, a game of layout 2 keeps it in
        its own slot); else lower it first on its shard's node and again after. When the
        game's primary has replicas, the commit counts once one of them confirms it (else
        UNAVAILABLE: a retry with the same idempotency key finds it, or makes it)."""
        await self.layout.fresh()
        game_key, actions_key, stream_key = keys.game_keys(change.game_id)
        idem_key = change.idempotency_key or keys.game_no_idempotency(change.game_id)
        due_key = self._due(change.game_id)
        beside = change.due_ms is not None and (
            not is_cluster(self.redis) or due_key == keys.game_due(change.game_id)
        )
        update_fields = change.update.fields() if change.update else []
        args: list[Any] = [
            change.expected_version,
            change.fingerprint if change.idempotency_key else "",
            max(1, int(self.settings.idempotency_ttl)),
            self.settings.stream_maxlen,
            change.trim_stream_to,
            int(change.ttl),
            int(change.stream_ttl),
            change.due_ms if beside else "",
            "" if change.keep_actions is None else change.keep_actions,
            len(change.actions),
            *(entry.action for entry in change.actions),
            len(update_fields) // 2,
            *update_fields,
        ]
        for name, value in change.fields.items():
            args += [name, value]
        script_keys = [game_key, actions_key, stream_key, idem_key, *([due_key] if beside else [])]
        wait_ms = int(self.settings.replica_wait * 1000)
        replicas = await self.replication.of(game_key) if wait_ms > 0 else 0
        apart = change.due_ms is not None and not beside
        if apart:
            await self.schedule(change.game_id, change.due_ms)
        if wait_ms > 0:
            sent = await self.scripts.run_and_wait("commit", script_keys, args, replicas, wait_ms)
            reply, confirmed, holders = sent
        else:
            reply, confirmed, holders = await self.scripts.run("commit", script_keys, args), 0, 0
        if apart and text(reply[0]) == CommitOutcome.OK and change.due_ms is not None:
            await self._schedule_confirmed(change.game_id, change.due_ms, wait_ms)
        outcome, value = CommitOutcome(text(reply[0])), text(reply[1])
        # A retried commit (DUPLICATE) is confirmed as the first one: the script wrote on
        # this connection, so its WAIT covers the first commit too.
        if outcome != CommitOutcome.CONFLICT:
            await self._confirmed(
                change.game_id, replicas, confirmed, holders, keyed=bool(change.idempotency_key)
            )
        if outcome == CommitOutcome.DUPLICATE:
            fingerprint, _, version = value.rpartition("|")
            return CommitResult(outcome, int(version), fingerprint)
        return CommitResult(outcome, int(value))

    async def confirm_replay(self, game_id: str, idempotency_key: str) -> None:
        """A retried submission answered from its first commit's idempotency record: only
        once a replica holds that commit (UNAVAILABLE as `commit` otherwise). The record's
        time to live is set again, a write on the game's primary, and WAIT after it on its
        connection covers every earlier write, the first commit's too."""
        wait_ms = int(self.settings.replica_wait * 1000)
        if wait_ms <= 0:
            return
        replicas = await self.replication.of(keys.game(game_id))
        command = ("EXPIRE", idempotency_key, max(1, int(self.settings.idempotency_ttl)))
        sent = await run_and_wait(self.redis, idempotency_key, command, min(1, replicas), wait_ms)
        if isinstance(sent.reply, Exception):
            raise sent.reply
        await self._confirmed(game_id, replicas, sent.confirmed, sent.replicas, keyed=True)

    async def _confirmed(
        self, game_id: str, replicas: int, confirmed: int, holders: int, *, keyed: bool
    ) -> None:
        """Nothing if a write was confirmed or its primary has no replica (`holders`, told
        by `run_and_wait`); `_unconfirmed` otherwise. `replicas`: those counted before it
        was sent (none: a replica that joined since then was not asked, and is counted
        now)."""
        if not holders or confirmed:
            return
        if not replicas:
            self.replication.joined(keys.game(game_id), holders)
        await self._unconfirmed(game_id, keyed=keyed, recount=bool(replicas))

    async def _unconfirmed(self, game_id: str, *, keyed: bool, recount: bool = True) -> None:
        """A commit no replica confirmed in time: UNAVAILABLE, unless the primary turns out
        to have no replica left when counted again (`recount`: then it stands as Redis
        keeps it). The advice fits the call: one with an idempotency key is retried with
        it, any other (a new game, a seat taken) is asked again as it was."""
        if recount:
            await self.replication.refresh()
        if not recount or await self.replication.of(keys.game(game_id)):
            UNCONFIRMED.labels("refused").inc()
            again = "retry with the same idempotency key" if keyed else "try again"
            raise unavailable(
                Reason.STORE_UNAVAILABLE,
                f"the change is saved but no Redis replica has confirmed it yet; {again}",
                self.settings.retry_hint,
            )
        UNCONFIRMED.labels("unreplicated").inc()
        log.warning("commit confirmed by no replica: its primary has none", game_id=game_id)

    # -- the update stream -------------------------------------------------------------

    async def updates_after(
        self, game_id: str, after: int | tuple[int, int], count: int = 500
    ) -> list[StreamEntry]:
        """Stream entries after a version (its notices included) or after a (version, seq)
        position, oldest first, at most `count`."""
        version, seq = (after, 0) if isinstance(after, int) else after
        rows: Any = await self.redis.xrange(
            keys.game_stream(game_id), f"({version}-{seq}", "+", count=count
        )
        return self.entries(game_id, rows)

    async def update_at(self, game_id: str, version: int) -> StreamEntry | None:
        """The stream entry of one version, if still kept."""
        rows: Any = await self.redis.xrange(
            keys.game_stream(game_id), f"{version}-0", f"{version}-0"
        )
        return self.entries(game_id, rows)[0] if rows else None

    async def add_notice(self, game_id: str, version: int, notice: Mapping[str, str]) -> None:
        """Add a notice to a game's stream after its update `version` (no version change),
        announced to the watchers like a commit (`notice.lua`); the stream lives as long as
        the game."""
        pairs: list[Any] = [item for pair in notice.items() for item in pair]
        await self.scripts.run(
            "notice",
            [keys.game(game_id), keys.game_stream(game_id)],
            [version, self.settings.stream_maxlen, *pairs],
        )

    async def last_update_id(self, game_id: str) -> str:
        """The id of the newest stream entry ("0-0" when none)."""
        rows: Any = await self.redis.xrevrange(keys.game_stream(game_id), "+", "-", count=1)
        return text(rows[0][0]) if rows else "0-0"

    # -- the due index -----------------------------------------------------------------

    def _due(self, game_id: str) -> str:
        """The due-index shard the game's due time is written to, in the layout this
        replica last read (`schema.py`)."""
        beside = keys.game_due(game_id) if self.layout.version >= 2 else None
        return beside or keys.due(keys.shard(game_id, self.shards))

    @property
    def due_keys(self) -> list[str]:
        """Every due-index shard the sweepers claim from, of every layout: `claim_due` and
        the rest name one by its place in this list."""
        return [
            *(keys.due(shard) for shard in range(self.read_shards)),
            *(keys.due_slot(tag) for tag in keys.DUE_TAGS),
        ]

    async def schedule(self, game_id: str, when_ms: int | None) -> None:
        """Make the game due no later than `when_ms` (None: nothing to do)."""
        if when_ms is not None:
            await self.layout.fresh()
            await self.redis.zadd(self._due(game_id), {game_id: when_ms}, lt=True)

    async def _schedule_confirmed(self, game_id: str, when_ms: int, wait_ms: int) -> None:
        """`schedule`, confirmed by a replica of the shard's primary when it has one (a due
        time lost in a failover would leave a bot's turn undone)."""
        key = self._due(game_id)
        replicas = await self.replication.of(key) if wait_ms > 0 else 0
        if not replicas:
            await self.schedule(game_id, when_ms)
            return
        command = ("ZADD", key, "LT", when_ms, game_id)
        reply, acked, _ = await run_and_wait(self.redis, key, command, 1, wait_ms)
        if isinstance(reply, Exception):
            raise reply
        if not acked:
            await self.replication.refresh()
            log.warning("due time not confirmed by a replica", game_id=game_id)

    async def unschedule(self, game_id: str) -> None:
        """Drop the game from the due index (it is finished and settled), in every layout."""
        await self.redis.zrem(keys.due(keys.shard(game_id, self.shards)), game_id)
        beside = keys.game_due(game_id)
        if beside is not None:
            await self.redis.zrem(beside, game_id)

    async def due_now(self) -> list[int]:
        """The places in `due_keys` of the shards holding a game due now, from one look at
        each shard's earliest entry (pipelined: a round trip per node, where a claim is one
        per shard); claimed games are a lease ahead, so they are not due. On a cluster, a
        shard whose node does not answer (a failover) is left to a later round, and the
        others are claimed meanwhile."""
        pipe = self.redis.pipeline(transaction=False)
        for key in self.due_keys:
            pipe.zrange(key, 0, 0, withscores=True)
        earliest = await pipe.execute(raise_on_error=False)
        if not any(isinstance(rows, list) and rows for rows in earliest):
            return []
        now = await self.time_ms()
        return [
            place
            for place, rows in enumerate(earliest)
            if isinstance(rows, list) and rows and rows[0][1] <= now
        ]

    async def claim_due(self, shard: int, lease_ms: int, limit: int) -> tuple[int, list[str]]:
        """Claim due games of one shard (`due_keys`) for this replica: (lease score, ids)."""
        reply = await self.scripts.run("claim_due", [self.due_keys[shard]], [lease_ms, limit])
        return int(reply[0]), [text(item) for item in reply[1:]]

    async def renew(self, shard: int, game_id: str, lease: int, lease_ms: int) -> int:
        """Extend a claim: the new lease score, or 0 if the claim is no longer ours."""
        return int(
            await self.scripts.run("renew_due", [self.due_keys[shard]], [game_id, lease, lease_ms])
        )

    async def reschedule(self, shard: int, game_id: str, lease: int, when_ms: int | None) -> bool:
        """After a claim: next due time (None: drop), unless someone scheduled it since."""
        done = await self.scripts.run(
            "reschedule_due",
            [self.due_keys[shard]],
            [game_id, lease, "" if when_ms is None else when_ms],
        )
        return bool(done)

    # -- browse lists and invite codes -------------------------------------------------

    async def list_add(
        self, status: GameStatus, ruleset: str, game_id: str, created_ms: int
    ) -> None:
        """Add a public game to a browse list (bounded: the oldest fall off)."""
        key = keys.browse(status, ruleset, keys.shard(game_id, self.shards))
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(key, {game_id: created_ms})
        pipe.zremrangebyrank(key, 0, -(math.ceil(self.settings.browse_size / self.shards) + 1))
        await pipe.execute()

    async def list_remove(self, status: GameStatus, ruleset: str, game_id: str) -> None:
        """Remove a game from a browse list."""
        shard = keys.shard(game_id, self.shards)
        await self.redis.zrem(keys.browse(status, ruleset, shard), game_id)

    async def list_page(
        self, statuses: Sequence[GameStatus], rulesets: Sequence[str], offset: int, size: int
    ) -> list[tuple[GameStatus, str, str, float]]:
        """(status, ruleset, game id, created) newest first, from several browse lists (each
        the merge of its shards)."""
        pipe = self.redis.pipeline(transaction=False)
        lists = [
            (status, ruleset, shard)
            for status in statuses
            for ruleset in rulesets
            for shard in range(self.read_shards)
        ]
        for status, ruleset, shard in lists:
            pipe.zrevrange(keys.browse(status, ruleset, shard), 0, offset + size, withscores=True)
        rows: list[tuple[GameStatus, str, str, float]] = []
        for (status, ruleset, _), items in zip(lists, await pipe.execute(), strict=True):
            rows += [(status, ruleset, text(member), score) for member, score in items]
        rows.sort(key=lambda row: (-row[3], row[2]))
        return rows[offset : offset + size + 1]

    async def brief(self, game_ids: Sequence[str]) -> list[GameRecord | None]:
        """Games without their states and moves (for lists)."""
        names = [name for name in LOAD_FIELDS if name not in ("state", "moves")]
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hmget(keys.game(game_id), names)
        return [
            _record(game_id, names, values)
            for game_id, values in zip(game_ids, await pipe.execute(), strict=True)
        ]

    async def set_invite(self, code: str, game_id: str) -> bool:
        """Bind an invite code (its normalized form) to a game (False if it is taken)."""
        done = await self.redis.set(
            keys.invite(code), game_id, nx=True, ex=int(self.settings.invite_ttl)
        )
        return bool(done)

    async def invite_target(self, code: str) -> str | None:
        """The game an invite code (its normalized form) opens."""
        value = await self.redis.get(keys.invite(code))
        return text(value) if value else None

    async def claim_rematch(self, game_id: str, rematch_id: str) -> str:
        """Record `rematch_id` as the rematch of a finished game unless one is recorded
        already; the rematch the game has now."""
        return text(await self.scripts.run("claim_rematch", [keys.game(game_id)], [rematch_id]))

    async def set_unversioned(self, before: GameRecord, after: GameRecord) -> None:
        """Write bookkeeping that is not part of the game's versioned content (its rating
        status): the fields `after` changes relative to `before`, outside the commit."""
        changed = after.changed_fields(before)
        if VERSION in changed:
            raise ValueError("a change of version goes through commit_change")
        if changed:
            mapping: dict[Any, Any] = dict(changed)
            await self.redis.hset(keys.game(after.id), mapping=mapping)
