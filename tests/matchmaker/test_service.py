"""The service's own parts: a stream's cleanup that fails is logged with its error, a
watched update of a timed game carries the clocks as of now, a watch whose store stops
answering ends UNAVAILABLE with the retry hint, and a seated player is shown its own secret
deployment while the others' stay withheld."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from matchmaker import keys
from matchmaker.server import Replica
from matchmaker.service import SERVICE_NAME, _after_stream
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings, players_of
from tests.matchmaker.helpers import (
    SEALED_DAWN,
    Watcher,
    captured_logs,
    channel_listeners,
    expect_error,
    sealed_array,
    seconds,
    start_game,
    submit_text,
    wait_for,
)
from tests.servers import start_redis
from wargame.runtime.status import error_details
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
    game = start_game(players, "napoleonic", options=SEALED_DAWN)
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


BOT = mm.SEAT_KIND_BOT


# CreateGame requests refused for one field: the field, and what the refusal says.
CREATION_REFUSALS: list[tuple[mm.CreateGameRequest, str, str]] = [
    (
        mm.CreateGameRequest(game="war", side="east"),
        "side",
        "war has no side 'east'; sides: south, north",
    ),
    (
        mm.CreateGameRequest(game="war", side="south", bot_sides=["east"]),
        "bot_sides",
        "bot_sides lists 'east': list each of the other sides at most once (north)",
    ),
    (
        mm.CreateGameRequest(game="war", side="south", bot_sides=["north", "north"]),
        "bot_sides",
        "bot_sides lists 'north': list each of the other sides at most once (north)",
    ),
    (
        mm.CreateGameRequest(game="war", side="south", bot_sides=["south"]),
        "bot_sides",
        "bot_sides lists 'south': list each of the other sides at most once (north)",
    ),
    (
        mm.CreateGameRequest(game="war", side="south", bot_sides=["north"], opponent=BOT),
        "bot_sides",
        "bot_sides is for games against people (opponent HUMAN)",
    ),
    (
        mm.CreateGameRequest(game="war", opponent=BOT, bot_time=seconds(0)),
        "bot_time",
        "bot_time must be above 0 and at most 10 s",
    ),
    (
        mm.CreateGameRequest(game="war", opponent=BOT, bot_time=seconds(10.5)),
        "bot_time",
        "bot_time must be above 0 and at most 10 s",
    ),
    (
        mm.CreateGameRequest(game="war", opponent=BOT, rated=True),
        "rated",
        "games with a bot seat are never rated: leave rated unset",
    ),
    (
        mm.CreateGameRequest(game="war", opponent=BOT, bot_level=6),
        "bot_level",
        "bot_level is 1 (weakest) to 5, or 0 for the default",
    ),
    (
        mm.CreateGameRequest(game="war", bot_time=seconds(1)),
        "bot_time",
        "bot_time and bot_level are for games against the bot (opponent BOT)",
    ),
    (
        mm.CreateGameRequest(game="war", bot_level=3),
        "bot_level",
        "bot_time and bot_level are for games against the bot (opponent BOT)",
    ),
    (mm.CreateGameRequest(game="war", opponent=7), "opponent", "opponent is HUMAN or BOT"),  # type: ignore[arg-type]
    (
        mm.CreateGameRequest(game="war", visibility=9),  # type: ignore[arg-type]
        "visibility",
        "visibility is PUBLIC or PRIVATE",
    ),
]


def test_a_refused_game_creation_names_the_field_and_what_it_may_hold(ada: Client) -> None:
    for request, field, message in CREATION_REFUSALS:
        refused = expect_error(
            lambda request=request: ada.CreateGame(request),  # type: ignore[misc]
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED_REQUEST",
        )
        assert (refused.fields, refused.message) == (((field, message),), message), request


def test_bot_settings_at_their_limits_are_accepted(ada: Client) -> None:
    """The longest bot time (10 s here) and the strongest level (5) are allowed. Ada takes
    South, which moves first: the bot has nothing to search (a 10 s search would outlive the
    test, in the test process's engine)."""
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", opponent=BOT, bot_time=seconds(10), bot_level=5
        )
    ).game
    assert game.status == mm.GAME_STATUS_RUNNING
    assert (game.your_side, list(game.state.to_act)) == ("south", ["south"])
    assert [seat.bot_level for seat in game.seats if seat.kind == BOT] == [5]


def _token(offset: str) -> str:
    return base64.urlsafe_b64encode(offset.encode()).decode()


