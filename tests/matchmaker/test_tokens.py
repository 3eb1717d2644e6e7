"""Tokens on a real Redis: stored as hashes only, checked, revoked, rate limited."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from matchmaker import keys
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.tokens import Tokens, token_hash
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
        tokens = await make(redis_url, rate_limit=20.0, rate_burst=5.0)
        _, _, token, _ = await tokens.register("Cy", 1)
        for _ in range(5):
            await tokens.authenticate(token)
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token)
        assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert caught.value.reason == "RATE_LIMITED"
        assert 0 < int(caught.value.metadata["retry_after_ms"]) <= 50
        await asyncio.sleep(0.12)  # 20/s: two requests' worth
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
        tokens = await make(redis_url, rate_limit=1.0, rate_burst=5.0)
        player_id, _, token, _ = await tokens.register("Di", 1)
        assert (await tokens.authenticate(token, cost=3)).player_id == player_id
        with pytest.raises(Refusal) as caught:
            await tokens.authenticate(token, cost=3)
        assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert caught.value.reason == "RATE_LIMITED"
        # About 2 left of the 3 asked: 1 s at 1 request a second (less the refill since).
        assert 900 < int(caught.value.metadata["retry_after_ms"]) <= 1000
        await tokens.redis.aclose()

    run(scenario())
