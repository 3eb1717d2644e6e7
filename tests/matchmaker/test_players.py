"""Ratings on a real Redis: each finished game counts once per player, even when applied
concurrently (several replicas) or again (a retried settlement); the leaderboard follows."""

from __future__ import annotations

import asyncio

import pytest
from grpc import StatusCode

from matchmaker import keys
from matchmaker.players import Players, Profile
from matchmaker.ratings import Rating, Result, update
from matchmaker.record import BOT_PLAYER
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import text
from matchmaker.tokens import Tokens
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client, sync_client
from wargame.runtime.refusal import Reason, Refusal

pytestmark = pytest.mark.integration


async def parts(redis_url: str) -> tuple[Client, Players, Tokens]:
    redis = await store_client(redis_url)
    settings = Settings(redis_url=redis_url, rate_limit=0)
    scripts = Scripts(redis)
    return redis, Players(redis, scripts, settings), Tokens(redis, scripts, settings)


async def replicas_of(players: Players, redis_url: str, count: int) -> list[Players]:
    """`count` more Players on connections of their own, as on as many replicas."""
    return [
        Players(await store_client(redis_url), players.scripts, players.settings)
        for _ in range(count)
    ]


@both_stores
def test_a_game_counts_once_however_often_it_is_applied(redis_url: str) -> None:
    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Dee", 1)
        many = await replicas_of(players, redis_url, 6)
        results = await asyncio.gather(
            *(p.apply_result("g1", "war", player_id, Rating(), 1.0) for p in many)
        )
        assert sum(result is not None for result in results) == 1
        profile = await players.profile(player_id)
        assert profile is not None and profile.ratings["war"].games == 1
        assert profile.ratings["war"].rating > 1500
        assert await players.apply_result("g1", "war", player_id, Rating(), 1.0) is None
        for p in many:
            await p.redis.aclose()
        await redis.aclose()

    run(scenario())


def test_concurrent_games_of_one_player_all_count(redis_url: str) -> None:
    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Eve", 1)
        many = await replicas_of(players, redis_url, 10)
        await asyncio.gather(
            *(
                p.apply_result(f"g{i}", "battle", player_id, Rating(), 0.0)
                for i, p in enumerate(many)
            )
        )
        profile = await players.profile(player_id)
        assert profile is not None and profile.ratings["battle"].games == 10
        for p in many:
            await p.redis.aclose()
        await redis.aclose()

    run(scenario())


@both_stores
def test_leaderboard_best_first_and_expired_players_drop_out(redis_url: str) -> None:
    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        ids = [(await tokens.register(name, 1))[0] for name in ("Fay", "Gus", "Hal")]
        for score, player_id in zip((1.0, 0.0, 0.5), ids, strict=True):
            await players.apply_result("g", "war", player_id, Rating(), score)
        board = await players.leaderboard("war", 10)
        assert [row[1] for row in board] == ["Fay", "Hal", "Gus"]
        await redis.delete(f"wg:player:{{{ids[0]}}}")
        board = await players.leaderboard("war", 10)
        assert [row[1] for row in board] == ["Hal", "Gus"]
        assert [row[1] for row in await players.leaderboard("war", 1)] == ["Hal"]
        await redis.aclose()

    run(scenario())


def test_a_player_without_a_name_or_a_rating_of_the_game_leaves_the_board(
    redis_url: str,
) -> None:
    """A board entry whose player record lacks its name, or its rating of this game, is
    left off the board (and taken off it), like an expired player's; the others stay."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        ids = [(await tokens.register(name, 1))[0] for name in ("Ida", "Jo", "Kit")]
        for score, player_id in zip((1.0, 0.5, 0.0), ids, strict=True):
            await players.apply_result("g", "war", player_id, Rating(), score)
        await redis.hdel(keys.player(ids[0]), "rating:war")
        await redis.hdel(keys.player(ids[1]), "name")
        assert [row[1] for row in await players.leaderboard("war", 10)] == ["Kit"]
        assert await redis.zrange(keys.leaderboard("war"), 0, -1) == [ids[2].encode()]
        await redis.aclose()

    run(scenario())


def test_a_guest_who_played_keeps_its_keys_and_tokens_the_long_ttl(redis_url: str) -> None:
    """A guest lives `guest_ttl`; once it has played a game, its tokens live as long as its
    other keys (`player_ttl`): it is not logged out while its profile stays."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Dee", 1)
        await tokens.issue(player_id)  # a second token: every one is renewed
        digests = await redis.hvals(keys.player_tokens(player_id))
        assert len(digests) == 2
        token_keys = [keys.player_token(player_id, text(digest)) for digest in digests]
        guest_ttl, player_ttl = players.settings.guest_ttl, players.settings.player_ttl
        for key in token_keys:
            assert 0 < await redis.ttl(key) <= guest_ttl, key
        await players.mark_played([player_id])
        for key in [*token_keys, keys.player(player_id), keys.player_tokens(player_id)]:
            assert player_ttl - 60 < await redis.ttl(key) <= player_ttl, key
        await redis.aclose()

    run(scenario())


