"""Game sessions in Redis: the record of one game, its commits, and the indexes over games.

A game is a hash (`keys.game`) plus its actions list and its update stream, all under the
game's hash tag. `GameRecord` is the hash read back; every change goes through
`Store.commit` (the `commit.lua` compare-and-set on the version). The indexes (due work,
browse lists, invite codes) are single keys updated next to the commits: writers only
lower a game's due time, so a crash between two steps makes a sweeper look early, never
late.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from matchmaker import keys
from matchmaker.clocks import Clock
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from wargame.v1 import game_pb2

OPEN, RUNNING, FINISHED = "open", "running", "finished"
# The hash fields read with a game on every call (its initial state only for records).
LOAD_FIELDS = (
    "version",
    "game",
    "status",
    "visibility",
    "rated",
    "created_ms",
    "updated_ms",
    "acted_ms",
    "seats",
    "state",
    "clock",
    "invite",
    "bot_ms",
    "rating",
    "closed",
    "moves",
)
HUMAN, BOT = "human", "bot"
BOT_PLAYER = "bot"  # the player id of every bot seat


@dataclass
class Seat:
    """One seat of a game: the side, who sits there (empty while open) and their rating
    at the start of the game (for the rating update)."""

    side: str
    player: str = ""
    name: str = ""
    kind: str = HUMAN
    rating: str = ""  # ratings.Rating text, "" for a new player

    def to_dict(self) -> dict[str, str]:
        """The stored form."""
        return {"s": self.side, "p": self.player, "n": self.name, "k": self.kind, "r": self.rating}

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> Seat:
        """A seat from its stored form."""
        return cls(
            data["s"], data.get("p", ""), data.get("n", ""), data.get("k", HUMAN), data.get("r", "")
        )


def seats_json(seats: Sequence[Seat]) -> str:
    """The stored form of a game's seats."""
    return json.dumps([seat.to_dict() for seat in seats], separators=(",", ":"))


@dataclass(frozen=True)
class ActionEntry:
    """One committed action: who, its notation, what others see, and the action itself.

    The notations of a game live together in one field of its hash (`moves`, a JSON list
    of `[side, notation, public or ""]`), read with the game on every call; the actions
    themselves (serialized wargame.v1.Action) in the actions list, read only for records.
    """

    side: str
    notation: str
    public: str  # equal to `notation` unless the action hides something
    action: bytes = b""  # serialized wargame.v1.Action, as the engine read it

    @property
    def hidden(self) -> bool:
        """True when others must see `public` instead of `notation` until the reveal."""
        return self.public != self.notation

    def row(self) -> list[str]:
        """The entry's row of the `moves` field."""
        return [self.side, self.notation, self.public if self.hidden else ""]


def moves_json(before: str, added: Sequence[ActionEntry]) -> str:
    """The `moves` field after appending entries (the earlier text is not parsed again)."""
    rows = json.dumps([entry.row() for entry in added], separators=(",", ":"), ensure_ascii=False)
    if before in ("", "[]"):
        return rows
    if rows == "[]":
        return before
    return before[:-1] + "," + rows[1:]


def parse_moves(raw: str) -> list[ActionEntry]:
    """The entries of a `moves` field."""
    return [
        ActionEntry(side, notation, public or notation)
        for side, notation, public in json.loads(raw or "[]")
    ]


