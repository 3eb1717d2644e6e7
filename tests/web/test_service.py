"""The web service over HTTP, against a real matchmaker, engine and Redis: Connect calls
forwarded with the caller's token, the same errors and reasons, WatchGame resumed by version,
its own limits, and the page's files."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Generator
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message

from tests.web.conftest import Stack, start_web
from tests.web.connect_client import ENGINE, MATCHMAKER, CallError, ConnectClient
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2, matchmaker_pb2_grpc
from web.server import STATIC

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("web")]


def refusal(client: ConnectClient, procedure: str, request: Message, answer: Message) -> CallError:
    """The error the web service answers a unary call with (the test fails if it answers)."""
    with pytest.raises(CallError) as refused:
        client.unary(procedure, request, answer)
    return refused.value


def new_war_game(stack: Stack) -> tuple[ConnectClient, ConnectClient, matchmaker_pb2.GameView]:
    """South creates a game of War, North joins it by its invite code: both clients, the game."""
    south, north = stack.player("South"), stack.player("North")
    created = south.unary(
        MATCHMAKER + "CreateGame",
        matchmaker_pb2.CreateGameRequest(game="war", side="south"),
        matchmaker_pb2.CreateGameResponse(),
    )
    joined = north.unary(
        MATCHMAKER + "JoinGame",
        matchmaker_pb2.JoinGameRequest(invite_code=created.invite_code),
        matchmaker_pb2.JoinGameResponse(),
    )
    return south, north, joined.game


def play_one(client: ConnectClient, game: matchmaker_pb2.GameView) -> matchmaker_pb2.GameView:
    """The side to act plays its first legal action (asked of the engine through the web)."""
    legal = client.unary(
        ENGINE + "ListLegalActions",
        engine_pb2.ListLegalActionsRequest(state=game.state),
        engine_pb2.ListLegalActionsResponse(),
    )
    action = legal.actions[0].action
    reply = client.unary(
        MATCHMAKER + "SubmitActions",
        matchmaker_pb2.SubmitActionsRequest(
            game_id=game.id, expected_version=game.version, actions=[action]
        ),
        matchmaker_pb2.SubmitActionsResponse(),
    )
    assert reply.notations == [legal.actions[0].notation]
    return reply.game


@pytest.mark.parametrize("binary", [False, True], ids=["json", "proto"])
def test_a_unary_call_reaches_the_matchmaker_with_the_callers_token(stack: Stack, binary: bool):
    ada = stack.player("Ada")
    ada.binary = binary
    me = ada.unary(
        MATCHMAKER + "GetPlayer",
        matchmaker_pb2.GetPlayerRequest(),
        matchmaker_pb2.GetPlayerResponse(),
    )
    assert me.player.display_name == "Ada"
    # The same player as the matchmaker itself knows by the token.
    with grpc.insecure_channel(stack.matchmaker.address) as channel:
        direct = matchmaker_pb2_grpc.MatchmakerStub(channel).GetPlayer(
            matchmaker_pb2.GetPlayerRequest(),
            metadata=(("authorization", f"Bearer {ada.token}"),),
            timeout=30,
        )
    assert direct.player.id == me.player.id


def test_the_engines_read_only_calls_are_served(stack: Stack):
    described = stack.client().unary(
        ENGINE + "DescribeGame",
        engine_pb2.DescribeGameRequest(game="battle"),
        engine_pb2.DescribeGameResponse(),
    )
    assert described.initial_state.game == "battle"
    parsed = stack.client().unary(
        ENGINE + "ParseAction",
        engine_pb2.ParseActionRequest(state=described.initial_state, text="resign"),
        engine_pb2.ParseActionResponse(),
    )
    assert parsed.action.HasField("resign")


def test_engine_calls_that_change_or_search_are_not_served(stack: Stack):
    refused = refusal(
        stack.client(),
        ENGINE + "SuggestAction",
        engine_pb2.SuggestActionRequest(),
        engine_pb2.SuggestActionResponse(),
    )
    assert (refused.status, refused.code) == (501, "unimplemented")


def test_an_error_keeps_its_code_and_reason(stack: Stack):
    request = matchmaker_pb2.GetGameRequest(game_id="no-such-game")
    with (
        grpc.insecure_channel(stack.matchmaker.address) as channel,
        pytest.raises(grpc.RpcError) as direct,
    ):
        matchmaker_pb2_grpc.MatchmakerStub(channel).GetGame(request, timeout=30)
    expected = error_details(direct.value)
    refused = refusal(
        stack.client(), MATCHMAKER + "GetGame", request, matchmaker_pb2.GetGameResponse()
    )
    assert refused.code == expected.code.name.lower()
    assert refused.reason == expected.reason != ""
    assert refused.message == expected.message
    assert refused.status == 404


def test_a_refused_move_says_why_as_the_matchmaker_does(stack: Stack):
    south, north, game = new_war_game(stack)
    side = game.state.to_act[0]
    player = {"south": south, "north": north}[side]
    request = matchmaker_pb2.SubmitActionsRequest(
        game_id=game.id,
        expected_version=game.version,
        actions=[game_pb2.Action(side=side, notation="a1-j10")],
    )
    with (
        grpc.insecure_channel(stack.matchmaker.address) as channel,
        pytest.raises(grpc.RpcError) as direct,
    ):
        matchmaker_pb2_grpc.MatchmakerStub(channel).SubmitActions(
            request, metadata=(("authorization", f"Bearer {player.token}"),), timeout=30
        )
    expected = error_details(direct.value)
    refused = refusal(
        player, MATCHMAKER + "SubmitActions", request, matchmaker_pb2.SubmitActionsResponse()
    )
    assert refused.code == expected.code.name.lower()
    assert refused.reason == expected.reason != ""
    assert refused.message == expected.message


def test_a_call_without_a_token_is_refused_with_its_reason(stack: Stack):
    refused = refusal(
        stack.client(),
        MATCHMAKER + "GetPlayer",
        matchmaker_pb2.GetPlayerRequest(),
        matchmaker_pb2.GetPlayerResponse(),
    )
    assert (refused.status, refused.reason) == (401, "TOKEN_MISSING")


def test_a_request_that_is_no_message_is_refused_as_malformed(stack: Stack):
    host, _, port = stack.web.address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request(
        "POST",
        MATCHMAKER + "GetGame",
        b'{"gameId": 7, "',
        {"Content-Type": "application/json"},
    )
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    assert answer.status == 400
    assert b"MALFORMED_REQUEST" in body


def test_a_request_beyond_the_limit_is_refused_unread(stack: Stack):
    name = "x" * (64 * 1024 + 1)
    refused = refusal(
        stack.client(),
        MATCHMAKER + "RegisterPlayer",
        matchmaker_pb2.RegisterPlayerRequest(display_name=name),
        matchmaker_pb2.RegisterPlayerResponse(),
    )
    assert (refused.code, refused.reason) == ("resource_exhausted", "REQUEST_TOO_LARGE")


def test_a_replica_holding_its_most_streams_refuses_one_more_until_one_ends(
    stack: Stack, tmp_path: Path
):
    web = start_web(tmp_path, stack.matchmaker.address, stack.engine.address, "--max-streams", "1")
    try:
        _, _, game = new_war_game(stack)
        request = matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=game.version - 1)

        def watch() -> Generator[matchmaker_pb2.WatchGameResponse, None, None]:
            return ConnectClient(web.address).stream(
                MATCHMAKER + "WatchGame", request, matchmaker_pb2.WatchGameResponse
            )

        held = watch()
        assert next(held).version == game.version
        with pytest.raises(CallError) as refused:
            next(watch())
        assert (refused.value.code, refused.value.reason) == (
            "resource_exhausted",
            "TOO_MANY_WATCHERS",
        )
        assert "google.rpc.RetryInfo" in [detail["type"] for detail in refused.value.details]
        held.close()  # the page goes away: its place is free again
        deadline = time.monotonic() + 60
        while True:
            try:
                assert next(watch()).version == game.version
                break
            except CallError as error:
                assert error.reason == "TOO_MANY_WATCHERS" and time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        web.stop()


def test_watch_game_streams_and_resumes_by_version(stack: Stack):
    south, north, game = new_war_game(stack)
    players = {"south": south, "north": north}
    spectator = stack.client()
    updates = spectator.stream(
        MATCHMAKER + "WatchGame",
        matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=game.version),
        matchmaker_pb2.WatchGameResponse,
    )
    game = play_one(players[game.state.to_act[0]], game)
    # A presence notice (a seat's player not watching) may come first on a busy machine.
    first = next(update for update in updates if not update.HasField("notice"))
    assert first.version == game.version
    assert first.notations and first.game.version == game.version
    updates.close()  # the page goes away

    seen = game.version
    game = play_one(players[game.state.to_act[0]], game)
    game = play_one(players[game.state.to_act[0]], game)
    resumed = spectator.stream(
        MATCHMAKER + "WatchGame",
        matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=seen),
        matchmaker_pb2.WatchGameResponse,
    )
    versions = []
    for update in resumed:
        if update.HasField("notice"):
            continue
        versions.append(update.version)
        if update.version == game.version:
            break
    resumed.close()
    assert versions[0] == seen + 1
    assert versions[-1] == game.version
    assert versions == sorted(versions)


def test_a_watch_of_a_future_version_gets_the_matchmakers_resync(stack: Stack):
    # A page ahead of the store (it saw changes a Redis failover lost) is given the game as
    # it stands, as the matchmaker answers it: the page shows it and follows on.
    _, _, game = new_war_game(stack)
    updates = stack.client(binary=True).stream(
        MATCHMAKER + "WatchGame",
        matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=game.version + 100),
        matchmaker_pb2.WatchGameResponse,
    )
    first = next(updates)
    assert first.resync and first.version == first.game.version == game.version


def test_a_stopping_web_service_ends_its_streams_so_pages_resume_elsewhere(stack: Stack):
    _, _, game = new_war_game(stack)
    updates = stack.client().stream(
        MATCHMAKER + "WatchGame",
        matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=game.version - 1),
        matchmaker_pb2.WatchGameResponse,
        timeout=120,
    )
    assert next(updates).version == game.version  # the web service holds the stream now
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            for _ in updates:
                pass
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    stack.restart_web()
    reader.join(120)
    assert not reader.is_alive()
    error = outcome[0] if outcome else None
    assert isinstance(error, CallError), outcome
    assert error.code == "unavailable"
    # The restarted service serves the same game from where the page was.
    again = stack.client().stream(
        MATCHMAKER + "WatchGame",
        matchmaker_pb2.WatchGameRequest(game_id=game.id, after_version=game.version - 1),
        matchmaker_pb2.WatchGameResponse,
    )
    assert next(again).version == game.version
    again.close()


def get(stack: Stack, path: str) -> tuple[http.client.HTTPResponse, bytes]:
    """The web service's answer to GET `path`, and its body."""
    host, _, port = stack.web.address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer, answer.read()
    finally:
        connection.close()