def test_browsing_and_leaderboard_refusals_say_the_limits(ada: Client) -> None:
    """Browse lists hold OPEN and RUNNING games only; pages and leaderboards are at most
    100 long; a page token is one the server handed out (an offset within the lists)."""
    ada.CreateGame(mm.CreateGameRequest(game="war"))
    listed = "only OPEN and RUNNING games are listed"
    malformed = "the page token is malformed"
    refusals = [
        (mm.BrowseGamesRequest(status=mm.GAME_STATUS_FINISHED), "status", listed),
        (mm.BrowseGamesRequest(page_size=101), "page_size", "page_size is at most 100"),
    ]
    # Too long, not base64 (bad length; not UTF-8 inside), not an offset, beyond the lists.
    for token in ("MTA" * 11, "a", "_w==", "!!", _token("abc"), _token("10001")):
        refusals.append((mm.BrowseGamesRequest(page_token=token), "page_token", malformed))
    for request, field, message in refusals:
        refused = expect_error(
            lambda request=request: ada.BrowseGames(request),  # type: ignore[misc]
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED_REQUEST",
        )
        assert (refused.fields, refused.message) == (((field, message),), message), request
    # At the limits: accepted. A 32-character token (offset 1) is as long as one may be.
    assert len(ada.BrowseGames(mm.BrowseGamesRequest(page_size=100)).games) == 1
    assert len(_token("0" * 23 + "1")) == 32
    assert not ada.BrowseGames(mm.BrowseGamesRequest(page_token=_token("0" * 23 + "1"))).games
    assert not ada.BrowseGames(mm.BrowseGamesRequest(page_token=_token("10000"))).games
    missing = expect_error(
        lambda: ada.GetLeaderboard(mm.GetLeaderboardRequest()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    assert (missing.fields, missing.message) == (
        (("game", "game is required"),),
        "game is required",
    )
    too_long = expect_error(
        lambda: ada.GetLeaderboard(mm.GetLeaderboardRequest(game="war", limit=101)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    assert too_long.fields == (("limit", "limit is at most 100"),)
    assert too_long.message == "limit is at most 100"
    ada.GetLeaderboard(mm.GetLeaderboardRequest(game="war", limit=100))


def test_refusals_of_game_calls_say_what_is_wrong(
    ada: Client, matchmaker: InProcessMatchmaker
) -> None:
    """Unknown players, an unplayed game's record, a join naming no game and a call without
    a token: each refusal says why."""
    game = ada.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    nobody = expect_error(
        lambda: ada.GetPlayer(mm.GetPlayerRequest(player_id="nobody")),
        grpc.StatusCode.NOT_FOUND,
        "PLAYER_NOT_FOUND",
    )
    assert (nobody.fields, nobody.message) == (
        (("player_id", "no player 'nobody'"),),
        "no player 'nobody'",
    )
    unplayed = expect_error(
        lambda: ada.GetRecord(mm.GetRecordRequest(game_id=game.id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )
    assert unplayed.message == f"game {game.id} was never played"
    nowhere = expect_error(
        lambda: ada.JoinGame(mm.JoinGameRequest()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    assert nowhere.fields == (("game_id", "game_id is required"),)
    anonymous = Client(matchmaker.address)
    try:
        unknown = expect_error(
            lambda: anonymous.CreateGame(mm.CreateGameRequest(game="war")),
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_MISSING",
        )
    finally:
        anonymous.close()
    assert unknown.message == "this call needs a player token: authorization: Bearer <token>"


def test_a_watch_whose_store_stops_answering_ends_unavailable_with_the_retry_hint(
    tmp_path: Path, engine_address: str, clients: Callable[..., Client]
) -> None:
    """A Redis of its own that pauses every client (CLIENT PAUSE ALL) right after an update
    is announced: the stream's read of it times out, and the stream ends as any call that
    cannot reach the store does (UNAVAILABLE, STORE_UNAVAILABLE, the retry hint). The
    commands' timeout is the default, 2 s (with 0.2 s, a busy machine timed out the set-up's
    own calls), and the pause outlasts it by 8 s, however late the read comes (the pause
    holds the test's end too: Redis keeps even CLIENT UNPAUSE waiting)."""
    own = start_redis(tmp_path / "redis")
    server = InProcessMatchmaker(fast_settings(own.url, engine_address, redis_timeout=2.0))
    server.start()
    admin: Any = redis.Redis(port=own.port)  # execute_command is untyped
    try:
        players = players_of(server.address, clients, "south", "north")
        game = start_game(players, "war")
        watcher = Watcher(players["south"], game.id, after=game.version - 1)
        watcher.until(game.version)
        channel = keys.game_channel(game.id)
        wait_for(lambda: channel_listeners(own.url, channel) == 1)
        pipe = admin.pipeline(transaction=True)
        pipe.execute_command("SPUBLISH", channel, "wake")
        pipe.execute_command("CLIENT", "PAUSE", 10_000, "ALL")
        pipe.execute()
        assert watcher.ended.wait(60), "the stream did not end"
        assert watcher.error is not None
        details = error_details(watcher.error)
        assert (details.code, details.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        assert details.message == "the session store cannot be reached; retry in 0.5 s"
        assert details.metadata["retry_after_ms"] == "500"
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
        admin.close()
        server.stop()
        own.stop()