def text(value: Any) -> str:
    """A Redis reply (bytes) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _text(raw: Mapping[bytes, bytes], name: str, default: str = "") -> str:
    value = raw.get(name.encode())
    return value.decode() if value is not None else default


def _int(raw: Mapping[bytes, bytes], name: str, default: int = 0) -> int:
    value = raw.get(name.encode())
    return int(value) if value else default


@dataclass
class GameRecord:
    """A game as stored: meta fields, seats, current and initial state, clock."""

    id: str
    ruleset: str
    status: str
    version: int
    visibility: str
    rated: bool
    created_ms: int
    updated_ms: int  # last commit
    acted_ms: int  # last game action (or start): abandonment counts from here
    seats: list[Seat]
    state_bytes: bytes
    initial_bytes: bytes
    clock: Clock | None
    invite: str
    bot_ms: int
    rating_status: str  # "", "pending" or "done"
    closed: str = ""  # why an open game was closed without being played
    moves_raw: str = "[]"  # the `moves` field as stored
    _state: game_pb2.GameState | None = None
    _moves: list[ActionEntry] | None = None

    @property
    def moves(self) -> list[ActionEntry]:
        """Every committed action's notations (parsed once)."""
        if self._moves is None:
            self._moves = parse_moves(self.moves_raw)
        return self._moves

    @classmethod
    def from_hash(cls, game_id: str, raw: Mapping[bytes, bytes]) -> GameRecord:
        """A record from the game hash (HGETALL)."""
        clock_raw = raw.get(b"clock")
        return cls(
            id=game_id,
            ruleset=_text(raw, "game"),
            status=_text(raw, "status", OPEN),
            version=_int(raw, "version"),
            visibility=_text(raw, "visibility", "public"),
            rated=_text(raw, "rated") == "1",
            created_ms=_int(raw, "created_ms"),
            updated_ms=_int(raw, "updated_ms"),
            acted_ms=_int(raw, "acted_ms"),
            seats=[Seat.from_dict(item) for item in json.loads(raw.get(b"seats") or b"[]")],
            state_bytes=raw.get(b"state") or b"",
            initial_bytes=raw.get(b"initial") or b"",
            clock=Clock.from_json(clock_raw) if clock_raw else None,
            invite=_text(raw, "invite"),
            bot_ms=_int(raw, "bot_ms"),
            rating_status=_text(raw, "rating"),
            closed=_text(raw, "closed"),
            moves_raw=_text(raw, "moves", "[]"),
        )

    @property
    def state(self) -> game_pb2.GameState:
        """The current state (parsed once)."""
        if self._state is None:
            self._state = game_pb2.GameState.FromString(self.state_bytes)
        return self._state

    @property
    def initial(self) -> game_pb2.GameState:
        """The initial state (only loaded by `Store.load(..., initial=True)`)."""
        return game_pb2.GameState.FromString(self.initial_bytes)

    def seat_of(self, player_id: str) -> Seat | None:
        """The seat a player holds here, if any."""
        if not player_id:
            return None
        return next((seat for seat in self.seats if seat.player == player_id), None)

    def seat_for(self, side: str) -> Seat | None:
        """The seat of a side."""
        return next((seat for seat in self.seats if seat.side == side), None)

    def opponent(self, side: str) -> Seat | None:
        """The other seat of a two-sided game."""
        return next((seat for seat in self.seats if seat.side != side), None)

    def to_act(self) -> tuple[str, ...]:
        """The sides that may act now (none unless running)."""
        return tuple(self.state.to_act) if self.status == RUNNING else ()


@dataclass(frozen=True)
class Update:
    """A stream entry: the public update message, and the full notations when some of the
    actions hide something (shown to the actor only, until the rules reveal them)."""

    message: bytes  # serialized WatchGameResponse without `game`
    full_notations: Sequence[str] = ()
    side: str = ""

    def fields(self) -> list[Any]:
        """Stream field/value pairs."""
        out: list[Any] = ["u", self.message, "s", self.side]
        if self.full_notations:
            out += ["f", json.dumps(list(self.full_notations), ensure_ascii=False)]
        return out


@dataclass(frozen=True)
class StreamEntry:
    """One update read back from a game's stream."""

    version: int
    message: bytes
    side: str
    full_notations: tuple[str, ...]

    @classmethod
    def parse(cls, entry_id: bytes, fields: Mapping[bytes, bytes]) -> StreamEntry:
        """An entry from XRANGE/XREAD output."""
        full = fields.get(b"f")
        return cls(
            version=int(entry_id.split(b"-")[0]),
            message=fields.get(b"u", b""),
            side=(fields.get(b"s") or b"").decode(),
            full_notations=tuple(json.loads(full)) if full else (),
        )


@dataclass
class Commit:
    """One change of a game for `Store.commit`."""

    game_id: str
    expected_version: int
    fields: dict[str, Any]
    actions: Sequence[ActionEntry] = ()
    update: Update | None = None
    ttl: float = 0.0
    idempotency_key: str = ""  # a keys.game_idempotency name, or "" for none
    fingerprint: str = ""
    due_ms: int | None = None  # lower the game's due time to this first (ZADD LT)
    trim_stream_to: int = 0  # keep only this many newest updates (a game that ends)


@dataclass(frozen=True)
class CommitResult:
    """What `commit.lua` answered: ok / conflict / duplicate, with the version concerned."""

    outcome: str
    version: int
    fingerprint: str = ""


