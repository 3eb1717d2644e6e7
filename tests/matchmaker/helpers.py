"""Helpers for the matchmaker suites: expecting errors, playing legal moves."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import grpc
import pytest
import redis
from google.protobuf import duration_pb2

from matchmaker.redis_client import Client, connect
from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm


def seconds(value: float) -> duration_pb2.Duration:
    """A protobuf Duration of `value` seconds."""
    out = duration_pb2.Duration()
    out.FromMilliseconds(round(value * 1000))
    return out


def expect_error(call: Callable[[], Any], code: grpc.StatusCode, reason: str = "") -> ErrorDetails:
    """Run `call`, which must fail with `code` (and ErrorInfo `reason`, if given)."""
    with pytest.raises(grpc.RpcError) as caught:
        call()
    details = error_details(caught.value)
    assert details.code == code, (details.code, details.message)
    if reason:
        assert details.reason == reason, (details.reason, details.message)
    return details


def legal_actions(engine: Any, state: game_pb2.GameState) -> list[engine_pb2.LegalAction]:
    """The engine's legal actions in a state."""
    return list(
        engine.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state), timeout=30).actions
    )


def play_moves(
    engine: Any,
    players: Mapping[str, Any],
    game_id: str,
    count: int,
    rng: random.Random,
    *,
    stop_when: Callable[[engine_pb2.LegalAction], bool] | None = None,
) -> mm.GameView:
    """Play up to `count` random legal actions, each by the side to act through its own
    client; stops early when the game ends (or `stop_when` refuses an action)."""
    any_client = next(iter(players.values()))
    game: mm.GameView = any_client.GetGame(mm.GetGameRequest(game_id=game_id)).game
    for _ in range(count):
        if game.status != mm.GAME_STATUS_RUNNING:
            break
        side = game.state.to_act[0]
        player = players[side]
        game = player.GetGame(mm.GetGameRequest(game_id=game_id)).game
        actions = legal_actions(engine, game.state)
        if not actions:
            break
        choice = rng.choice(actions)
        if stop_when is not None and stop_when(choice):
            break
        reply = player.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game_id,
                expected_version=game.version,
                idempotency_key=uuid.uuid4().hex,
                actions=[choice.action],
            )
        )
        assert list(reply.notations) == [choice.notation]
        game = reply.game
    return game


def start_game(clients: Mapping[str, Any], ruleset: str, **request: Any) -> mm.GameView:
    """Create a game by the first side's client and join it by the second's."""
    (first_side, first), (second_side, second) = list(clients.items())
    created = first.CreateGame(mm.CreateGameRequest(game=ruleset, side=first_side, **request)).game
    joined: mm.GameView = second.JoinGame(
        mm.JoinGameRequest(game_id=created.id, side=second_side)
    ).game
    assert joined.status == mm.GAME_STATUS_RUNNING
    return joined


def sync_client(url: str) -> Any:
    """A synchronous client of the Redis or Redis Cluster at `url` (for checks)."""
    probe = redis.Redis.from_url(url)
    try:
        clustered = bool(probe.info("cluster").get("cluster_enabled"))
    finally:
        probe.close()
    return redis.RedisCluster.from_url(url) if clustered else redis.Redis.from_url(url)


async def store_client(url: str) -> Client:
    """The matchmaker's own client of the Redis or Redis Cluster at `url`."""
    return await connect(url, socket_timeout=5.0, connections=64)


# Keys that live without a TTL: single, bounded indexes (trimmed, or cleaned as games end).
UNEXPIRING = ("wg:{due:", "wg:{queues:", "wg:{shards}", "wg:browse:", "wg:leaderboard:")


def assert_everything_expires(redis_url: str) -> None:
    """Every key of the matchmaker but its bounded indexes has a TTL: nothing piles up."""
    client = sync_client(redis_url)
    try:
        for key in client.scan_iter(count=1000):
            name = key.decode()
            if not name.startswith(UNEXPIRING):
                assert client.ttl(key) > 0, f"{name} never expires"
    finally:
        client.close()