@pytest.mark.parametrize("path", ["/", f"/g/{'a' * 12}"])
def test_the_page_is_served_for_the_lobby_and_a_game(stack: Stack, path: str):
    answer, body = get(stack, path)
    assert answer.status == 200
    assert b'<script type="module" src="/static/app.js">' in body
    # Only the page's own scripts run, and it talks only to this service.
    assert "default-src 'self'" in str(answer.getheader("content-security-policy"))


@pytest.mark.parametrize("path", ["/static/../main.py", "/main.py", "/static/nothing.js"])
def test_nothing_but_the_pages_files_is_served(stack: Stack, path: str):
    assert get(stack, path)[0].status == 404


def test_the_pages_packages_are_one_served_file_its_import_map_names(stack: Stack):
    """A page loads its packages (Connect, protobuf) as one bundle, not their 160 modules
    (web/page/vendor.mjs): every package the page's own modules import is in its import map,
    mapped to the bundle, which is served."""
    _, page = get(stack, "/")
    found = re.search(rb'<script type="importmap">(.*?)</script>', page, re.DOTALL)
    assert found is not None
    mapped = json.loads(found.group(1))["imports"]
    imported = {
        name
        for script in STATIC.rglob("*.js")
        if "vendor" not in script.relative_to(STATIC).parts
        for name in re.findall(r'from "(@[^"]+)"', script.read_text(encoding="utf-8"))
    }
    assert imported and set(mapped) == imported
    assert set(mapped.values()) == {"/static/vendor/bundle.js"}
    answer, bundle = get(stack, "/static/vendor/bundle.js")
    assert answer.status == 200 and answer.getheader("content-type", "").startswith(
        "text/javascript"
    )
    assert b"createConnectTransport" in bundle
