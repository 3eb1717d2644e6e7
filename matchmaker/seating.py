"""Seating: game sessions created, joined, withdrawn from, and closed unplayed.

A game is created with its seats (open seats have no player; `open_game` seats its creator
and the bot) and runs as soon as every seat is filled; a player takes an open seat by game
id or invite code, or gives up waiting (`withdraw`); an open game nobody joined is closed
by the sweeper. Every change is one version-checked commit (`Store.commit_change`); the
play path is `play.py`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from matchmaker import clocks, invites, keys
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.errors import (
    game_not_found,
    invite_not_found,
    kept_changing,
    not_finished,
    not_open,
    not_seated,
    quoted,
    seat_kept,
    seat_taken,
)
from matchmaker.limits import Limits
from matchmaker.players import Players
from matchmaker.record import (
    BOT_PLAYER,
    GameRecord,
    GameStatus,
    RatingStatus,
    Seat,
    SeatKind,
    Visibility,
)
from matchmaker.settings import Settings
from matchmaker.store import COMMITS, CONFLICTS, CommitOutcome, Store
from wargame.runtime.refusal import malformed
from wargame.v1 import game_pb2, matchmaker_pb2


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
    bot_level: int = 0
    rematch_of: str = ""


@dataclass
class Seating:
    """Creating games, seating players, closing games that were never played."""

    store: Store
    engine: Engine
    players: Players
    settings: Settings
    limits: Limits | None = None  # wrong invite codes (by default from the store's scripts)

    def __post_init__(self) -> None:
        if self.limits is None:
            self.limits = Limits(self.store.scripts, self.settings)

    async def open_game(
        self,
        player_id: str,
        name: str,
        spec: GameSpec,
        *,
        side: str = "",
        bot_sides: Sequence[str] = (),
        bot_levels: Mapping[str, int] | None = None,
        against_bot: bool = False,
        bot_seconds: float | None = None,
    ) -> tuple[GameRecord, int]:
        """Create a game and seat its creator on `side` (by default one at random of those
        no bot takes): the other seats open, or the bot's (every other seat `against_bot`,
        those of `bot_sides` in a game against people), each bot seat at its level of
        `bot_levels` (by side; the others at the spec's level). `bot_seconds` is the bot's
        time to think (None: the default); a game with an open seat gets an invite code."""
        sides = await self.engine.sides(spec.ruleset, spec.options)
        side = self._creator_side(spec.ruleset, sides, side, bot_sides)
        if bot_sides and against_bot:
            raise malformed("bot_sides", "bot_sides is for games against people (opponent HUMAN)")
        bots = set(bot_sides) or ({s for s in sides if s != side} if against_bot else set())
        levels = dict(bot_levels or {})
        spec = self._with_bot(spec, bots, bot_seconds, levels)
        seats = [
            Seat(side=s, player=player_id, name=name)
            if s == side
            else Seat(
                side=s,
                player=BOT_PLAYER,
                name="Bot",
                kind=SeatKind.BOT,
                level=levels.get(s, 0),
            )
            if s in bots
            else Seat(side=s)
            for s in sides
        ]
        return await self.create(
            spec, seats, with_invite=not all(seat.player for seat in seats), capped=(player_id,)
        )

    @staticmethod
    def _creator_side(
        ruleset: str, sides: Sequence[str], side: str, bot_sides: Sequence[str]
    ) -> str:
        """The side a game's creator takes (`side`, or a free one at random), or the refusal
        of `side` or of `bot_sides`."""
        free = [s for s in sides if s not in bot_sides]
        chosen = side or (free[_coin(len(free))] if free else "")
        if chosen not in sides:
            raise malformed(
                "side",
                f"{ruleset} has no side {quoted(chosen or side)}; sides: {', '.join(sides)}",
            )
        for other in bot_sides:
            if other not in sides or other == chosen or len(set(bot_sides)) < len(bot_sides):
                raise malformed(
                    "bot_sides",
                    f"bot_sides lists {quoted(other)}: list each of the other sides at most "
                    f"once ({', '.join(s for s in sides if s != chosen)})",
                )
        return chosen

    def _with_bot(
        self,
        spec: GameSpec,
        bots: set[str],
        bot_seconds: float | None,
        bot_levels: Mapping[str, int],
    ) -> GameSpec:
        """`spec` with the bot's time and level when a bot sits (checked, with the level of
        each seat in `bot_levels`), else unchanged (refused if it asks for a bot's time or
        level)."""
        if not bots:
            if bot_seconds is not None or spec.bot_level or bot_levels:
                field = (
                    "bot_time"
                    if bot_seconds is not None
                    else "bot_level"
                    if spec.bot_level
                    else "bot_levels"
                )
                raise malformed(
                    field, "bot_time and bot_level are for games against the bot (opponent BOT)"
                )
            return spec
        for side, level in bot_levels.items():
            if side not in bots:
                raise malformed(
                    "bot_levels",
                    f"bot_levels names {quoted(side)}: name only sides the bot takes "
                    f"({', '.join(sorted(bots))})",
                )
            if not 1 <= level <= 5:
                raise malformed(
                    "bot_levels",
                    f"bot_levels gives {quoted(side)} level {level}: a level is 1 to 5",
                )
        seconds = self.settings.bot_time if bot_seconds is None else bot_seconds
        if not 0 < seconds <= self.settings.bot_max_time:
            raise malformed(
                "bot_time",
                f"bot_time must be above 0 and at most {self.settings.bot_max_time:g} s",
            )
        if spec.rated:
            raise malformed("rated", "games with a bot seat are never rated: leave rated unset")
        if spec.bot_level > 5:
            raise malformed("bot_level", "bot_level is 1 (weakest) to 5, or 0 for the default")
        return replace(
            spec, bot_ms=round(seconds * 1000), bot_level=spec.bot_level or self.settings.bot_level
        )

    async def create(
        self,
        spec: GameSpec,
        seats: list[Seat],
        *,
        game_id: str = "",
        with_invite: bool = False,
        capped: Sequence[str] = (),
    ) -> tuple[GameRecord, int]:
        """Create a game with its seats (open seats have no player); running at once when
        every seat is filled. `game_id` makes creation idempotent (queue matches). The game
        counts among its seated players' open games, refused (TOO_MANY_GAMES) for the
        players in `capped` who already sit in as many as they may."""
        try:
            state = await self.engine.new_game(spec.ruleset, spec.options, spec.preset, spec.setup)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=False) from None
        game_id = game_id or keys.new_game_id()
        now = await self.store.time_ms()
        seated = [seat.player for seat in seats if seat.player and seat.kind == SeatKind.HUMAN]
        for player_id in seated:
            await self.players.count_game(player_id, game_id, now, capped=player_id in capped)
        try:
            return await self._create(spec, seats, state, game_id, now, with_invite=with_invite)
        except BaseException:
            await self.players.uncount_games(seated, game_id)
            raise

    async def _create(
        self,
        spec: GameSpec,
        seats: list[Seat],
        state: game_pb2.GameState,
        game_id: str,
        now: int,
        *,
        with_invite: bool,
    ) -> tuple[GameRecord, int]:
        code = ""
        if with_invite:
            for _ in range(5):
                code = invites.new_code()
                if await self.store.set_invite(invites.normalize(code) or code, game_id):
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
            started_ms=now if full else 0,
            seats=seats,
            state_bytes=state.SerializeToString(),
            initial_bytes=state.SerializeToString(),
            clock=clock,
            invite=code,
            bot_ms=spec.bot_ms,
            bot_level=spec.bot_level,
            rating_status=RatingStatus.NONE,
            options=dict(spec.options),
            preset=spec.preset,
            setup=spec.setup,
            rematch_of=spec.rematch_of,
        )
        result = await self.store.commit_change(None, game, now, matchmaker_pb2.WatchGameResponse())
        if result.outcome != CommitOutcome.OK:
            existing, now, _ = await self.store.load(game_id)
            if existing is None:
                raise RuntimeError(f"game {game_id} neither created nor found")
            return existing, now
        COMMITS.labels("create").inc()
        if full:
            await self.players.mark_played([seat.player for seat in seats])
        if spec.visibility == Visibility.PUBLIC and not any(seat.reserved for seat in seats):
            await self.store.list_add(game.status, spec.ruleset, game_id, now)
        return game, now

    async def join(
        self,
        player_id: str,
        name: str,
        *,
        game_id: str = "",
        code: str = "",
        side: str = "",
        address: str = "",
    ) -> tuple[GameRecord, int]:
        """Take an open seat, by game id or invite code; already seated: the game as is.
        Wrong invite codes are limited per player, per address and in all; a right one
        never is."""
        if code:
            game_id = await self._invited(player_id, code, address)
        counted = False
        try:
            for _ in range(self.settings.submit_retries):
                game, now = await self.store.get(game_id)
                if game.seat_of(player_id) is not None:
                    return game, now
                seat = self._free_seat(game, side, player_id, by_invite=bool(code))
                if not counted:
                    await self.players.count_game(player_id, game.id, now, capped=True)
                    counted = True
                try:
                    return await self._take(game, now, seat, player_id, name)
                except _SeatConflictError:
                    CONFLICTS.inc()
            raise kept_changing()
        except BaseException:
            if counted:
                await self.players.uncount_games([player_id], game_id)
            raise

    async def _invited(self, player_id: str, code: str, address: str) -> str:
        """The game an invite code opens. A code that exists is never refused: only a miss
        costs a token of each guess limit, and a miss past a limit is RATE_LIMITED (so one
        who empties the limits for everyone keeps no one with a right code out)."""
        normal = invites.normalize(code)
        if normal is None:
            raise malformed(
                "invite_code",
                f"an invite code is {invites.LENGTH} letters and digits in groups of "
                f"{invites.GROUP}, like 7K3M-9QX2-HF4P-T8WZ",
            )
        assert self.limits is not None
        target = await self.store.invite_target(normal)
        if target is None:
            await self.limits.miss(self.limits.guesses(player_id, address))
            raise invite_not_found()
        return target

    async def _take(
        self, game: GameRecord, now: int, seat: Seat, player_id: str, name: str
    ) -> tuple[GameRecord, int]:
        """Commit `player_id` taking `seat` (_SeatConflictError if the game changed meanwhile)."""
        seats = await self._rated_seats(game, seat, player_id, name)
        full = all(other.player for other in seats)
        after = replace(
            game,
            seats=seats,
            status=GameStatus.RUNNING if full else GameStatus.OPEN,
            acted_ms=now,
            started_ms=now if full else 0,
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
            raise _SeatConflictError()
        COMMITS.labels("join").inc()
        if full:
            await self.players.mark_played([other.player for other in seats])
        if full and game.visibility == Visibility.PUBLIC:
            await self.store.list_remove(GameStatus.OPEN, game.ruleset, game.id)
            await self.store.list_add(GameStatus.RUNNING, game.ruleset, game.id, game.created_ms)
        return after, now

    @staticmethod
    def _free_seat(game: GameRecord, side: str, player_id: str, *, by_invite: bool) -> Seat:
        """The seat a joining player takes (`side`, or the first free one it may take),
        or the refusal."""
        if game.status != GameStatus.OPEN:
            raise not_open(f"game {game.id} is {game.status}; it takes no more players")
        kept = any(seat.reserved == player_id for seat in game.seats)
        if game.visibility == Visibility.PRIVATE and not by_invite and not kept:
            raise not_open(f"game {game.id} is private: join it with its invite code")
        if side:
            seat = game.seat_for(side)
            if seat is None:
                raise malformed(
                    "side",
                    f"game {game.ruleset} has no side {quoted(side)}; sides: "
                    + ", ".join(s.side for s in game.seats),
                )
            if seat.player:
                raise seat_taken(f"the {side} seat is taken", "side")
            if seat.reserved not in ("", player_id):
                raise seat_kept(seat.side)
            return seat
        free = [seat for seat in game.seats if not seat.player]
        if not free:
            raise seat_taken("no seat is free")
        mine = [seat for seat in free if seat.reserved in ("", player_id)]
        if not mine:
            raise seat_kept(free[0].side)
        return mine[0]

    async def _rated_seats(
        self, game: GameRecord, taken: Seat, player_id: str, name: str
    ) -> list[Seat]:
        """The seats once `player_id` takes `taken`, every human's rating as of now."""
        ratings = {
            other.player: await self.players.rating_text(other.player, game.rating_pool)
            for other in game.seats
            if other.player and other.kind == SeatKind.HUMAN
        }
        ratings[player_id] = await self.players.rating_text(player_id, game.rating_pool)
        return [
            replace(other, player=player_id, name=name, rating=ratings[player_id])
            if other.side == taken.side
            else replace(other, rating=ratings.get(other.player, other.rating))
            if other.player
            else other
            for other in game.seats
        ]

    async def rematch(self, player_id: str, name: str, game_id: str) -> tuple[GameRecord, int]:
        """Play a finished game again, sides swapped: a new game with the same options, the
        opponent's seat kept for it (offered on the old game's stream) or the bot's taken at
        once. A rematch already offered by the opponent is accepted: the caller joins it."""
        old, _ = await self.store.get(game_id, full=True)
        seat = old.seat_of(player_id)
        if seat is None:
            raise not_seated(game_id)
        if old.status != GameStatus.FINISHED or old.closed:
            raise not_finished(game_id, closed=bool(old.closed))
        if old.rematch:
            return await self.join(player_id, name, game_id=old.rematch)
        opponent = old.opponent(seat.side)
        if len(old.seats) > 2:
            raise not_open(
                f"a rematch is for games of two players; game {game_id} had {len(old.seats)}: "
                "start a new game of its scenario"
            )
        if opponent is None:
            raise not_open("nobody to play again")
        # Sides swapped: the caller takes the opponent's side, the opponent the caller's.
        mine = Seat(side=opponent.side, player=player_id, name=name)
        theirs = (
            Seat(
                side=seat.side,
                player=opponent.player,
                name=opponent.name,
                kind=SeatKind.BOT,
                level=opponent.level,
            )
            if opponent.kind == SeatKind.BOT
            else Seat(side=seat.side, reserved=opponent.player)
        )
        seats = [mine if other.side == opponent.side else theirs for other in old.seats]
        spec = GameSpec(
            ruleset=old.ruleset,
            options=old.options,
            preset=old.preset,
            setup=old.setup,
            time_control=TimeControl(old.clock.base_ms, old.clock.increment_ms)
            if old.clock is not None
            else TimeControl(),
            rated=old.rated,
            visibility=old.visibility,
            bot_ms=old.bot_ms,
            bot_level=old.bot_level,
            rematch_of=old.id,
        )
        game, now = await self.create(spec, seats, capped=(player_id,))
        offered = await self.store.claim_rematch(old.id, game.id)
        if not offered:
            raise game_not_found(old.id)  # expired meanwhile
        if offered != game.id:  # the opponent offered one at the same moment: take theirs
            await self.close_open(game, now, f"{seat.side} accepted the rematch offered at once")
            await self.store.unschedule(game.id)
            return await self.join(player_id, name, game_id=offered)
        await self.store.add_notice(
            old.id,
            old.version,
            {"n": "REMATCH_OFFERED", "s": seat.side, "g": game.id, "t": str(now)},
        )
        return game, now

    async def withdraw(self, player_id: str, game_id: str) -> tuple[GameRecord, int] | None:
        """Close an open game its seated player gives up waiting for (None if the game is
        not open: then it is resigned as usual). In a game of more than two seats where
        other people sit too, the player only leaves: its seat is free again."""
        game, now = await self.store.get(game_id)
        seat = game.seat_of(player_id)
        if game.status != GameStatus.OPEN or seat is None:
            return None
        others = [
            s for s in game.seats if s.kind == SeatKind.HUMAN and s.player not in ("", player_id)
        ]
        if len(game.seats) > 2 and others:
            after = replace(
                game,
                seats=[Seat(side=s.side) if s.side == seat.side else s for s in game.seats],
                version=game.version + 1,
                updated_ms=now,
            )
            result = await self.store.commit_change(
                game, after, now, matchmaker_pb2.WatchGameResponse(side=seat.side)
            )
            if result.outcome != CommitOutcome.OK:
                return None  # the game changed meanwhile (it may have started): resigned
            COMMITS.labels("leave").inc()
            await self.players.uncount_games([player_id], game.id)
            return after, now
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
        await self.players.uncount_games([seat.player for seat in game.seats], game.id)
        return after


def _coin(sides: int) -> int:
    return secrets.randbelow(sides)


class _SeatConflictError(Exception):
    """The game changed between its read and the commit of a seat: read it again."""
