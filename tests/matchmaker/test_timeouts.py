"""Clocks, abandonment, open games nobody joins, and bots: work done by the sweeper with
nobody calling (timeouts are configured down to seconds)."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import (
    Client,
    InProcessMatchmaker,
    WarReplica,
    both_stores,
    players_of,
)
from tests.matchmaker.helpers import (
    expect_error,
    legal_actions,
    play_moves,
    seconds,
    start_game,
    submission,
    wait_for,
    war_game_played,
)
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


def players(address: str, clients: Callable[..., Client]) -> dict[str, Client]:
    return players_of(address, clients, "south", "north")


def finished(client: Client, game_id: str) -> Callable[[], mm.GameView | None]:
    def check() -> mm.GameView | None:
        game = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
        return game if game.status == mm.GAME_STATUS_FINISHED else None

    return check


@both_stores
def test_loss_on_time_is_found_without_the_player_calling(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    two = players_of(matchmaker.address, clients, "south", "north")
    base = 0.9
    while True:  # South moves within its clock: on a busy machine, with a longer one
        tc = mm.TimeControl(base=seconds(base), increment=seconds(0.1))
        game = start_game(two, "war", time_control=tc)
        assert game.clock.running == "south"
        assert game.clock.remaining["south"].ToMilliseconds() <= base * 1000
        try:
            game = play_moves(engine_stub, two, game.id, 1, random.Random(1))
            break
        except grpc.RpcError as error:  # South's own clock fell first
            assert error.code() == Code.FAILED_PRECONDITION, error
            late = wait_for(finished(two["south"], game.id), timeout=30)
            assert late.outcome.reason == game_pb2.OUTCOME_REASON_TIME, late
            assert late.outcome.winner == "north", late
            base *= 2
    # North's clock runs from South's move, or ran out already: the sweeper may have flagged
    # it before the move's answer was made, on a busy machine.
    assert game.clock.running == "north" or (
        game.status == mm.GAME_STATUS_FINISHED
        and game.outcome.reason == game_pb2.OUTCOME_REASON_TIME
        and game.outcome.winner == "south"
    ), game
    # North never calls again: the sweeper flags it.
    over = wait_for(finished(two["south"], game.id), timeout=30)
    assert over.outcome.reason == game_pb2.OUTCOME_REASON_TIME and over.outcome.winner == "south"
    assert over.clock.running == "" and over.clock.remaining["north"].ToMilliseconds() == 0
    assert list(over.moves)[-1] == "timeout"
    record = two["south"].GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
    assert replayed.final_state.outcome.reason == game_pb2.OUTCOME_REASON_TIME


def test_a_late_move_is_refused_and_ends_the_game(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    # A sweeper that never comes round: the late submission itself finds the flag.
    _server, two = war_replica(sweep_interval=3600.0)
    game = start_game(two, "war", time_control=mm.TimeControl(base=seconds(0.3)))
    time.sleep(0.5)
    action = legal_actions(engine_stub, game.state)[0].action
    details = expect_error(
        lambda: two["south"].SubmitActions(submission(game, action)),
        Code.FAILED_PRECONDITION,
        "GAME_OVER",
    )
    assert "time" in details.message
    over = two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert over.outcome.reason == game_pb2.OUTCOME_REASON_TIME and over.outcome.winner == "north"


@both_stores
def test_an_abandoned_game_ends_after_the_timeout(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    _server, two = war_replica(abandon_after=1.0)
    game = war_game_played(engine_stub, two, 2, 2)
    started = time.monotonic()
    over = wait_for(finished(two["north"], game.id), timeout=30)
    assert time.monotonic() - started > 0.8  # not before the abandonment delay
    assert (
        over.outcome.reason == game_pb2.OUTCOME_REASON_ABANDONED and over.outcome.winner == "north"
    )
    assert list(over.moves)[-1] == "abandon"


def test_an_open_game_nobody_joins_is_closed(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(open_game_ttl=0.5)
    ada = clients(server.address, "Ada")
    game = ada.CreateGame(mm.CreateGameRequest(game="war")).game
    over = wait_for(finished(ada, game.id), timeout=10)
    assert over.outcome.reason == game_pb2.OUTCOME_REASON_ABANDONED and over.outcome.winner == ""
    assert game.id not in [g.id for g in ada.BrowseGames(mm.BrowseGamesRequest()).games]
    expect_error(
        lambda: clients(server.address, "Late").JoinGame(mm.JoinGameRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )


def test_finished_games_expire(war_replica: WarReplica) -> None:
    _server, two = war_replica(finished_game_ttl=1.0)
    game = start_game(two, "war")
    two["south"].Resign(mm.ResignRequest(game_id=game.id))
    wait_for(lambda: not _exists(two["south"], game.id), timeout=10)


def _exists(client: Client, game_id: str) -> bool:
    try:
        client.GetGame(mm.GetGameRequest(game_id=game_id))
        return True
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.NOT_FOUND
        return False


@pytest.mark.parametrize("side", ["south", "north"])
@both_stores
def test_the_bot_plays_its_seat(engine_stub: Any, side: str, ada: Client) -> None:
    created = ada.CreateGame(
        mm.CreateGameRequest(
            game="war",
            side=side,
            opponent=mm.SEAT_KIND_BOT,
            bot_time=seconds(0.05),
        )
    )
    game = created.game
    assert game.status == mm.GAME_STATUS_RUNNING and not game.rated
    bot_seat = next(seat for seat in game.seats if seat.side != side)
    assert bot_seat.kind == mm.SEAT_KIND_BOT and bot_seat.player.bot
    rng = random.Random(3)
    for _ in range(3):
        game = wait_for(functools.partial(_my_turn, ada, game.id, side))
        if game.status != mm.GAME_STATUS_RUNNING:
            break
        action = rng.choice(legal_actions(engine_stub, game.state)).action
        ada.SubmitActions(submission(game, action))
    game = wait_for(functools.partial(_my_turn, ada, game.id, side))
    bot_side = bot_seat.side
    assert sum(1 for move in game.moves) >= 6 or game.status == mm.GAME_STATUS_FINISHED
    assert bot_side not in game.state.to_act or game.status != mm.GAME_STATUS_RUNNING
    expect_error(
        lambda: ada.CreateGame(
            mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT, bot_time=seconds(999))
        ),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )


def _my_turn(client: Client, game_id: str, side: str) -> mm.GameView | None:
    game: mm.GameView = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
    if game.status != mm.GAME_STATUS_RUNNING or side in game.state.to_act:
        return game
    return None