@both_stores
def test_games_that_ended_uncounted_make_room_for_a_new_one(redis_url: str) -> None:
    """A player at the cap whose counted games ended or expired without being uncounted
    (a replica stopped before it could) is not refused a new game: the first refusal
    looks the counted games up and forgets those that are over."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, max_open_games=2)
        player_id, *_ = await tokens.register("Lou", 1)
        await players.count_game(player_id, "g-gone", 1, capped=True)  # expired: no record
        await players.count_game(player_id, "g-done", 2, capped=True)
        await redis.hset(keys.game("g-done"), "status", "finished")
        await players.count_game(player_id, "g-new", 3, capped=True)
        counted = await redis.zrange(keys.player_games(player_id), 0, -1)
        assert sorted(text(game_id) for game_id in counted) == ["g-new"]
        await redis.aclose()

    run(scenario())


def test_a_player_at_the_cap_with_running_games_is_refused(redis_url: str) -> None:
    """Counted games that still run are kept: the new one is refused (TOO_MANY_GAMES,
    naming the cap) and not counted; one of them counted again is not refused."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, max_open_games=2)
        player_id, *_ = await tokens.register("Max", 1)
        for number in (1, 2):
            await redis.hset(keys.game(f"g{number}"), "status", "running")
            await players.count_game(player_id, f"g{number}", number, capped=True)
        with pytest.raises(Refusal) as refused:
            await players.count_game(player_id, "g3", 3, capped=True)
        assert (refused.value.code, refused.value.reason) == (
            StatusCode.RESOURCE_EXHAUSTED,
            Reason.TOO_MANY_GAMES,
        )
        assert refused.value.message == (
            "you sit in 2 unfinished games, the most one player may: finish, resign or "
            "withdraw one first"
        )
        counted = await redis.zrange(keys.player_games(player_id), 0, -1)
        assert sorted(text(game_id) for game_id in counted) == ["g1", "g2"]
        # A game counted already is counted again at the cap (a call retried), unchanged.
        await players.count_game(player_id, "g2", 4, capped=True)
        assert await redis.zscore(keys.player_games(player_id), "g2") == 2
        await redis.aclose()

    run(scenario())


@both_stores
def test_players_who_expired_do_not_stop_the_others_being_marked_played(
    redis_url: str,
) -> None:
    """Of the players of a game that starts, one whose keys expired meanwhile is skipped
    (nothing is recreated for it); every other one still becomes a player of the long TTL."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        gone, *_ = await tokens.register("Ned", 1)
        kept = [(await tokens.register(name, 1))[0] for name in ("Oda", "Pia")]
        await redis.delete(keys.player(gone))
        await players.mark_played([gone, *kept, BOT_PLAYER])
        assert not await redis.exists(keys.player(gone))
        player_ttl = players.settings.player_ttl
        for player_id in kept:  # on a cluster, players' keys lie in different slots
            assert await redis.hget(keys.player(player_id), "played") == b"1"
            assert player_ttl - 60 < await redis.ttl(keys.player(player_id)) <= player_ttl
        await redis.aclose()

    run(scenario())


def test_a_board_read_looks_at_a_bounded_window_and_clears_the_expired_it_meets(
    redis_url: str,
) -> None:
    """One read of a board of `limit` rows looks at the best 2 x limit + 11 entries only
    (bounded work however many expired players crowd the top); the expired ones it meets
    are taken off the board, so the next read reaches the player behind them."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Quin", 1)
        await players.apply_result("g", "war", player_id, Rating(), 1.0)
        board = keys.leaderboard("war")
        await redis.zadd(board, {f"expired-{n}": 3000 - n for n in range(1 * 2 + 11)})
        assert await players.leaderboard("war", 1) == []
        assert await redis.zrange(board, 0, -1) == [player_id.encode()]
        assert [row[1] for row in await players.leaderboard("war", 1)] == ["Quin"]
        await redis.aclose()

    run(scenario())


