"""Games through the real gRPC service with a real engine and a real Redis: creating,
joining, browsing, playing, the refusals of each, versions and idempotency keys."""

from __future__ import annotations

import functools
import random
import threading
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores
from tests.matchmaker.helpers import (
    assert_everything_expires,
    expect_error,
    legal_actions,
    play_moves,
    seconds,
    start_game,
    submission,
)
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


@both_stores
def test_create_join_get(war_players: dict[str, Client], matchmaker: InProcessMatchmaker) -> None:
    south, north = war_players["south"], war_players["north"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", side="south"))
    game = created.game
    assert game.status == mm.GAME_STATUS_OPEN and game.version == 1 and game.your_side == "south"
    assert created.invite_code and game.invite_code == created.invite_code
    assert [(s.side, s.player.id) for s in game.seats] == [
        ("south", south.player_id),
        ("north", ""),
    ]
    assert game.state.game == "war" and list(game.state.to_act) == ["south"]
    joined = north.JoinGame(mm.JoinGameRequest(game_id=game.id)).game
    assert (
        joined.status == mm.GAME_STATUS_RUNNING
        and joined.version == 2
        and joined.your_side == "north"
    )
    again = north.JoinGame(mm.JoinGameRequest(game_id=game.id)).game  # a retried join is harmless
    assert again.version == 2
    spectator = Client(matchmaker.address)
    seen = spectator.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert seen.your_side == "" and seen.invite_code == "" and seen.version == 2
    spectator.close()


def test_create_and_join_refusals(
    war_players: dict[str, Client], clients: Callable[..., Client], matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest()), Code.INVALID_ARGUMENT, "MISSING_FIELD"
    )
    unknown_game = expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest(game="chess")), Code.NOT_FOUND, "UNKNOWN_GAME"
    )
    assert [name for name, _ in unknown_game.fields] == ["game"], unknown_game.fields
    expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest(game="war", side="east")),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    bad = expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest(game="war", options={"nonsense": "1"})),
        Code.INVALID_ARGUMENT,
        "UNKNOWN_OPTION",
    )
    assert "nonsense" in bad.message  # the engine's message is passed on
    expect_error(
        lambda: south.CreateGame(
            mm.CreateGameRequest(game="war", time_control=mm.TimeControl(base=seconds(-5)))
        ),
        Code.INVALID_ARGUMENT,
    )
    anonymous = clients(matchmaker.address)
    expect_error(
        lambda: anonymous.CreateGame(mm.CreateGameRequest(game="war")),
        Code.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    for join, code, reason in [
        (mm.JoinGameRequest(game_id="gnope"), Code.NOT_FOUND, "SESSION_NOT_FOUND"),
        (
            mm.JoinGameRequest(invite_code="NOPE-0000-0000-0000"),
            Code.NOT_FOUND,
            "SESSION_NOT_FOUND",
        ),
        (mm.JoinGameRequest(invite_code="NOPE1234"), Code.INVALID_ARGUMENT, "MALFORMED_REQUEST"),
        (mm.JoinGameRequest(), Code.INVALID_ARGUMENT, "MISSING_FIELD"),
    ]:
        expect_error(functools.partial(north.JoinGame, join), code, reason)
    # An unknown code is told as the request's fault: the field the client should fix.
    unknown = expect_error(
        lambda: north.JoinGame(mm.JoinGameRequest(invite_code="NOPE-0000-0000-0000")),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )
    assert [name for name, _ in unknown.fields] == ["invite_code"], unknown.fields
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    expect_error(
        lambda: north.JoinGame(mm.JoinGameRequest(game_id=game.id, side="south")),
        Code.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    north.JoinGame(mm.JoinGameRequest(game_id=game.id))
    third = clients(matchmaker.address, "Third")
    expect_error(
        lambda: third.JoinGame(mm.JoinGameRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )


def test_private_games_join_by_invite_only_and_are_not_listed(
    war_players: dict[str, Client],
) -> None:
    south, north = war_players["south"], war_players["north"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE))
    listed = north.BrowseGames(mm.BrowseGamesRequest()).games
    assert created.game.id not in [g.id for g in listed]
    expect_error(
        lambda: north.JoinGame(mm.JoinGameRequest(game_id=created.game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )
    joined = north.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code)).game
    assert joined.status == mm.GAME_STATUS_RUNNING
    assert (
        north.GetGame(mm.GetGameRequest(game_id=created.game.id)).game.visibility
        == mm.VISIBILITY_PRIVATE
    )


@both_stores
def test_browse_open_and_running_newest_first_with_pages(war_players: dict[str, Client]) -> None:
    south, north = war_players["south"], war_players["north"]
    ids = [south.CreateGame(mm.CreateGameRequest(game="war")).game.id for _ in range(5)]
    north.JoinGame(mm.JoinGameRequest(game_id=ids[0]))
    open_games = north.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_OPEN)).games
    assert [g.id for g in open_games] == ids[:0:-1]
    assert all(not g.HasField("state") for g in open_games)
    running = north.BrowseGames(
        mm.BrowseGamesRequest(status=mm.GAME_STATUS_RUNNING, game="war")
    ).games
    assert [g.id for g in running] == [ids[0]]
    seen: list[str] = []
    token = ""
    while True:
        page = north.BrowseGames(mm.BrowseGamesRequest(page_size=2, page_token=token))
        seen += [g.id for g in page.games]
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == sorted(ids)
    assert not north.BrowseGames(mm.BrowseGamesRequest(game="battle")).games
    expect_error(
        lambda: north.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_FINISHED)),
        Code.INVALID_ARGUMENT,
    )
    expect_error(
        lambda: north.BrowseGames(mm.BrowseGamesRequest(page_token="!!")), Code.INVALID_ARGUMENT
    )