class Store:
    """Redis access for game sessions and the indexes over them."""

    def __init__(self, redis: Redis, scripts: Scripts, settings: Settings) -> None:
        self.redis = redis
        self.scripts = scripts
        self.settings = settings

    async def time_ms(self) -> int:
        """Redis's clock, in ms (every replica uses it, so they agree on clocks)."""
        seconds, micros = await self.redis.time()
        return int(seconds) * 1000 + int(micros) // 1000

    async def load(
        self,
        game_id: str,
        *,
        idempotency_key: str = "",
        initial: bool = False,
    ) -> tuple[GameRecord | None, int, bytes | None]:
        """The game (None if unknown), Redis's time, and the idempotency record if asked,
        in one round trip."""
        record, now, prior, _ = await self.load_with_auth(
            game_id, idempotency_key=idempotency_key, initial=initial
        )
        return record, now, prior

    async def load_with_auth(
        self,
        game_id: str,
        *,
        idempotency_key: str = "",
        initial: bool = False,
        auth: tuple[list[str], list[Any]] | None = None,
    ) -> tuple[GameRecord | None, int, bytes | None, Any]:
        """`load`, plus the reply of the token check sent in the same round trip."""
        names = (*LOAD_FIELDS, "initial") if initial else LOAD_FIELDS
        pipe = self.redis.pipeline(transaction=False)
        if auth is not None:
            self.scripts.queue(pipe, "authenticate", auth[0], auth[1])
        pipe.hmget(keys.game(game_id), names)
        pipe.time()
        if idempotency_key:
            pipe.get(idempotency_key)
        replies = await self.scripts.execute(self.redis, pipe)
        auth_reply = replies.pop(0) if auth is not None else None
        values, (seconds, micros) = replies[0], replies[1]
        now = int(seconds) * 1000 + int(micros) // 1000
        record = None
        if values[0] is not None:
            raw = {
                name.encode(): value
                for name, value in zip(names, values, strict=True)
                if value is not None
            }
            record = GameRecord.from_hash(game_id, raw)
        prior = replies[2] if idempotency_key else None
        return record, now, prior, auth_reply

    async def actions(self, game_id: str) -> list[game_pb2.Action]:
        """Every committed action of a game, oldest first (for records)."""
        rows: list[Any] = await self.redis.lrange(keys.game_actions(game_id), 0, -1)
        return [game_pb2.Action.FromString(row) for row in rows]

    async def commit(self, change: Commit) -> CommitResult:
        """Run `commit.lua` (after lowering the due time, in the same round trip)."""
        game_key, actions_key, stream_key = keys.game_keys(change.game_id)
        idem_key = change.idempotency_key or f"{game_key}:idem:-"
        update_fields = change.update.fields() if change.update else []
        args: list[Any] = [
            change.expected_version,
            change.fingerprint if change.idempotency_key else "",
            max(1, int(self.settings.idempotency_ttl)),
            self.settings.stream_maxlen,
            change.trim_stream_to,
            int(change.ttl),
            len(change.actions),
            *(entry.action for entry in change.actions),
            len(update_fields) // 2,
            *update_fields,
        ]
        for name, value in change.fields.items():
            args += [name, value]
        pipe = self.redis.pipeline(transaction=False)
        if change.due_ms is not None:
            pipe.zadd(keys.due(), {change.game_id: change.due_ms}, lt=True)
        self.scripts.queue(pipe, "commit", [game_key, actions_key, stream_key, idem_key], args)
        replies = await self.scripts.execute(self.redis, pipe)
        outcome, value = replies[-1]
        outcome, value = outcome.decode(), value.decode()
        if outcome == "duplicate":
            fingerprint, _, version = value.rpartition("|")
            return CommitResult(outcome, int(version), fingerprint)
        return CommitResult(outcome, int(value))

    # -- the update stream -------------------------------------------------------------

    async def updates_after(
        self, game_id: str, after_version: int, count: int = 500
    ) -> list[StreamEntry]:
        """Stream entries of versions after `after_version` (oldest first, at most `count`)."""
        rows: Any = await self.redis.xrange(
            keys.game_stream(game_id), f"({after_version}-0", "+", count=count
        )
        return [StreamEntry.parse(entry_id, fields) for entry_id, fields in rows]

    async def update_at(self, game_id: str, version: int) -> StreamEntry | None:
        """The stream entry of one version, if still kept."""
        rows: Any = await self.redis.xrange(
            keys.game_stream(game_id), f"{version}-0", f"{version}-0"
        )
        return StreamEntry.parse(*rows[0]) if rows else None

    async def last_update_id(self, game_id: str) -> str:
        """The id of the newest stream entry ("0-0" when none)."""
        rows: Any = await self.redis.xrevrange(keys.game_stream(game_id), "+", "-", count=1)
        return text(rows[0][0]) if rows else "0-0"

    # -- the due index -----------------------------------------------------------------

    async def schedule(self, game_id: str, when_ms: int | None) -> None:
        """Make the game due no later than `when_ms` (None: nothing to do)."""
        if when_ms is not None:
            await self.redis.zadd(keys.due(), {game_id: when_ms}, lt=True)

    async def unschedule(self, game_id: str) -> None:
        """Drop the game from the due index (it is finished and settled)."""
        await self.redis.zrem(keys.due(), game_id)

    async def claim_due(self, lease_ms: int, limit: int) -> tuple[int, list[str]]:
        """Claim due games for this replica: (lease score, game ids)."""
        reply = await self.scripts.run("claim_due", [keys.due()], [lease_ms, limit])
        return int(reply[0]), [item.decode() for item in reply[1:]]

    async def reschedule(self, game_id: str, lease: int, when_ms: int | None) -> bool:
        """After a claim: next due time (None: drop), unless someone scheduled it since."""
        done = await self.scripts.run(
            "reschedule_due", [keys.due()], [game_id, lease, "" if when_ms is None else when_ms]
        )
        return bool(done)

    # -- browse lists and invite codes -------------------------------------------------

    async def list_add(self, status: str, ruleset: str, game_id: str, created_ms: int) -> None:
        """Add a public game to a browse list (bounded: the oldest fall off)."""
        key = keys.browse(status, ruleset)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(key, {game_id: created_ms})
        pipe.zremrangebyrank(key, 0, -(self.settings.browse_size + 1))
        await pipe.execute()

    async def list_remove(self, status: str, ruleset: str, game_id: str) -> None:
        """Remove a game from a browse list."""
        await self.redis.zrem(keys.browse(status, ruleset), game_id)

    async def list_page(
        self, statuses: Sequence[str], rulesets: Sequence[str], offset: int, size: int
    ) -> list[tuple[str, str, str, float]]:
        """(status, ruleset, game id, created) newest first, from several browse lists."""
        pipe = self.redis.pipeline(transaction=False)
        pairs = [(status, ruleset) for status in statuses for ruleset in rulesets]
        for status, ruleset in pairs:
            pipe.zrevrange(keys.browse(status, ruleset), 0, offset + size, withscores=True)
        rows: list[tuple[str, str, str, float]] = []
        for (status, ruleset), items in zip(pairs, await pipe.execute(), strict=True):
            rows += [(status, ruleset, member.decode(), score) for member, score in items]
        rows.sort(key=lambda row: (-row[3], row[2]))
        return rows[offset : offset + size + 1]

    async def brief(self, game_ids: Sequence[str]) -> list[GameRecord | None]:
        """Games without their states and moves (for lists)."""
        names = [name for name in LOAD_FIELDS if name not in ("state", "moves")]
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hmget(keys.game(game_id), names)
        out: list[GameRecord | None] = []
        for game_id, values in zip(game_ids, await pipe.execute(), strict=True):
            if values[0] is None:
                out.append(None)
                continue
            raw = {
                name.encode(): value
                for name, value in zip(names, values, strict=True)
                if value is not None
            }
            out.append(GameRecord.from_hash(game_id, raw))
        return out

    async def set_invite(self, code: str, game_id: str) -> bool:
        """Bind an invite code to a game (False if the code is taken)."""
        done = await self.redis.set(
            keys.invite(code), game_id, nx=True, ex=int(self.settings.invite_ttl)
        )
        return bool(done)

    async def invite_target(self, code: str) -> str | None:
        """The game an invite code opens."""
        value = await self.redis.get(keys.invite(code))
        return text(value) if value else None

    async def set_fields(self, game_id: str, values: Mapping[str, Any]) -> None:
        """Set bookkeeping fields that are not part of the game's versioned content."""
        mapping: dict[Any, Any] = dict(values)
        await self.redis.hset(keys.game(game_id), mapping=mapping)