def test_a_board_keeps_only_its_best_players(redis_url: str) -> None:
    """A leaderboard holds `leaderboard_size` players: the lowest rated drop off it."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, leaderboard_size=2)
        ids = [(await tokens.register(name, 1))[0] for name in ("Rae", "Sol", "Tam")]
        for score, player_id in zip((0.0, 1.0, 0.5), ids, strict=True):
            await players.apply_result("g", "war", player_id, Rating(), score)
        assert await redis.zrevrange(keys.leaderboard("war"), 0, -1) == [
            ids[1].encode(),
            ids[2].encode(),
        ]
        board = await players.leaderboard("war", 10)
        assert [row[1] for row in board] == ["Sol", "Tam"]
        assert [row[2].text() for row in board] == [
            await players.rating_text(player_id, "war") for player_id in ids[1:]
        ]
        assert board[0][2].rating > 1500 and board[1][2].games == 1
        await redis.aclose()

    run(scenario())


def test_a_player_remembers_its_last_counted_games_for_the_long_ttl(redis_url: str) -> None:
    """The games counted in a player's ratings are remembered (`rated_memory` of them,
    the oldest forgotten first) as long as the player's other keys live; each count
    answers the rating it started from and the one it stored."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, rated_memory=2)
        player_id, *_ = await tokens.register("Uma", 1)
        kept = []  # each count answers the rating before it and the one after
        for number in range(3):
            pair = await players.apply_result(f"g{number}", "war", player_id, Rating(), 1.0)
            assert pair is not None and pair[1] == await players.rating_text(player_id, "war")
            kept.append(pair)
        assert [before for before, _ in kept] == [Rating().text(), kept[0][1], kept[1][1]]
        rated = keys.player_rated(player_id)
        assert await redis.zcard(rated) == 2
        player_ttl = players.settings.player_ttl
        assert player_ttl - 60 < await redis.ttl(rated) <= player_ttl
        await redis.aclose()

    run(scenario())


def test_room_for_a_game_is_made_by_forgetting_games_that_ended(redis_url: str) -> None:
    """Asking for room (before queueing) at the cap: refused while the counted games run;
    once one has ended without being uncounted, it is forgotten and there is room, unless
    the player still sits in as many as it may after forgetting it."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, max_open_games=2)
        player_id, *_ = await tokens.register("Vic", 1)
        await players.require_room(player_id)
        for number in (1, 2):
            await redis.hset(keys.game(f"g{number}"), "status", "running")
            await players.count_game(player_id, f"g{number}", number, capped=True)
        with pytest.raises(Refusal) as refused:
            await players.require_room(player_id)
        assert refused.value.reason == Reason.TOO_MANY_GAMES
        assert refused.value.message.startswith("you sit in 2 unfinished games, the most")
        await redis.hset(keys.game("g1"), "status", "finished")
        await players.require_room(player_id)
        assert await redis.zrange(keys.player_games(player_id), 0, -1) == [b"g2"]
        # Placed in two more games (beyond the cap), one of which ends: still at the cap.
        for number in (3, 4):
            await redis.hset(keys.game(f"g{number}"), "status", "running")
            await players.count_game(player_id, f"g{number}", number, capped=False)
        await redis.hset(keys.game("g4"), "status", "finished")
        with pytest.raises(Refusal):
            await players.require_room(player_id)
        assert await redis.zrange(keys.player_games(player_id), 0, -1) == [b"g2", b"g3"]
        await redis.aclose()

    run(scenario())


def test_games_counted_without_the_cap_are_not_limited(redis_url: str) -> None:
    """Games a player is placed in (not asked for, `capped=False`) always count, beyond
    the cap; the count lives as long as the player's other keys."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        players.settings = Settings(redis_url=redis_url, rate_limit=0, max_open_games=1)
        player_id, *_ = await tokens.register("Wes", 1)
        for number in (1, 2, 3):
            await redis.hset(keys.game(f"g{number}"), "status", "running")
            await players.count_game(player_id, f"g{number}", number, capped=False)
        games = keys.player_games(player_id)
        assert await redis.zrange(games, 0, -1, withscores=True) == [
            (b"g1", 1.0),
            (b"g2", 2.0),
            (b"g3", 3.0),
        ]
        player_ttl = players.settings.player_ttl
        assert player_ttl - 60 < await redis.ttl(games) <= player_ttl
        await redis.aclose()

    run(scenario())