def test_submit_refusals_name_the_right_status(
    war_players: dict[str, Client],
    engine_stub: Any,
    clients: Callable[..., Client],
    matchmaker: InProcessMatchmaker,
) -> None:
    south, north = war_players["south"], war_players["north"]
    open_game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    first = legal_actions(engine_stub, open_game.state)[0].action

    def submit(client: Client, game_id: str, version: int, *actions: game_pb2.Action) -> Any:
        return client.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game_id,
                expected_version=version,
                idempotency_key=uuid.uuid4().hex,
                actions=list(actions),
            )
        )

    expect_error(
        lambda: submit(south, open_game.id, 1, first), Code.FAILED_PRECONDITION, "GAME_NOT_STARTED"
    )
    game = north.JoinGame(mm.JoinGameRequest(game_id=open_game.id)).game
    expect_error(lambda: submit(south, "gmadeup", 2, first), Code.NOT_FOUND, "SESSION_NOT_FOUND")
    expect_error(lambda: submit(south, game.id, 2), Code.INVALID_ARGUMENT, "MISSING_FIELD")
    spectator = clients(matchmaker.address, "Spectator")
    expect_error(
        lambda: submit(spectator, game.id, 2, first), Code.PERMISSION_DENIED, "NOT_A_PLAYER"
    )
    # North may not send South's move, nor move out of turn.
    expect_error(lambda: submit(north, game.id, 2, first), Code.PERMISSION_DENIED, "NOT_A_PLAYER")
    as_north = game_pb2.Action(side="north", notation="a8-a7")
    expect_error(
        lambda: submit(north, game.id, 2, as_north), Code.FAILED_PRECONDITION, "NOT_YOUR_TURN"
    )
    anonymous = clients(matchmaker.address)
    expect_error(
        lambda: submit(anonymous, game.id, 2, first), Code.UNAUTHENTICATED, "TOKEN_MISSING"
    )
    # An illegal action against the stored game: the engine's reason and message.
    illegal = expect_error(
        lambda: submit(south, game.id, 2, game_pb2.Action(notation="a1-a9")),
        Code.FAILED_PRECONDITION,
    )
    assert illegal.reason and illegal.reason not in ("INTERNAL_ERROR",)
    gibberish = expect_error(
        lambda: submit(south, game.id, 2, game_pb2.Action(notation="hello world")),
        Code.INVALID_ARGUMENT,
        "NOTATION_INVALID",
    )
    assert gibberish.message
    stale = expect_error(lambda: submit(south, game.id, 1, first), Code.ABORTED, "VERSION_CONFLICT")
    assert stale.metadata["current_version"] == "2"
    expect_error(
        lambda: submit(
            south,
            game.id,
            2,
            game_pb2.Action(resign=game_pb2.Resign(reason=game_pb2.OUTCOME_REASON_TIME)),
        ),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    # Nothing of that changed the game.
    assert south.GetGame(mm.GetGameRequest(game_id=game.id)).game.version == 2
    played = submit(south, game.id, 2, first)
    assert played.game.version == 3 and list(played.game.state.to_act) == ["north"]
    south.Resign(mm.ResignRequest(game_id=game.id))
    expect_error(lambda: submit(north, game.id, 4, as_north), Code.FAILED_PRECONDITION, "GAME_OVER")
    expect_error(
        lambda: north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_OVER",
    )


@both_stores
def test_a_retried_submission_is_applied_once(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war")
    action = legal_actions(engine_stub, game.state)[0]
    request = submission(game, action.action, key="my-key-1")
    first = south.SubmitActions(request)
    again = south.SubmitActions(request)
    assert not first.replayed and again.replayed
    assert first.game.version == again.game.version == game.version + 1
    assert list(again.notations) == list(first.notations) == [action.notation]
    assert [e.text for e in again.events] == [e.text for e in first.events]
    stored = north.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert stored.version == game.version + 1 and list(stored.moves) == [action.notation]
    other = legal_actions(engine_stub, game.state)[1].action
    reused = mm.SubmitActionsRequest(
        game_id=game.id, expected_version=game.version, idempotency_key="my-key-1", actions=[other]
    )
    expect_error(
        lambda: south.SubmitActions(reused), Code.INVALID_ARGUMENT, "IDEMPOTENCY_KEY_REUSED"
    )
    # The key belongs to the player: the other player's same key is another submission.
    reply = north.SubmitActions(
        submission(stored, legal_actions(engine_stub, stored.state)[0].action, key="my-key-1")
    )
    assert not reply.replayed and reply.game.version == stored.version + 1


@both_stores
def test_simultaneous_submissions_commit_exactly_one(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    before = game.state
    actions = legal_actions(engine_stub, before)[:8]
    assert len(actions) >= 4
    devices = [Client(matchmaker.address, token=south.token) for _ in actions]
    barrier = threading.Barrier(len(actions))
    results: list[tuple[int, Any]] = []
    lock = threading.Lock()

    def send(index: int) -> None:
        barrier.wait()
        try:
            reply = devices[index].SubmitActions(submission(game, actions[index].action))
            outcome: Any = reply
        except grpc.RpcError as error:
            outcome = error_details(error)
        with lock:
            results.append((index, outcome))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    committed = [(i, r) for i, r in results if isinstance(r, mm.SubmitActionsResponse)]
    refused = [r for _, r in results if not isinstance(r, mm.SubmitActionsResponse)]
    assert len(committed) == 1
    assert all(r.code == Code.ABORTED and r.reason == "VERSION_CONFLICT" for r in refused)
    winner, _ = committed[0]
    expected = engine_stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=before, actions=[actions[winner].action])
    )
    stored = south.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert stored.version == game.version + 1
    assert stored.state == expected.state
    assert list(stored.moves) == [actions[winner].notation]
    for device in devices:
        device.close()


def test_resign_and_draws(war_players: dict[str, Client], engine_stub: Any) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war")
    expect_error(
        lambda: north.AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)),
        Code.FAILED_PRECONDITION,
        "DRAW_NOT_OFFERED",
    )
    offered = south.OfferDraw(mm.OfferDrawRequest(game_id=game.id)).game
    assert offered.state.draw_offer == "south"
    declined = north.AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=False)).game
    assert declined.state.draw_offer == "" and declined.status == mm.GAME_STATUS_RUNNING
    game = play_moves(engine_stub, war_players, game.id, 2, random.Random(3))
    north.OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    drawn = south.AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)).game
    assert drawn.status == mm.GAME_STATUS_FINISHED
    assert drawn.outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT and drawn.outcome.winner == ""
    assert list(drawn.moves)[-3:][-1] == "accept draw"

    other = start_game(war_players, "war")
    resigned = north.Resign(mm.ResignRequest(game_id=other.id)).game
    assert (
        resigned.outcome.reason == game_pb2.OUTCOME_REASON_RESIGNATION
        and resigned.outcome.winner == "south"
    )
    expect_error(
        lambda: south.Resign(mm.ResignRequest(game_id=other.id)),
        Code.FAILED_PRECONDITION,
        "GAME_OVER",
    )
    expect_error(
        lambda: south.Resign(mm.ResignRequest(game_id="gnothing")),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )


