"""Tokens on a real Redis: stored as hashes only, checked, revoked, rate limited."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import re

import grpc
import pytest
import redis.asyncio

from matchmaker import keys
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.tokens import Identity, Tokens, token_hash
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client
from wargame.runtime.refusal import Refusal

pytestmark = pytest.mark.integration


async def make(redis_url: str, **changes: object) -> Tokens:
    redis = await store_client(redis_url)
    settings = dataclasses.replace(Settings(redis_url=redis_url, rate_limit=0), **changes)  # type: ignore[arg-type]
    return Tokens(redis, Scripts(redis), settings)


@both_stores
def test_register_authenticate_and_the_token_is_stored_only_as_a_hash(redis_url: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        player_id, name, token, token_id = await tokens.register("  Ada  ", 1)
        assert name == "Ada"
        identity = await tokens.authenticate(token)
        assert (identity.player_id, identity.token_id) == (player_id, token_id)
        secret = token.partition(".")[2].encode()
        for key in await tokens.redis.keys("*"):
            kind = await tokens.redis.type(key)
            values = (
                [await tokens.redis.get(key)]
                if kind == b"string"
                else list((await tokens.redis.hgetall(key)).values())
                if kind == b"hash"
                else []
            )
            assert all(secret not in (value or b"") for value in values), key
        assert await tokens.redis.exists(keys.player_token(player_id, token_hash(token)))
        for key in keys.player_keys(player_id)[:2]:
            assert 0 < await tokens.redis.ttl(key) <= tokens.settings.player_ttl
        await tokens.redis.aclose()

    run(scenario())


@pytest.mark.parametrize(
    "bad",
    [
        "nonsense",
        "p123.short",
        "x123.abcdefghijklmnopqrstuvwxyz",
        "pnobody.abcdefghijklmnopqrstuvwxyz",
    ],
)
def test_bad_tokens_are_unauthenticated(redis_url: str, bad: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(bad)
        assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
        assert caught.value.reason == "TOKEN_INVALID"
        await tokens.redis.aclose()

    run(scenario())


def test_revoke_this_token_or_another_by_id(redis_url: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        _, _, first, first_id = await tokens.register("Bo", 1)
        caller = await tokens.authenticate(first)
        second, second_id = await tokens.issue(caller.player_id)
        await tokens.revoke(caller, second_id)
        with pytest.raises(Refusal):
            await tokens.authenticate(second)
        await tokens.authenticate(first)
        await tokens.revoke(caller, "")
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(first)
        assert caught.value.reason == "TOKEN_INVALID"
        with pytest.raises(Refusal) as unknown:
            await tokens.revoke(caller, first_id)
        assert unknown.value.code == grpc.StatusCode.NOT_FOUND
        await tokens.redis.aclose()

    run(scenario())


def test_rate_limit_refuses_beyond_the_burst_and_refills(redis_url: str) -> None:
    async def scenario() -> None:
        # One request refills every 2 s: the burst is spent long before one comes back,
        # however slow the machine.
        tokens = await make(redis_url, rate_limit=0.5, rate_burst=5.0)
        _, _, token, _ = await tokens.register("Cy", 1)
        for _ in range(5):
            await tokens.authenticate(token)
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token)
        assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert caught.value.reason == "RATE_LIMITED"
        retry_ms = int(caught.value.metadata["retry_after_ms"])
        assert 0 < retry_ms <= 2000
        # The hint is honest: after waiting it out (Redis counts whole milliseconds), the
        # request passes.
        await asyncio.sleep(retry_ms / 1000 + 0.005)
        await tokens.authenticate(token)
        await tokens.redis.aclose()

    run(scenario())


@pytest.mark.parametrize("name", ["", "   ", "x" * 33, "tab\there"])
def test_display_names_are_checked(redis_url: str, name: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        with pytest.raises(Refusal) as caught:
            await tokens.register(name, 1)
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
        await tokens.redis.aclose()

    run(scenario())


def test_a_request_costing_more_takes_more_from_the_bucket(redis_url: str) -> None:
    """A call may cost several requests' worth: it takes its whole cost, so a burst of 5
    holds one call of 3 and not a second (refused with the wait for the token it lacks)."""

    async def scenario() -> None:
        # A slow refill (one request per 100 s): what refills between the calls on a busy
        # machine (seconds) is a small part of the wait.
        tokens = await make(redis_url, rate_limit=0.01, rate_burst=5.0)
        player_id, _, token, _ = await tokens.register("Di", 1)
        assert (await tokens.authenticate(token, cost=3)).player_id == player_id
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token, cost=3)
        assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert caught.value.reason == "RATE_LIMITED"
        # About 2 left of the 3 asked: 100 s for the one lacking (less the refill since).
        assert 90_000 < int(caught.value.metadata["retry_after_ms"]) <= 100_000
        await tokens.redis.aclose()

    run(scenario())


GUEST_TTL, PLAYER_TTL = 1000, 50_000


async def ttls(tokens: Tokens, *names: str) -> list[int]:
    return [await tokens.redis.ttl(name) for name in names]


def test_a_new_player_gets_random_ids_a_profile_and_the_guests_lifetime(redis_url: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url, guest_ttl=GUEST_TTL, player_ttl=PLAYER_TTL)
        player_id, name, token, token_id = await tokens.register("Eve", 1234)
        other = await tokens.register("Eve", 1234)
        assert re.fullmatch(r"p[a-z2-7]{16}", player_id) and name == "Eve"
        assert re.fullmatch(r"t[a-z2-7]{10}", token_id)
        assert (other[0], other[3]) != (player_id, token_id)
        owner, dot, secret = token.partition(".")
        assert (owner, dot) == (player_id, ".") and re.fullmatch(r"[\w-]{43}", secret)
        profile = await tokens.redis.hgetall(keys.player(player_id))
        assert profile == {b"name": b"Eve", b"created_ms": b"1234"}
        digest = token_hash(token)
        assert digest == hashlib.sha256(token.encode()).hexdigest()
        assert await tokens.redis.get(keys.player_token(player_id, digest)) == token_id.encode()
        assert await tokens.redis.hgetall(keys.player_tokens(player_id)) == {
            token_id.encode(): digest.encode()
        }
        lived = await ttls(
            tokens,
            keys.player(player_id),
            keys.player_token(player_id, digest),
            keys.player_tokens(player_id),
        )
        assert all(GUEST_TTL - 5 < ttl <= GUEST_TTL for ttl in lived), lived
        await tokens.redis.aclose()

    run(scenario())


def test_another_token_lives_as_long_as_its_player_would(redis_url: str) -> None:
    """A guest's new token lives the guest's time; once the player has played, the long
    one. Either way the profile is left as it was."""

    async def scenario() -> None:
        tokens = await make(redis_url, guest_ttl=GUEST_TTL, player_ttl=PLAYER_TTL)
        player_id, _, _, first_id = await tokens.register("Fay", 7)
        token, token_id = await tokens.issue(player_id)
        assert token.startswith(f"{player_id}.") and token_id != first_id
        key = keys.player_token(player_id, token_hash(token))
        assert GUEST_TTL - 5 < (await ttls(tokens, key))[0] <= GUEST_TTL
        await tokens.redis.hset(keys.player(player_id), "played", "1")
        token, _ = await tokens.issue(player_id)
        names = (keys.player_token(player_id, token_hash(token)), keys.player_tokens(player_id))
        assert all(PLAYER_TTL - 5 < ttl <= PLAYER_TTL for ttl in await ttls(tokens, *names))
        assert await tokens.redis.hgetall(keys.player(player_id)) == {
            b"name": b"Fay",
            b"created_ms": b"7",
            b"played": b"1",
        }
        assert len(await tokens.redis.hgetall(keys.player_tokens(player_id))) == 3
        await tokens.redis.aclose()

    run(scenario())


def test_every_call_keeps_a_players_keys_alive_for_its_kind(redis_url: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url, guest_ttl=GUEST_TTL, player_ttl=PLAYER_TTL)
        player_id, _, token, _ = await tokens.register("Gus", 1)
        await tokens.redis.zadd(keys.player_games(player_id), {"g1": 1})
        await tokens.redis.zadd(keys.player_rated(player_id), {"g0": 1})
        names = (
            keys.player_token(player_id, token_hash(token)),
            keys.player(player_id),
            keys.player_tokens(player_id),
            keys.player_games(player_id),
            keys.player_rated(player_id),
        )
        await tokens.authenticate(token)
        assert all(GUEST_TTL - 5 < ttl <= GUEST_TTL for ttl in await ttls(tokens, *names))
        await tokens.redis.hset(keys.player(player_id), "played", "1")
        await tokens.authenticate(token)
        assert all(PLAYER_TTL - 5 < ttl <= PLAYER_TTL for ttl in await ttls(tokens, *names))
        await tokens.redis.aclose()

    run(scenario())


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("p123" + "a" * 21, "the token is malformed"),  # no dot
        ("p123." + "a" * 19, "the token is malformed"),  # a secret too short
        ("q123." + "a" * 20, "the token is malformed"),  # not a player id
        ("p1-3." + "a" * 20, "the token is malformed"),
        ("." + "a" * 20, "the token is malformed"),
        ("p123." + "a" * 20, "the token is unknown or has been revoked"),
        ("p123.a.b" + "a" * 18, "the token is unknown or has been revoked"),
    ],
)
def test_a_bad_token_is_told_malformed_or_unknown(redis_url: str, token: str, message: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token)
        refusal = caught.value
        assert (refusal.code, refusal.reason, refusal.message) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_INVALID",
            message,
        )
        await tokens.redis.aclose()

    run(scenario())


def test_beyond_the_rate_limit_the_caller_is_told_when_to_retry(redis_url: str) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url, rate_limit=0.01, rate_burst=1.0)
        player_id, _, token, _ = await tokens.register("Hal", 1)
        await tokens.authenticate(token)
        # The bucket lives for its refill from empty (100 s) and a second more.
        assert 100_000 < await tokens.redis.pttl(keys.player_bucket(player_id)) <= 101_000
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token)
        retry_ms = int(caught.value.metadata["retry_after_ms"])
        assert 90_000 < retry_ms <= 100_000
        assert caught.value.message == f"too many requests; retry in {retry_ms / 1000:g} s"
        assert caught.value.retry_after == retry_ms / 1000
        await tokens.redis.aclose()

    run(scenario())


def hint_of_an_empty_bucket_ahead(redis_url: str, rate_limit: float) -> str:
    """The retry hint (ms) refusing a player whose bucket is empty and whose `at` lies an
    hour ahead of the server's clock (nothing refills before the call)."""

    async def scenario() -> str:
        tokens = await make(redis_url, rate_limit=rate_limit, rate_burst=5.0)
        player_id, _, token, _ = await tokens.register("Hal", 1)
        seconds, micros = await tokens.redis.time()
        hour_ahead = seconds * 1000 + micros // 1000 + 3_600_000
        await tokens.redis.hset(
            keys.player_bucket(player_id), mapping={"tokens": 0.0, "at": hour_ahead}
        )
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token)
        await tokens.redis.aclose()
        return str(caught.value.metadata["retry_after_ms"])

    return run(scenario())