def test_the_bot_has_a_profile_of_its_own_and_players_show_their_ratings(
    redis_url: str,
) -> None:
    """The bot is known without a record (named "Bot", marked a bot, unrated); a player's
    profile shows its name and a rating per ruleset, in ruleset order; an unknown player
    has none."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        bot_profile = await players.profile(BOT_PLAYER)
        assert bot_profile is not None
        assert bot_profile == Profile(BOT_PLAYER, "Bot", {}, bot=True)
        bot = bot_profile.message()
        assert (bot.id, bot.display_name, bot.bot, list(bot.ratings)) == (
            BOT_PLAYER,
            "Bot",
            True,
            [],
        )
        player_id, *_ = await tokens.register("Xan", 1)
        await players.apply_result("g1", "war", player_id, Rating(), 1.0)
        await players.apply_result("g2", "battle", player_id, Rating(), 0.0)
        profile = await players.profile(player_id)
        assert profile is not None and profile.name == "Xan" and not profile.bot
        message = profile.message()
        assert profile.player_id == message.id == player_id
        assert [(r.game, r.games) for r in message.ratings] == [("battle", 1), ("war", 1)]
        assert message.ratings[1].rating == profile.ratings["war"].rating > 1500
        war = profile.ratings["war"]
        shown = message.ratings[1]
        assert (shown.rating, shown.deviation, shown.volatility, shown.games) == (
            war.rating,
            war.deviation,
            war.volatility,
            war.games,
        )
        assert 0 < war.deviation < Rating().deviation and war.volatility > 0
        assert not profile.message(with_ratings=False).ratings
        assert await players.profile("p-unknown") is None
        # A record that lost its name reads as a nameless player, its ratings kept.
        await redis.hdel(keys.player(player_id), "name")
        nameless = await players.profile(player_id)
        assert nameless is not None and nameless.name == ""
        assert nameless.ratings == profile.ratings
        await redis.aclose()

    run(scenario())


def test_a_result_for_a_player_who_expired_is_not_counted(redis_url: str) -> None:
    """A game that ends after a player's keys expired counts for nobody: no rating, no
    record is made again, and nobody joins the board."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Yul", 1)
        await redis.delete(keys.player(player_id))
        assert await players.apply_result("g1", "war", player_id, Rating(), 1.0) is None
        assert not await redis.exists(keys.player(player_id))
        assert await players.leaderboard("war", 10) == []
        await redis.aclose()

    run(scenario())


@both_stores
def test_a_game_that_ends_no_longer_counts_for_its_players(redis_url: str) -> None:
    """The game is uncounted for each of its players (the bot and an empty seat have no
    count); their other games still count."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        ids = [(await tokens.register(name, 1))[0] for name in ("Zed", "Abe")]
        for player_id in ids:
            for number in (1, 2):
                await players.count_game(player_id, f"g{number}", number, capped=False)
        await players.uncount_games([*ids, BOT_PLAYER, ""], "g1")
        for player_id in ids:  # on a cluster, players' keys lie in different slots
            assert await redis.zrange(keys.player_games(player_id), 0, -1) == [b"g2"]
        await players.uncount_games([BOT_PLAYER, ""], "g2")  # nobody to uncount
        assert not await redis.exists(keys.player_games(BOT_PLAYER), keys.player_games(""))
        await redis.aclose()

    run(scenario())


def test_a_rating_that_keeps_changing_while_a_game_is_counted_is_given_up(
    redis_url: str,
) -> None:
    """Each try reads the rating, computes the new one and stores it only if the rating
    is still the one read; when another game is counted in between every time, the
    count gives up after twenty tries, saying so, and stores nothing of its own."""

    async def scenario() -> None:
        redis, players, tokens = await parts(redis_url)
        player_id, *_ = await tokens.register("Bea", 1)
        other = sync_client(redis_url)
        tries: list[Rating] = []

        def change(before: Rating) -> Rating:
            tries.append(before)
            # Meanwhile another replica counts another game of the player.
            meanwhile = Rating(1500.0 + len(tries), 300.0, 0.06, len(tries))
            other.hset(keys.player(player_id), "rating:war", meanwhile.text())
            return update(before, [Result(Rating(), 1.0)])

        try:
            with pytest.raises(RuntimeError) as failed:
                await players.apply_change("g1", "war", player_id, change)
        finally:
            other.close()
        assert str(failed.value) == (
            f"rating of {player_id} kept changing while game g1 was counted"
        )
        assert len(tries) == 20 and tries[0] == Rating()  # unrated when first read
        assert tries[1:] == [Rating(1500.0 + n, 300.0, 0.06, n) for n in range(1, 20)]
        assert not await redis.exists(keys.player_rated(player_id))
        assert await players.leaderboard("war", 10) == []
        await redis.aclose()

    run(scenario())
