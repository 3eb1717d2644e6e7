"""Abort through the Matchmaker RPC, with a real Redis and a real engine: a game that has
barely begun ends with no result and no rating change, its watchers and record say so, and
an abort that comes too late (or from someone without a seat) is refused and loses nothing."""

from __future__ import annotations

import random
from typing import Any

import grpc
import pytest

from matchmaker.abort import turns
from matchmaker.record import ActionEntry, GameRecord, RatingStatus
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import Watcher, expect_error, play_moves, start_game
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm

Code = grpc.StatusCode


def _entry(side: str, notation: str) -> ActionEntry:
    return ActionEntry(side, notation, notation)


def test_a_turn_is_a_sides_actions_in_a_row_and_draw_offers_are_none() -> None:
    """Napoleonic Chess: Red's moves, end of movement and attacks are one turn; a draw
    offer between them neither counts nor breaks the turn."""
    moves = [
        _entry("red", "u3-d4"),
        _entry("red", "offer draw"),
        _entry("red", "end movement"),
        _entry("black", "decline draw"),
        _entry("red", "attacks -"),
        _entry("black", "u20-d5"),
    ]
    assert turns(moves) == {"red": 1, "black": 1}
    assert turns([*moves, _entry("red", "u4-c4")])["red"] == 2


def test_either_player_aborts_before_a_second_turn_with_no_result_and_no_rating(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war", rated=True)
    game = play_moves(engine_stub, war_players, game.id, 2, random.Random(3))
    assert len(game.moves) == 2 and game.status == mm.GAME_STATUS_RUNNING
    spectator = Client(matchmaker.address)
    try:
        watcher = Watcher(spectator, game.id, after=game.version)
        aborted = north.Abort(mm.AbortRequest(game_id=game.id)).game
        assert aborted.status == mm.GAME_STATUS_FINISHED and aborted.your_side == "north"
        assert (aborted.outcome.reason, aborted.outcome.winner) == (
            game_pb2.OUTCOME_REASON_ABORTED,
            "",
        )
        assert aborted.outcome.message == "aborted by north (North): no result"
        (update,) = watcher.until(aborted.version)
        assert [event.kind for event in update.events] == [game_pb2.EVENT_KIND_GAME_OVER]
        assert update.game.outcome.reason == game_pb2.OUTCOME_REASON_ABORTED
        for player in (south, north):
            assert not player.GetPlayer(mm.GetPlayerRequest()).player.ratings
        assert not any(seat.HasField("rating_after") for seat in aborted.seats)
        record: GameRecord
        record, _ = matchmaker.call(lambda replica: replica.store.get(game.id))
        assert record.rating_status == RatingStatus.NONE
        text = south.GetRecord(mm.GetRecordRequest(game_id=game.id)).record
        assert "aborted by north (North): no result" in text
        expect_error(
            lambda: south.Abort(mm.AbortRequest(game_id=game.id)),
            Code.FAILED_PRECONDITION,
            "GAME_OVER",
        )
    finally:
        spectator.close()


def test_an_abort_after_a_second_turn_is_refused_and_the_game_goes_on(
    war_players: dict[str, Client], engine_stub: Any, matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    south = war_players["south"]
    game = start_game(war_players, "war")
    expect_error(
        lambda: ada.Abort(mm.AbortRequest(game_id=game.id)), Code.PERMISSION_DENIED, "NOT_A_PLAYER"
    )
    south.OfferDraw(mm.OfferDrawRequest(game_id=game.id))  # no turn
    game = play_moves(engine_stub, war_players, game.id, 3, random.Random(3))
    refused = expect_error(
        lambda: south.Abort(mm.AbortRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "ABORT_TOO_LATE",
    )
    assert "before any side's second turn" in refused.message
    after = south.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert (after.status, after.version) == (mm.GAME_STATUS_RUNNING, game.version)


def test_an_open_game_is_withdrawn_not_aborted(war_players: dict[str, Client]) -> None:
    south = war_players["south"]
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    expect_error(
        lambda: south.Abort(mm.AbortRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )


pytestmark = pytest.mark.integration