def test_a_bucket_changed_ahead_of_the_clock_refills_no_request_until_the_clock_passes_it(
    redis_url: str,
) -> None:
    # As in limit.lua (test_limits.py): a bucket whose `at` is ahead of this server's clock
    # (a failover to a primary whose clock is behind) refills nothing, not even a minimum.
    assert hint_of_an_empty_bucket_ahead(redis_url, 1000.0) == "1"  # 1 request at 1 per ms


def test_a_retry_hint_is_rounded_up_to_the_millisecond(redis_url: str) -> None:
    # At 3 requests a second the request lacking comes back in 333.3 ms: a hint of 333 ms
    # would send the caller back too early, to be refused again. The bucket's `at` lies
    # ahead of the clock, so nothing refills before the call however slow the machine.
    assert hint_of_an_empty_bucket_ahead(redis_url, 3.0) == "334"


@pytest.mark.parametrize(
    ("name", "reason", "message"),
    [
        ("  ", "MISSING_FIELD", "display_name is required"),
        ("x" * 33, "MALFORMED_REQUEST", "display_name must be 1-32 printable characters"),
        ("new\nline", "MALFORMED_REQUEST", "display_name must be 1-32 printable characters"),
    ],
)
def test_a_refused_display_name_says_why(
    redis_url: str, name: str, reason: str, message: str
) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        with pytest.raises(Refusal) as caught:
            await tokens.register(name, 1)
        refusal = caught.value
        assert (refusal.reason, refusal.message) == (reason, message)
        assert [field for field, _ in refusal.fields] == ["display_name"]
        # Thirty-two characters are enough.
        assert (await tokens.register(" " + "y" * 32 + " ", 1))[1] == "y" * 32
        await tokens.redis.aclose()

    run(scenario())


