"""The rating compare-and-set (`apply_rating.lua`, `Players.apply_change`) on a real Redis
and a Redis Cluster: a new rating is stored only over the value it was computed from, a game
is counted once, a gone player gets nothing; a rating that changed meanwhile is recomputed
from the new value."""

from __future__ import annotations

import pytest

from matchmaker import keys
from matchmaker.players import Players
from matchmaker.ratings import Rating, Result, update
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import text
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client, sync_client

pytestmark = pytest.mark.integration

PLAYER = "p-cas"
FIELD = "rating:war"
STORED, COUNTED, CHANGED, GONE = 1, 0, -1, -2
BEFORE = Rating(1510.0, 200.0, 0.06, 3).text()
AFTER = Rating(1530.0, 190.0, 0.06, 4).text()


async def apply(
    redis_url: str, game_id: str, before: str, after: str, memory: int = 1000
) -> tuple[int, str | None, list[str]]:
    """Run the script once: its answer, then the stored rating and the counted games."""
    redis = await store_client(redis_url)
    try:
        answer = await Scripts(redis).run(
            "apply_rating",
            [keys.player(PLAYER), keys.player_rated(PLAYER)],
            [game_id, FIELD, before, after, memory, 3600],
        )
        value = await redis.hget(keys.player(PLAYER), FIELD)
        rated = [text(g) for g in await redis.zrange(keys.player_rated(PLAYER), 0, -1)]
    finally:
        await redis.aclose()
    return int(answer), None if value is None else text(value), rated


def player(redis_url: str, **fields: str) -> None:
    client = sync_client(redis_url)
    try:
        client.hset(keys.player(PLAYER), mapping={"name": "Cas", **fields})
    finally:
        client.close()


@both_stores
def test_a_rating_is_stored_over_the_value_it_was_computed_from(redis_url: str) -> None:
    player(redis_url)
    assert run(apply(redis_url, "g1", "", BEFORE)) == (STORED, BEFORE, ["g1"])
    assert run(apply(redis_url, "g2", BEFORE, AFTER)) == (STORED, AFTER, ["g1", "g2"])


@both_stores
def test_a_rating_computed_from_another_value_is_refused_and_nothing_changes(
    redis_url: str,
) -> None:
    player(redis_url, **{FIELD: BEFORE})
    assert run(apply(redis_url, "g1", "", AFTER)) == (CHANGED, BEFORE, [])  # unrated, it said
    assert run(apply(redis_url, "g1", AFTER, AFTER)) == (CHANGED, BEFORE, [])
    assert run(apply(redis_url, "g1", BEFORE, AFTER)) == (STORED, AFTER, ["g1"])


@both_stores
def test_a_game_counted_once_is_not_counted_again_whatever_the_value(redis_url: str) -> None:
    player(redis_url)
    assert run(apply(redis_url, "g1", "", BEFORE))[0] == STORED
    assert run(apply(redis_url, "g1", BEFORE, AFTER)) == (COUNTED, BEFORE, ["g1"])
    assert run(apply(redis_url, "g1", "", AFTER)) == (COUNTED, BEFORE, ["g1"])


@both_stores
def test_a_player_who_is_gone_gets_no_rating_and_no_keys(redis_url: str) -> None:
    assert run(apply(redis_url, "g1", "", BEFORE)) == (GONE, None, [])
    client = sync_client(redis_url)
    try:
        assert not client.exists(keys.player(PLAYER), keys.player_rated(PLAYER))
    finally:
        client.close()


@both_stores
def test_only_the_last_counted_games_are_remembered(redis_url: str) -> None:
    player(redis_url)
    value = ""
    for number in range(1, 5):
        new = Rating(1500.0 + number, 300.0, 0.06, number).text()
        answer, value_now, rated = run(apply(redis_url, f"g{number}", value, new, memory=2))
        assert (answer, value_now) == (STORED, new)
        value = new
    assert sorted(rated) == ["g3", "g4"]


@both_stores
def test_a_counted_game_is_remembered_with_the_second_it_was_counted(redis_url: str) -> None:
    """The rated set's score is when the game was counted, in the server's whole seconds:
    what orders the games it forgets first (the oldest)."""
    player(redis_url)
    client = sync_client(redis_url)
    try:
        before = int(client.time()[0])
        assert run(apply(redis_url, "g1", "", BEFORE))[0] == STORED
        after = int(client.time()[0])
        assert before <= client.zscore(keys.player_rated(PLAYER), "g1") <= after
    finally:
        client.close()


@both_stores
def test_a_rating_changed_once_meanwhile_is_recomputed_from_the_new_value(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        redis = await store_client(redis_url)
        settings = Settings(redis_url=redis_url, rate_limit=0)
        players = Players(redis, Scripts(redis), settings)
        await redis.hset(keys.player(PLAYER), mapping={"name": "Cas", FIELD: BEFORE})
        meanwhile = Rating.parse(AFTER)
        seen: list[Rating] = []

        def change(before: Rating) -> Rating:
            seen.append(before)
            if len(seen) == 1:  # another replica counts another game right now
                other = sync_client(redis_url)
                other.hset(keys.player(PLAYER), FIELD, meanwhile.text())
                other.close()
            return update(before, [Result(Rating(), 1.0)])

        try:
            pair = await players.apply_change("g1", "war", PLAYER, change)
            expected = update(meanwhile, [Result(Rating(), 1.0)])
            assert seen == [Rating.parse(BEFORE), meanwhile]
            assert pair == (meanwhile.text(), expected.text())
            assert await players.rating_text(PLAYER, "war") == expected.text()
            # Counted once: again, it is not counted and the rating stays.
            assert await players.apply_change("g1", "war", PLAYER, change) is None
            assert await players.rating_text(PLAYER, "war") == expected.text()
        finally:
            await redis.aclose()

    run(scenario())


@both_stores
def test_a_count_for_a_player_who_is_gone_ends_at_once_with_nothing(redis_url: str) -> None:
    async def scenario() -> None:
        redis = await store_client(redis_url)
        players = Players(redis, Scripts(redis), Settings(redis_url=redis_url, rate_limit=0))
        tries: list[Rating] = []

        def change(before: Rating) -> Rating:
            tries.append(before)
            return update(before, [Result(Rating(), 1.0)])

        try:
            assert await players.apply_change("g1", "war", PLAYER, change) is None
            assert len(tries) == 1  # one look: no retry for a player who is not there
            assert not await redis.exists(keys.player(PLAYER), keys.player_rated(PLAYER))
        finally:
            await redis.aclose()

    run(scenario())
