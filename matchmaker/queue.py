"""Quick match: one queue per ruleset, options, time control and rated flag.

A queue is a few keys under one hash tag (`keys.queue_keys`): tickets by rating, by join
time, by arrival (a per-queue counter: join times tie within a millisecond, arrivals never)
and by liveness, the tickets' seats, and the matches made. Pairing is one script
(`queue_pair.lua`): tickets in arrival order, each with the nearest rating inside its window,
which widens with waiting time; paired tickets leave the queue in the same step, so
replicas pairing at once never pair a ticket twice. Every replica runs a `Pairer` over
the active queues (an index sharded by queue id, `keys.queues`); the pairer that made a
match creates its game, and if it died first, a matched player's stream creates it after a
grace period (creation is idempotent: the game id is part of the match).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from prometheus_client import Counter, Histogram

from matchmaker import keys
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.players import Players
from matchmaker.ratings import Rating
from matchmaker.record import GameRecord, Seat, SeatKind, Visibility
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.seating import GameSpec, Seating, TimeControl
from matchmaker.settings import Settings
from matchmaker.store import millis, text
from matchmaker.tokens import random_id
from matchmaker.workers import every
from wargame.runtime.refusal import Code, Reason, Refusal, malformed, missing

log = structlog.get_logger(component="matchmaker")

PAIRED = Counter("wargame_matchmaker_pairs_total", "Quick-match pairs made")
WAIT = Histogram(
    "wargame_matchmaker_queue_wait_seconds",
    "Time from joining a queue to a match",
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
PAIR_BATCH = 500  # most pairs one script call makes (keeps each call short for Redis)
PAIR_FIRST = 16  # the game ids a pairing round sends first (doubled while a call uses all)


@dataclass(frozen=True)
class QueueSpec:
    """What a queue's games are: players are paired only within one spec."""

    ruleset: str
    options: Mapping[str, str]  # effective options, canonical (from the engine's NewGame)
    preset: str
    time_control: TimeControl
    rated: bool

    def config(self) -> str:
        """Canonical JSON (also what the queue's id is derived from)."""
        return json.dumps(
            {
                "game": self.ruleset,
                "options": dict(sorted(self.options.items())),
                "preset": self.preset,
                "tc": [self.time_control.base_ms, self.time_control.increment_ms],
                "rated": self.rated,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @property
    def queue_id(self) -> str:
        """The queue's id."""
        return keys.queue_id(self.config())

    @classmethod
    def from_config(cls, text: str | bytes) -> QueueSpec:
        """A spec from its canonical JSON."""
        data = json.loads(text)
        return cls(
            data["game"], data["options"], data["preset"], TimeControl(*data["tc"]), data["rated"]
        )

    def game_spec(self) -> GameSpec:
        """The GameSpec of a game of this queue."""
        return GameSpec(
            self.ruleset,
            self.options,
            self.preset,
            time_control=self.time_control,
            rated=self.rated,
            visibility=Visibility.PUBLIC,
        )


@dataclass(frozen=True)
class Ticket:
    """A place in a queue: `text` is what the client holds (`<queue id>.<ticket>`)."""

    queue_id: str
    ticket: str

    @property
    def text(self) -> str:
        """The client's form."""
        return f"{self.queue_id}.{self.ticket}"

    @classmethod
    def parse(cls, text: str) -> Ticket:
        """A ticket from the client's form."""
        queue_id, dot, ticket = text.partition(".")
        if (
            not dot
            or not queue_id.startswith("q")
            or not keys.plausible_id(queue_id)
            or not keys.plausible_id(ticket)
        ):
            raise malformed("ticket", "the ticket is malformed")
        return cls(queue_id, ticket)


@dataclass
class Status:
    """Where a ticket stands: "waiting" (with its place), "matched" (with the match), or
    "gone" (left or dropped)."""

    kind: str
    position: int = 0
    waiting: int = 0
    joined_ms: int = 0
    now_ms: int = 0
    match: dict[str, Any] = field(default_factory=dict)


class Queues:
    """Joining, waiting in, leaving and pairing the quick-match queues."""

    def __init__(
        self,
        *,
        redis: Client,
        scripts: Scripts,
        engine: Engine,
        players: Players,
        seating: Seating,
        settings: Settings,
    ) -> None:
        self.redis = redis
        self.scripts = scripts
        self.engine = engine
        self.players = players
        self.seating = seating
        self.settings = settings
        # Set when this replica pairs someone, and then replaced by a new one: a waiting
        # stream takes it before it looks at its ticket, and waits on it after (a pairing
        # in between has set it: no signal is missed).
        self.matched = asyncio.Event()

    def window(self, waited_ms: int) -> float:
        """The rating difference accepted after waiting `waited_ms`."""
        s = self.settings
        return min(s.window_max, s.window_base + s.window_growth * waited_ms / 1000)

    async def spec(
        self,
        ruleset: str,
        options: Mapping[str, str],
        preset: str,
        time_control: TimeControl,
        rated: bool,
    ) -> QueueSpec:
        """A checked queue spec (the engine validates the options and fills defaults)."""
        if not ruleset:
            raise missing("game")
        sides = await self.engine.sides(ruleset, options)
        if len(sides) != 2:
            raise malformed(
                "options",
                f"quick match pairs two players; this game has {len(sides)} "
                f"({', '.join(sides)}): create it and share its invite code instead",
            )
        try:
            state = await self.engine.new_game(ruleset, options, preset, "")
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=False) from None
        return QueueSpec(ruleset, dict(state.options), preset, time_control, rated)

    async def join(
        self, player_id: str, name: str, spec: QueueSpec, *, liveness: float | None = None
    ) -> Ticket:
        """Put the player in the spec's queue (ALREADY_QUEUED if it waits somewhere)."""
        ticket = Ticket(spec.queue_id, random_id("t", 12))
        live_s = liveness or self.settings.ticket_liveness
        taken = await self.redis.set(
            keys.player_queue(player_id), ticket.text, nx=True, ex=max(1, round(live_s))
        )
        if not taken:
            raise Refusal(
                Code.FAILED_PRECONDITION,
                Reason.ALREADY_QUEUED,
                "you are already waiting in a queue: leave it first",
            )
        rating_text = await self.players.rating_text(player_id, spec.ruleset)
        rating = Rating.parse(rating_text)
        seat = json.dumps({"p": player_id, "n": name, "rt": rating_text}, separators=(",", ":"))
        joined = await self.scripts.run(
            "queue_join",
            keys.queue_keys(spec.queue_id),
            [
                ticket.ticket,
                rating.rating,
                seat,
                spec.config(),
                int(live_s * 1000),
                int(self.settings.queue_ttl),
            ],
        )
        await self._active(spec.queue_id, int(joined))
        return ticket

    async def _now(self) -> int:
        return millis(await self.redis.time())

    async def _active(self, queue_id: str, now_ms: int) -> None:
        """Mark a queue active (the pairers visit it)."""
        shard = keys.shard(queue_id, self.seating.store.shards)
        await self.redis.zadd(keys.queues(shard), {queue_id: now_ms})

    async def status(self, player_id: str, ticket: Ticket) -> Status:
        """Renew a waiting ticket and report where it stands."""
        reply, _ = await asyncio.gather(  # the queue's slot and the player's, side by side
            self.scripts.run(
                "queue_status",
                keys.queue_keys(ticket.queue_id),
                [ticket.ticket, int(self.settings.ticket_liveness * 1000)],
            ),
            self.redis.expire(
                keys.player_queue(player_id), max(1, round(self.settings.ticket_liveness))
            ),
        )
        kind = reply[0].decode()
        if kind == "matched":
            return Status(kind, match=json.loads(reply[1]))
        if kind == "waiting":
            await self._active(ticket.queue_id, int(reply[4]))
            return Status(kind, int(reply[1]), int(reply[2]), int(float(reply[3])), int(reply[4]))
        return Status(kind)

    async def leave(self, player_id: str, ticket: Ticket | None) -> Status:
        """Leave a queue (the player's current one when `ticket` is None)."""
        if ticket is None:
            held = await self.redis.get(keys.player_queue(player_id))
            if held is None:
                return Status("gone")
            ticket = Ticket.parse(text(held))
        reply = await self.scripts.run(
            "queue_leave", keys.queue_keys(ticket.queue_id), [ticket.ticket, player_id]
        )
        kind = reply[0].decode()
        current = await self.redis.get(keys.player_queue(player_id))
        if current is not None and text(current) == ticket.text:
            await self.redis.delete(keys.player_queue(player_id))
        if kind == "matched":
            return Status(kind, match=json.loads(reply[1]))
        return Status(kind)

    async def claim(self, player_id: str, ticket: Ticket) -> None:
        """Forget a match its player has received."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hdel(keys.queue_matches(ticket.queue_id), ticket.ticket)
        pipe.zrem(keys.queue_matched(ticket.queue_id), ticket.ticket)
        pipe.delete(keys.player_queue(player_id))
        await pipe.execute()

    # -- pairing ---------------------------------------------------------------------------

    async def pair(self, queue_id: str) -> list[dict[str, Any]]:
        """Pair what can be paired in one queue now; returns the matches made."""
        made: list[dict[str, Any]] = []
        s = self.settings
        size = min(PAIR_FIRST, PAIR_BATCH)  # few ids where few wait
        while True:
            ids = [keys.new_game_id() for _ in range(size)]
            coins = "".join(random.choice("01") for _ in range(size))
            reply = await self.scripts.run(
                "queue_pair",
                keys.queue_keys(queue_id),
                [
                    s.window_base,
                    s.window_growth,
                    s.window_max,
                    int(s.match_ttl * 1000),
                    int(s.queue_ttl),
                    size,
                    *ids,
                    coins,
                ],
            )
            batch = [json.loads(item) for item in reply]
            made += batch
            if len(batch) < size:
                break
            size = min(2 * size, PAIR_BATCH)
        if made:
            PAIRED.inc(len(made))
            # Wake this replica's waiting streams now (others find out at their next poll).
            self.matched.set()
            self.matched = asyncio.Event()
        return made

    async def game_for(
        self, queue_id: str, match: Mapping[str, Any], *, create: bool
    ) -> GameRecord | None:
        """The game of a match; created now if `create` (idempotent), else None if missing."""
        game, _, _ = await self.seating.store.load(match["g"])
        if game is not None or not create:
            return game
        raw = await self.redis.get(keys.queue_config(queue_id))
        if raw is None:
            raise Refusal(Code.NOT_FOUND, Reason.SESSION_NOT_FOUND, "the queue has expired")
        spec = QueueSpec.from_config(raw)
        sides = await self.engine.sides(spec.ruleset, spec.options)
        seats = [
            Seat(
                side=side,
                player=seat["p"],
                name=seat["n"],
                kind=SeatKind.HUMAN,
                rating=seat.get("rt", ""),
            )
            for side, seat in zip(sides, match["seats"], strict=False)
        ]
        game, _ = await self.seating.create(spec.game_spec(), seats, game_id=match["g"])
        return game

    async def pair_all(self) -> int:
        """One pairing round over every active queue; creates the games; returns pairs made."""
        total = 0
        shards = range(self.seating.store.read_shards)
        pipe = self.redis.pipeline(transaction=False)
        for shard in shards:
            pipe.zrange(keys.queues(shard), 0, -1, withscores=True)
        active_queues = [
            (shard, text(raw_id), active)
            for shard, rows in zip(shards, await pipe.execute(), strict=True)
            for raw_id, active in rows
        ]
        if not active_queues:
            return 0  # (an idle round: one round trip)
        now = await self._now()
        for shard, queue_id, active in active_queues:
            matches = await self.pair(queue_id)
            total += len(matches)
            for match in matches:
                WAIT.observe(max(0.0, (now - float(match["t"])) / 1000))
                try:
                    await self.game_for(queue_id, match, create=True)
                except Refusal as error:
                    # The players' streams create it after the grace period.
                    log.warning("match game not created", game_id=match["g"], reason=error.reason)
            if (
                not matches
                and now - active > 60_000
                and not await self.redis.zcard(keys.queue_joined(queue_id))
            ):
                await self.redis.zrem(keys.queues(shard), queue_id)
        return total


class Pairer:
    """The background pairing loop of one replica."""

    def __init__(self, queues: Queues, interval: float) -> None:
        self.queues = queues
        self.interval = interval
        self.poke = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        """Pair every `interval` (sooner when poked) until `stop` is set."""
        await every(self.interval, self.poke, stop, self.queues.pair_all, "pairing round failed")