def test_records_replay_to_the_stored_state(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    expect_error(
        lambda: south.GetRecord(mm.GetRecordRequest(game_id="gnone")),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )
    game = play_moves(engine_stub, war_players, game.id, 6, random.Random(5))
    running = south.GetRecord(
        mm.GetRecordRequest(game_id=game.id)
    ).record  # a running game's record
    replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=running))
    assert replayed.final_state == south.GetGame(mm.GetGameRequest(game_id=game.id)).game.state
    assert "South" in running and "North" in running
    open_game = south.CreateGame(mm.CreateGameRequest(game="war")).game
    expect_error(
        lambda: south.GetRecord(mm.GetRecordRequest(game_id=open_game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )


@both_stores
def test_rated_games_update_ratings_once_and_the_leaderboard(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war", rated=True)
    play_moves(engine_stub, war_players, game.id, 2, random.Random(9))
    north.Resign(mm.ResignRequest(game_id=game.id))
    winner = south.GetPlayer(mm.GetPlayerRequest()).player
    loser = north.GetPlayer(mm.GetPlayerRequest()).player
    assert [(r.game, r.games) for r in winner.ratings] == [("war", 1)]
    assert winner.ratings[0].rating > 1500 > loser.ratings[0].rating
    # The sweeper, too, settles finished rated games; it must not count this one again.
    matchmaker.call(lambda replica: replica.sweeper.work_on(game.id))
    assert south.GetPlayer(mm.GetPlayerRequest()).player.ratings[0].games == 1
    board = north.GetLeaderboard(mm.GetLeaderboardRequest(game="war")).entries
    assert [(e.rank, e.player.id) for e in board] == [(1, south.player_id), (2, north.player_id)]
    expect_error(
        lambda: north.GetLeaderboard(mm.GetLeaderboardRequest()),
        Code.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    expect_error(
        lambda: north.GetLeaderboard(mm.GetLeaderboardRequest(game="go")),
        Code.NOT_FOUND,
        "UNKNOWN_GAME",
    )
    unrated = start_game(war_players, "war")
    south.Resign(mm.ResignRequest(game_id=unrated.id))
    assert south.GetPlayer(mm.GetPlayerRequest()).player.ratings[0].games == 1


@both_stores
def test_every_key_but_the_bounded_indexes_expires(
    war_players: dict[str, Client], engine_stub: Any, redis_url: str
) -> None:
    game = start_game(war_players, "war", rated=True)
    play_moves(engine_stub, war_players, game.id, 4, random.Random(12))
    war_players["south"].OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    war_players["north"].Resign(mm.ResignRequest(game_id=game.id))
    war_players["south"].CreateGame(
        mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE)
    )
    assert_everything_expires(redis_url)


def test_an_open_game_can_be_withdrawn(war_players: dict[str, Client]) -> None:
    south, north = war_players["south"], war_players["north"]
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    expect_error(
        lambda: north.Resign(mm.ResignRequest(game_id=game.id)),
        Code.PERMISSION_DENIED,
        "NOT_A_PLAYER",
    )
    closed = south.Resign(mm.ResignRequest(game_id=game.id)).game
    assert closed.status == mm.GAME_STATUS_FINISHED and closed.outcome.winner == ""
    assert (
        closed.outcome.reason == game_pb2.OUTCOME_REASON_ABANDONED
        and "withdrew" in closed.outcome.message
    )
    expect_error(
        lambda: north.JoinGame(mm.JoinGameRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )
    assert game.id not in [g.id for g in north.BrowseGames(mm.BrowseGamesRequest()).games]
