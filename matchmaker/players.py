"""Player profiles, ratings per ruleset, the leaderboards, and each player's open games.

Ratings live in the player's hash (`rating:<ruleset>` = `Rating.text()`). A finished rated
game updates each player's rating exactly once: `apply_rating.lua` stores the new value
only if the game is not yet in the player's counted set and the rating it was computed
from is still current (else the caller recomputes). The leaderboard is a sorted set per
ruleset that follows the stored ratings.

A player's unfinished games are counted in a sorted set (`open_game.lua`), so nobody sits
in more than `max_open_games` at once; a guest becomes a player (and keeps its keys for
the long TTL) once a game it sits in starts (`mark_played`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from matchmaker import keys
from matchmaker.ratings import Rating, Result, update
from matchmaker.record import BOT_PLAYER, GameStatus
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import text
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import matchmaker_pb2

RATING_PREFIX = "rating:"
BOT_NAME = "Bot"


@dataclass(frozen=True)
class Profile:
    """A player's name and ratings."""

    player_id: str
    name: str
    ratings: dict[str, Rating]
    bot: bool = False

    def message(self, with_ratings: bool = True) -> matchmaker_pb2.Player:
        """The wargame.v1.Player."""
        player = matchmaker_pb2.Player(id=self.player_id, display_name=self.name, bot=self.bot)
        if with_ratings:
            for ruleset in sorted(self.ratings):
                player.ratings.append(rating_message(ruleset, self.ratings[ruleset]))
        return player


def rating_message(ruleset: str, rating: Rating) -> matchmaker_pb2.Rating:
    """The wargame.v1.Rating of a rating."""
    return matchmaker_pb2.Rating(
        game=ruleset,
        rating=rating.rating,
        deviation=rating.deviation,
        volatility=rating.volatility,
        games=rating.games,
    )


