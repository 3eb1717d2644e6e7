"""Seating: game sessions created, joined, withdrawn from, and closed unplayed.

A game is created with its seats (open seats have no player) and runs as soon as every
seat is filled; a player takes an open seat by game id or invite code, or gives up waiting
(`withdraw`); an open game nobody joined is closed by the sweeper. Every change is one
version-checked commit (`Store.commit_change`); the play path is `play.py`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace

from matchmaker import clocks
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.errors import kept_changing
from matchmaker.players import Players
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind, Visibility
from matchmaker.settings import Settings
from matchmaker.store import COMMITS, CONFLICTS, CommitOutcome, Store
from matchmaker.tokens import random_id
from wargame.runtime.refusal import Code, Reason, Refusal, malformed
from wargame.v1 import matchmaker_pb2

INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def invite_code() -> str:
    """A fresh invite code (8 unambiguous characters)."""
    rng = random.SystemRandom()
    return "".join(rng.choice(INVITE_ALPHABET) for _ in range(8))


@dataclass(frozen=True)
class TimeControl:
    """Base and increment in ms (base 0: untimed)."""

    base_ms: int = 0
    increment_ms: int = 0

    @classmethod
    def of(
        cls, message: matchmaker_pb2.TimeControl | None, field: str = "time_control"
    ) -> TimeControl:
        """Checked from the contract's message (None or unset: untimed)."""
        if message is None or not (message.HasField("base") or message.HasField("increment")):
            return cls()
        base = message.base.ToMilliseconds()
        increment = message.increment.ToMilliseconds()
        if base <= 0 or base > 7 * 24 * 3600 * 1000:
            raise malformed(f"{field}.base", "the base time must be positive and at most 7 days")
        if increment < 0 or increment > 3600 * 1000:
            raise malformed(f"{field}.increment", "the increment must be 0 to 1 hour")
        return cls(base, increment)

    def text(self) -> str:
        """Canonical text (queue keys, configs)."""
        return f"{self.base_ms}+{self.increment_ms}"


@dataclass(frozen=True)
class GameSpec:
    """What a new game is made of."""

    ruleset: str
    options: Mapping[str, str]
    preset: str = ""
    setup: str = ""
    time_control: TimeControl = TimeControl()
    rated: bool = False
    visibility: Visibility = Visibility.PUBLIC
    bot_ms: int = 0


