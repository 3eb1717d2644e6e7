"""Presence: a player who watches its game is there; one who left is warned, then loses.

A seated player's open WatchGame stream keeps a watcher field in the game's presence hash
(`keys.game_presence`) in the future: the replica serving the stream renews the fields of
all its streams every `presence_interval` (`Presence.run`), so a stream that moves to
another replica, or a replica that dies, changes nothing but whose field is renewed. A
player whose fields have all lapsed has left. What follows is one script
(`presence.lua`): the opponent and spectators see "X disconnected" / "X reconnected"
notices, and a side to act that has left is warned that it loses as abandoned
`abandon_after` seconds later unless it comes back; the sweeper forfeits it then. A game
against the bot alone waits for its player instead (nobody else is kept waiting). A
player thinking with its client open is never abandoned, however long it thinks, nor is
one whose client is refused a stream (`knock`: a field of its own, renewed by each try).
Nor has a player just seated (quick-match pairing, an invite taken, a game against the bot)
left before its client opens its first stream: a side with no watcher field counts as there
for a presence lifetime from the game's start (`started_ms`), unless it has come and gone.
Nor is a restart a player leaving: a replica younger than a presence lifetime counts lapsed
fields as there (their clients reconnect meanwhile), so a matchmaker that was down longer
than that announces nobody as gone when it is back, unless they stay away (the hash of
fields is kept as long as the game's keys, so the fields are there after any outage).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

import structlog

from matchmaker import keys
from matchmaker.record import GameRecord, GameStatus, SeatKind
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import Store, text
from matchmaker.tokens import random_id
from matchmaker.workers import every

log = structlog.get_logger(component="matchmaker")

KNOCKING = "refused"  # the watcher field of a player refused a stream (one per side)


class Presence:
    """The presence of the players watching through this replica, and its consequences."""

    def __init__(self, store: Store, scripts: Scripts, settings: Settings) -> None:
        self.store = store
        self.scripts = scripts
        self.settings = settings
        self.watching: dict[str, set[str]] = {}  # game id -> this replica's watcher fields
        self.poke = asyncio.Event()  # renew at once
        # A lapsed presence counts until this replica has lived one presence lifetime: the
        # streams it had may have been served by a replica that stopped (a restart).
        self.born = time.monotonic()
        # The presence hash lives as long as the game's keys: however long the matchmakers
        # were down, the fields of the streams they served are there to be kept.
        self.kept_ms = int(settings.running_game_ttl * 1000)

    async def arrive(self, game_id: str, side: str) -> str:
        """A seated player of `side` watches: present from now; its watcher field."""
        field = f"{side}|{random_id('w', 10)}"
        self.watching.setdefault(game_id, set()).add(field)
        await self.update(game_id, add=field)
        return field

    async def knock(self, game_id: str, side: str) -> None:
        """A seated player of `side` was refused a stream (the replica holds its most): it
        is there all the same, for `presence_ttl` from now (its client retries well within
        that), so no abandonment clock runs for a player who is being refused."""
        await self.update(game_id, add=f"{side}|{KNOCKING}")

    async def leave(self, game_id: str, field: str) -> None:
        """A watcher stream ended: the player has left unless it watches elsewhere too."""
        fields = self.watching.get(game_id, set())
        fields.discard(field)
        if not fields:
            self.watching.pop(game_id, None)
        await self.update(game_id, remove=field)

    async def review(self, game: GameRecord) -> GameRecord | None:
        """The sweeper's look at a running game: its record with who has left and who is
        warned brought up to date (None: the game changed meanwhile, look again)."""
        reply = await self._run(game, "", "")
        kind = text(reply[0])
        if kind != "ok":
            return None if kind == "conflict" else game
        return replace(game, away=json.loads(reply[1]), warned=json.loads(reply[2]))

    async def update(self, game_id: str, *, add: str = "", remove: str = "") -> None:
        """Add or remove a watcher field and bring the game's presence up to date."""
        for _ in range(self.settings.submit_retries):
            game, _, _ = await self.store.load(game_id)
            if game is None:
                return
            reply = await self._run(game, add, remove)
            # The field is added by the first call, whatever it answered; a removal is
            # named again (a field removed twice is removed once), so that its side gets
            # no start's grace in the call that counts it.
            add = ""
            kind = text(reply[0])
            if kind == "conflict":
                continue
            if kind == "ok":
                warned = json.loads(reply[2])
                if warned:  # the sweeper must come round at the first deadline
                    await self.store.schedule(game_id, min(int(v) for v in warned.values()))
            return

    async def _run(self, game: GameRecord, add: str, remove: str) -> Any:
        humans = [seat.side for seat in game.seats if seat.kind == SeatKind.HUMAN and seat.player]
        # Only a side that keeps another person waiting is warned (and then abandoned).
        waiting = game.keeps_others_waiting()
        to_act = [side for side in humans if waiting and side in game.to_act()]
        lifetime = int(self.settings.presence_ttl * 1000)
        return await self.scripts.run(
            "presence",
            [keys.game(game.id), keys.game_presence(game.id), keys.game_stream(game.id)],
            [
                game.version,
                int(self.settings.abandon_after * 1000),
                add,
                remove,
                lifetime,
                self.settings.stream_maxlen,
                ",".join(humans),
                ",".join(to_act) if game.status == GameStatus.RUNNING else "",
                "1" if time.monotonic() - self.born < self.settings.presence_ttl else "",
                str(game.started_ms + lifetime) if game.started_ms else "",
                self.kept_ms,
            ],
        )

    async def renew(self) -> None:
        """Renew the watcher fields of every stream this replica serves (one round trip)."""
        if not self.watching:
            return
        now = await self.store.time_ms()
        lifetime = int(self.settings.presence_ttl * 1000)
        pipe = self.store.redis.pipeline(transaction=False)
        for game_id, fields in list(self.watching.items()):
            key = keys.game_presence(game_id)
            pipe.hset(key, mapping={field: now + lifetime for field in fields})
            pipe.pexpire(key, self.kept_ms)
        await pipe.execute()

    async def run(self, stop: asyncio.Event) -> None:
        """Renew every `presence_interval` until `stop` is set."""
        await every(
            self.settings.presence_interval, self.poke, stop, self.renew, "presence renewal failed"
        )