class Players:
    """Reading profiles, applying rating results, the leaderboards."""

    def __init__(self, redis: Client, scripts: Scripts, settings: Settings) -> None:
        self.redis = redis
        self.scripts = scripts
        self.settings = settings

    async def profile(self, player_id: str) -> Profile | None:
        """A player's profile, or None if unknown (or expired)."""
        if player_id == BOT_PLAYER:
            return Profile(BOT_PLAYER, BOT_NAME, {}, bot=True)
        raw = {text(k): v for k, v in (await self.redis.hgetall(keys.player(player_id))).items()}
        if not raw:
            return None
        ratings = {
            name.removeprefix(RATING_PREFIX): Rating.parse(value)
            for name, value in raw.items()
            if name.startswith(RATING_PREFIX)
        }
        return Profile(player_id, text(raw.get("name", b"")), ratings)

    async def mark_played(self, player_ids: Sequence[str]) -> None:
        """These players have played a game: their keys now live the long TTL."""
        humans = [player_id for player_id in player_ids if player_id and player_id != BOT_PLAYER]
        if not humans:
            return
        ttl = int(self.settings.player_ttl)
        pipe = self.redis.pipeline(transaction=False)
        for player_id in humans:
            pipe.hvals(keys.player_tokens(player_id))
        digests = await pipe.execute()
        pipe = self.redis.pipeline(transaction=False)
        for player_id, held in zip(humans, digests, strict=True):
            if not await self.redis.exists(keys.player(player_id)):
                continue  # expired meanwhile: nothing to keep
            pipe.hset(keys.player(player_id), "played", "1")
            for key in keys.player_keys(player_id):
                pipe.expire(key, ttl)
            for digest in held:
                pipe.expire(keys.player_token(player_id, text(digest)), ttl)
        await pipe.execute()

    async def count_game(self, player_id: str, game_id: str, now_ms: int, *, capped: bool) -> None:
        """Count a game among the player's unfinished ones; TOO_MANY_GAMES (when `capped`)
        if the player already sits in as many as it may."""
        most = self.settings.max_open_games if capped else 0
        for attempt in range(2):
            reply = await self.scripts.run(
                "open_game",
                [keys.player_games(player_id)],
                [game_id, now_ms, most, int(self.settings.player_ttl)],
            )
            if int(reply[0]) == 1:
                return
            if attempt == 0 and await self._forget_finished(player_id):
                continue
        raise _too_many(most)

    async def require_room(self, player_id: str) -> None:
        """TOO_MANY_GAMES if the player sits in as many unfinished games as it may."""
        most = self.settings.max_open_games
        key = keys.player_games(player_id)
        if not most or await self.redis.zcard(key) < most:
            return
        if not await self._forget_finished(player_id) or await self.redis.zcard(key) >= most:
            raise _too_many(most)

    async def uncount_games(self, player_ids: Sequence[str], game_id: str) -> None:
        """The game no longer counts for these players (it ended, or they left it)."""
        humans = [player_id for player_id in player_ids if player_id and player_id != BOT_PLAYER]
        if humans:
            pipe = self.redis.pipeline(transaction=False)
            for player_id in humans:
                pipe.zrem(keys.player_games(player_id), game_id)
            await pipe.execute()

    async def _forget_finished(self, player_id: str) -> bool:
        """Drop counted games that ended or expired without being uncounted; True if any."""
        key = keys.player_games(player_id)
        counted = [text(game_id) for game_id in await self.redis.zrange(key, 0, -1)]
        pipe = self.redis.pipeline(transaction=False)
        for game_id in counted:
            pipe.hget(keys.game(game_id), "status")
        statuses = await pipe.execute()
        done = [
            game_id
            for game_id, status in zip(counted, statuses, strict=True)
            if status is None or text(status) == GameStatus.FINISHED
        ]
        if done:
            await self.redis.zrem(key, *done)
        return bool(done)

    async def rating_text(self, player_id: str, ruleset: str) -> str:
        """The stored rating text of a player in a ruleset ("" for none)."""
        value = await self.redis.hget(keys.player(player_id), RATING_PREFIX + ruleset)
        return text(value) if value else ""

    async def apply_result(
        self, game_id: str, ruleset: str, player_id: str, opponent: Rating, score: float
    ) -> tuple[str, str] | None:
        """Count one finished game of two players in a player's rating, once; the ratings
        before and after it (Rating texts) if stored now, None if it was counted before or
        the player is gone."""
        return await self.apply_change(
            game_id, ruleset, player_id, lambda before: update(before, [Result(opponent, score)])
        )

    async def apply_change(
        self, game_id: str, pool: str, player_id: str, change: Callable[[Rating], Rating]
    ) -> tuple[str, str] | None:
        """Count one finished game in a player's rating in a pool (`ratings.pool`), once:
        `change` makes the rating after it from the rating before; the two (Rating texts)
        if stored now, None if it was counted before or the player is gone."""
        field = RATING_PREFIX + pool
        for _ in range(20):
            before = await self.rating_text(player_id, pool)
            after = change(Rating.parse(before))
            done = await self.scripts.run(
                "apply_rating",
                [keys.player(player_id), keys.player_rated(player_id)],
                [
                    game_id,
                    field,
                    before,
                    after.text(),
                    self.settings.rated_memory,
                    int(self.settings.player_ttl),
                ],
            )
            if done == 1:
                await self._rank(pool, player_id, after)
                return Rating.parse(before).text(), after.text()
            if done in (0, -2):
                return None
        raise RuntimeError(f"rating of {player_id} kept changing while game {game_id} was counted")

    async def _rank(self, ruleset: str, player_id: str, rating: Rating) -> None:
        key = keys.leaderboard(ruleset)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(key, {player_id: rating.rating})
        pipe.zremrangebyrank(key, 0, -(self.settings.leaderboard_size + 1))
        await pipe.execute()

    async def leaderboard(self, ruleset: str, limit: int) -> list[tuple[str, str, Rating]]:
        """The best players of a ruleset: (player id, name, rating), best first."""
        key = keys.leaderboard(ruleset)
        rows = await self.redis.zrevrange(key, 0, limit * 2 + 10)
        ids = [text(row) for row in rows]
        pipe = self.redis.pipeline(transaction=False)
        for player_id in ids:
            pipe.hmget(keys.player(player_id), ["name", RATING_PREFIX + ruleset])
        out: list[tuple[str, str, Rating]] = []
        gone: list[str] = []
        for player_id, (name, rating) in zip(ids, await pipe.execute(), strict=True):
            if name is None or rating is None:
                gone.append(player_id)  # expired players leave the board lazily
                continue
            out.append((player_id, name.decode(), Rating.parse(rating)))
        if gone:
            await self.redis.zrem(key, *gone)
        out.sort(key=lambda row: -row[2].rating)
        return out[:limit]


def _too_many(most: int) -> Refusal:
    return Refusal(
        Code.RESOURCE_EXHAUSTED,
        Reason.TOO_MANY_GAMES,
        f"you sit in {most} unfinished games, the most one player may: finish, resign or "
        "withdraw one first",
    )
