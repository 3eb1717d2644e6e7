"""The service's own parts: a stream's cleanup that fails is logged with its error, a
watched update of a timed game carries the clocks as of now, and a seated player is shown
its own secret deployment while the others' stay withheld."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from matchmaker.server import Replica
from matchmaker.service import SERVICE_NAME, _after_stream
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings, players_of
from tests.matchmaker.helpers import (
    Watcher,
    captured_logs,
    expect_error,
    sealed_array,
    seconds,
    start_game,
    submit_text,
)
from wargame.v1 import matchmaker_pb2 as mm
from wargame.v1 import matchmaker_pb2_grpc

pytestmark = pytest.mark.integration


def test_a_failed_stream_cleanup_is_logged_with_its_error_not_raised() -> None:
    """What an operator reads to know why a queue ticket or a presence mark was left to
    expire: the error's text, or its type when it has none."""

    async def failing(error: Exception) -> None:
        raise error

    async def scenario() -> None:
        await _after_stream("presence update", failing(ConnectionError("redis went away")))
        await _after_stream("queue leave", failing(TimeoutError()))

    with captured_logs() as logs:
        asyncio.run(scenario())
    assert [(entry["event"], entry["log_level"], entry["error"]) for entry in logs] == [
        ("presence update failed; left to expire", "warning", "redis went away"),
        ("queue leave failed; left to expire", "warning", "TimeoutError"),
    ]


def test_a_watched_update_of_a_timed_game_carries_the_clocks_as_of_now(
    war_players: dict[str, Client],
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war", time_control=mm.TimeControl(base=seconds(300)))
    assert game.HasField("clock") and game.clock.running == "south"
    watcher = Watcher(south, game.id, after=game.version - 1)
    try:
        (update,) = watcher.until(game.version)
    finally:
        watcher.call.cancel()
    # The newest update carries the game, its clocks read at the time of sending.
    clock = update.game.clock
    assert clock.running == "south"
    before, now = game.clock.as_of.ToMilliseconds(), clock.as_of.ToMilliseconds()
    assert now >= before
    left = clock.remaining["south"].ToMilliseconds()
    assert left == game.clock.remaining["south"].ToMilliseconds() - (now - before)
    assert clock.remaining["north"].ToMilliseconds() == 300_000


def test_a_seated_player_sees_its_own_sealed_array_and_not_the_others(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    red, black = players["red"], players["black"]
    game = start_game(
        players,
        "napoleonic",
        options={"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
    )
    submit_text(red, game.id, f"seal {sealed_array('red')}")
    mine = red.GetGame(mm.GetGameRequest(game_id=game.id)).game.state.napoleonic.deployment
    (sealed,) = mine.sealed
    assert (sealed.player, sealed.withheld) == ("red", False) and sealed.ciphertext != b""
    for other in (black, clients(matchmaker.address)):
        seen = other.GetGame(mm.GetGameRequest(game_id=game.id)).game.state
        (withheld,) = seen.napoleonic.deployment.sealed
        assert (withheld.player, withheld.withheld, withheld.ciphertext) == ("red", True, b"")


@pytest.mark.parametrize("authorization", ["Basic YWRhOnNlY3JldA==", "Bearer ", "token-alone"])
def test_authorization_other_than_a_bearer_token_is_refused_saying_what_it_must_be(
    matchmaker: InProcessMatchmaker, authorization: str
) -> None:
    with grpc.insecure_channel(matchmaker.address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        refused = expect_error(
            lambda: stub.GetPlayer(
                mm.GetPlayerRequest(), metadata=(("authorization", authorization),), timeout=30
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_INVALID",
        )
    assert refused.message == "authorization must be 'Bearer <token>'"


def test_the_replicas_server_answers_health_checks_on_its_health_port(redis_url: str) -> None:
    """With `health_listen` the replica's server also answers health checks in plaintext
    on a port of its own (what a load balancer probes when the service port is TLS-only)."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url))
        serving = replica.server("127.0.0.1:0", health_listen="127.0.0.1:0")
        await serving.start()
        try:
            assert serving.health_port not in (0, serving.port)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{serving.health_port}") as channel:
                reply = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=10
                )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        finally:
            await serving.stop(0)
            await replica.close()

    asyncio.run(scenario())