def test_revoking_an_unknown_token_names_it_and_revoking_removes_every_trace(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        tokens = await make(redis_url)
        player_id, _, token, token_id = await tokens.register("Ida", 1)
        caller = await tokens.authenticate(token)
        with pytest.raises(Refusal) as caught:
            await tokens.revoke(caller, "tnosuchtoken")
        refusal = caught.value
        assert (refusal.code, refusal.reason, refusal.message, refusal.fields) == (
            grpc.StatusCode.NOT_FOUND,
            "TOKEN_INVALID",
            "the player has no token 'tnosuchtoken'",
            (("token_id", "the player has no token 'tnosuchtoken'"),),
        )
        await tokens.revoke(caller, token_id)
        assert not await tokens.redis.exists(keys.player_token(player_id, token_hash(token)))
        assert await tokens.redis.hgetall(keys.player_tokens(player_id)) == {}
        await tokens.redis.aclose()

    run(scenario())


def test_a_token_is_issued_and_revoked_in_one_transaction(redis_url: str) -> None:
    # Issuing writes the profile (a new player), the token and its entry in the player's
    # list of tokens; revoking removes the token and its entry. Each is one MULTI/EXEC, so
    # no other call ever sees a token that is not listed, or listed but gone. MONITOR shows
    # the commands as Redis ran them.
    async def scenario() -> list[str]:
        tokens = await make(redis_url)
        watcher = redis.asyncio.Redis.from_url(redis_url)
        # The commands of the tokens' connection (set up before watching) alone.
        address = (await tokens.redis.client_info())["addr"]
        try:
            async with watcher.monitor() as monitor:
                player_id, _, _, token_id = await tokens.register("Mona", 1)
                _, other_id = await tokens.issue(player_id)
                await tokens.revoke(Identity(player_id, token_id), other_id)
                await tokens.redis.echo("done")
                seen: list[str] = []
                while not seen or seen[-1] != "ECHO":
                    info = await asyncio.wait_for(monitor.next_command(), 10)
                    if f"{info['client_address']}:{info['client_port']}" == address:
                        seen.append(info["command"].split(" ", 1)[0].upper())
                return seen
        finally:
            await watcher.aclose()
            await tokens.redis.aclose()

    assert run(scenario()) == [
        *("MULTI", "HSET", "EXPIRE", "SET", "HSET", "EXPIRE", "EXEC"),  # register
        *("HEXISTS", "MULTI", "SET", "HSET", "EXPIRE", "EXEC"),  # another token
        *("HGET", "MULTI", "DEL", "HDEL", "EXEC"),  # revoke
        "ECHO",
    ]


def test_a_players_bucket_refills_at_its_rate_to_the_request(redis_url: str) -> None:
    # As limit.lua (test_limits.py): 10,000 s idle at 1 request a second is 10,000 requests
    # (and the few ms since), not 9,990.
    async def scenario() -> None:
        tokens = await make(redis_url, rate_limit=1.0, rate_burst=100_000.0)
        player_id, _, token, _ = await tokens.register("Ida", 1)
        bucket = keys.player_bucket(player_id)
        seconds, micros = await tokens.redis.time()
        long_ago = seconds * 1000 + micros // 1000 - 10_000_000
        await tokens.redis.hset(bucket, mapping={"tokens": 0.0, "at": long_ago})
        assert (await tokens.authenticate(token, cost=10_000)).player_id == player_id
        await tokens.redis.aclose()

    run(scenario())