@dataclass
class Sessions:
    """Creating games, seating players, closing games that were never played."""

    store: Store
    engine: Engine
    players: Players
    settings: Settings

    async def create(
        self,
        spec: GameSpec,
        seats: list[Seat],
        *,
        game_id: str = "",
        with_invite: bool = False,
    ) -> tuple[GameRecord, int]:
        """Create a game with its seats (open seats have no player); running at once when
        every seat is filled. `game_id` makes creation idempotent (queue matches)."""
        try:
            state = await self.engine.new_game(spec.ruleset, spec.options, spec.preset, spec.setup)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=False) from None
        game_id = game_id or random_id("g", 14)
        now = await self.store.time_ms()
        code = ""
        if with_invite:
            for _ in range(5):
                code = invite_code()
                if await self.store.set_invite(code, game_id):
                    break
            else:
                raise RuntimeError("no free invite code after 5 tries")
        full = all(seat.player for seat in seats)
        clock = None
        if spec.time_control.base_ms:
            clock = clocks.start(
                spec.time_control.base_ms,
                spec.time_control.increment_ms,
                [seat.side for seat in seats],
                now,
                state.to_act if full else (),
            )
        game = GameRecord(
            id=game_id,
            ruleset=spec.ruleset,
            status=GameStatus.RUNNING if full else GameStatus.OPEN,
            version=1,
            visibility=spec.visibility,
            rated=spec.rated,
            created_ms=now,
            updated_ms=now,
            acted_ms=now,
            seats=seats,
            state_bytes=state.SerializeToString(),
            initial_bytes=state.SerializeToString(),
            clock=clock,
            invite=code,
            bot_ms=spec.bot_ms,
            rating_status=RatingStatus.NONE,
            options=dict(spec.options),
            preset=spec.preset,
        )
        result = await self.store.commit_change(None, game, now, matchmaker_pb2.WatchGameResponse())
        if result.outcome != CommitOutcome.OK:
            existing, now, _ = await self.store.load(game_id)
            if existing is None:
                raise RuntimeError(f"game {game_id} neither created nor found")
            return existing, now
        COMMITS.labels("create").inc()
        if spec.visibility == Visibility.PUBLIC:
            await self.store.list_add(game.status, spec.ruleset, game_id, now)
        return game, now

    async def join(
        self, player_id: str, name: str, *, game_id: str = "", code: str = "", side: str = ""
    ) -> tuple[GameRecord, int]:
        """Take an open seat, by game id or invite code; already seated: the game as is."""
        if code:
            target = await self.store.invite_target(code)
            if target is None:
                raise Refusal(
                    Code.NOT_FOUND,
                    Reason.SESSION_NOT_FOUND,
                    "no game has this invite code (unknown or expired)",
                    field="invite_code",
                )
            game_id = target
        for _ in range(self.settings.submit_retries):
            game, now = await self.store.get(game_id)
            if game.seat_of(player_id) is not None:
                return game, now
            seat = self._free_seat(game, side, by_invite=bool(code))
            seats = await self._rated_seats(game, seat, player_id, name)
            full = all(other.player for other in seats)
            after = replace(
                game,
                seats=seats,
                status=GameStatus.RUNNING if full else GameStatus.OPEN,
                acted_ms=now,
                version=game.version + 1,
                updated_ms=now,
            )
            if full and game.clock is not None:
                after.clock = clocks.start(
                    game.clock.base_ms,
                    game.clock.increment_ms,
                    [s.side for s in seats],
                    now,
                    game.state.to_act,
                )
            result = await self.store.commit_change(
                game, after, now, matchmaker_pb2.WatchGameResponse(side=seat.side)
            )
            if result.outcome == CommitOutcome.CONFLICT:
                CONFLICTS.inc()
                continue
            COMMITS.labels("join").inc()
            if full and game.visibility == Visibility.PUBLIC:
                await self.store.list_remove(GameStatus.OPEN, game.ruleset, game.id)
                await self.store.list_add(
                    GameStatus.RUNNING, game.ruleset, game.id, game.created_ms
                )
            return after, now
        raise kept_changing()

    @staticmethod
    def _free_seat(game: GameRecord, side: str, *, by_invite: bool) -> Seat:
        """The seat a joining player takes (`side`, or the first free one), or the refusal."""
        if game.status != GameStatus.OPEN:
            raise Refusal(
                Code.FAILED_PRECONDITION,
                Reason.GAME_NOT_OPEN,
                f"game {game.id} is {game.status}; it takes no more players",
            )
        if game.visibility == Visibility.PRIVATE and not by_invite:
            raise Refusal(
                Code.FAILED_PRECONDITION,
                Reason.GAME_NOT_OPEN,
                f"game {game.id} is private: join it with its invite code",
            )
        if side:
            seat = game.seat_for(side)
            if seat is None:
                raise malformed(
                    "side",
                    f"game {game.ruleset} has no side {side!r}; sides: "
                    + ", ".join(s.side for s in game.seats),
                )
            if seat.player:
                raise Refusal(
                    Code.FAILED_PRECONDITION,
                    Reason.SEAT_TAKEN,
                    f"the {side} seat is taken",
                    field="side",
                )
            return seat
        free = next((seat for seat in game.seats if not seat.player), None)
        if free is None:
            raise Refusal(Code.FAILED_PRECONDITION, Reason.SEAT_TAKEN, "no seat is free")
        return free

    async def _rated_seats(
        self, game: GameRecord, taken: Seat, player_id: str, name: str
    ) -> list[Seat]:
        """The seats once `player_id` takes `taken`, every human's rating as of now."""
        ratings = {
            other.player: await self.players.rating_text(other.player, game.ruleset)
            for other in game.seats
            if other.player and other.kind == SeatKind.HUMAN
        }
        ratings[player_id] = await self.players.rating_text(player_id, game.ruleset)
        return [
            replace(other, player=player_id, name=name, rating=ratings[player_id])
            if other.side == taken.side
            else replace(other, rating=ratings.get(other.player, other.rating))
            if other.player
            else other
            for other in game.seats
        ]

    async def withdraw(self, player_id: str, game_id: str) -> tuple[GameRecord, int] | None:
        """Close an open game its seated player gives up waiting for (None if the game is
        not open: then it is resigned as usual)."""
        game, now = await self.store.get(game_id)
        seat = game.seat_of(player_id)
        if game.status != GameStatus.OPEN or seat is None:
            return None
        closed = await self.close_open(
            game, now, f"{seat.side} withdrew the game before anyone joined"
        )
        if closed is None:
            return None  # someone joined meanwhile: a real game now
        await self.store.unschedule(game_id)
        return closed, now

    async def close_open(self, game: GameRecord, now: int, message: str = "") -> GameRecord | None:
        """Close an open game (no game was played: no winner); None if it changed meanwhile."""
        after = replace(
            game,
            status=GameStatus.FINISHED,
            version=game.version + 1,
            closed=message or f"nobody joined within {self.settings.open_game_ttl:g} s",
            updated_ms=now,
            ended_ms=now,
        )
        result = await self.store.commit_change(
            game, after, now, matchmaker_pb2.WatchGameResponse()
        )
        if result.outcome != CommitOutcome.OK:
            return None
        COMMITS.labels("close").inc()
        if game.visibility == Visibility.PUBLIC:
            await self.store.list_remove(GameStatus.OPEN, game.ruleset, game.id)
        return after
