"""The end of a game: each seat's rating change once settled, and play again —
sides swapped, the opponent's seat kept for it and offered on the old game's stream, or
against the bot at once. Each runs on a standalone Redis and on a Redis Cluster."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from matchmaker import keys
from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores, players_of
from tests.matchmaker.helpers import (
    Watcher,
    channel_listeners,
    expect_error,
    play_moves,
    seconds,
    start_game,
    wait_for,
)
from tests.matchmaker.test_multiplayer import four_people
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


def sides(game: mm.GameView) -> dict[str, str]:
    """Player id by side."""
    return {seat.side: seat.player.id for seat in game.seats}


@both_stores
def test_a_rated_game_shows_each_seats_rating_change_once_settled(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    two = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(two, "war", rated=True)
    assert not any(seat.HasField("rating_after") for seat in game.seats)
    play_moves(engine_stub, two, game.id, 2, random.Random(3))
    two["north"].Resign(mm.ResignRequest(game_id=game.id))
    over = two["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    seats = {seat.side: seat for seat in over.seats}
    winner, loser = seats["south"], seats["north"]
    assert winner.rating_before.rating == loser.rating_before.rating == 1500
    assert winner.rating_after.rating > 1500 > loser.rating_after.rating
    assert winner.rating_after.games == 1 and winner.rating_after.game == "war"
    profile = two["south"].GetPlayer(mm.GetPlayerRequest()).player
    assert profile.ratings[0].rating == winner.rating_after.rating
    # Settled again by the sweeper: nothing changes, nothing is counted twice.
    matchmaker.call(lambda replica: replica.sweeper.work_on(game.id))
    again = two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert list(again.seats) == list(over.seats)


@both_stores
def test_play_again_swaps_sides_keeps_the_seat_and_offers_it_on_the_old_stream(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], redis_url: str
) -> None:
    two = players_of(matchmaker.address, clients, "south", "north")
    south, north = two["south"], two["north"]
    game = start_game(two, "war", time_control=mm.TimeControl(base=seconds(300)), rated=True)
    expect_error(
        lambda: south.Rematch(mm.RematchRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_FINISHED",
    )
    south.Resign(mm.ResignRequest(game_id=game.id))
    waiting = Watcher(north, game.id, follow_rematch=True)  # north's client at the end
    waiting.until(game.version + 1)
    # Live from here: the offer reaches the stream by its announcement, not the catch-up.
    wait_for(lambda: channel_listeners(redis_url, keys.game_channel(game.id)) == 1)
    offered = south.Rematch(mm.RematchRequest(game_id=game.id)).game
    assert offered.status == mm.GAME_STATUS_OPEN and offered.rematch_of == game.id
    assert sides(offered) == {"north": south.player_id, "south": ""}  # sides swapped
    kept = {seat.side: seat.reserved_for for seat in offered.seats}
    assert kept == {"south": north.player_id, "north": ""}
    assert offered.rated and offered.clock.time_control.base.seconds == 300
    notice, _ = waiting.notice(mm.NOTICE_KIND_REMATCH_OFFERED)
    assert notice.notice.game_id == offered.id and notice.notice.side == "south"
    assert waiting.ended.wait(10) and waiting.error is None  # the offer ends the wait
    old = north.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert old.rematch_game_id == offered.id
    assert offered.id not in [g.id for g in north.BrowseGames(mm.BrowseGamesRequest()).games]
    stranger = clients(matchmaker.address, "Stranger")
    expect_error(
        lambda: stranger.JoinGame(mm.JoinGameRequest(game_id=offered.id)),
        Code.PERMISSION_DENIED,
        "SEAT_TAKEN",
    )
    # The opponent accepts by asking for the rematch too (or by joining it).
    accepted = north.Rematch(mm.RematchRequest(game_id=game.id)).game
    assert accepted.id == offered.id and accepted.status == mm.GAME_STATUS_RUNNING
    assert sides(accepted) == {"north": south.player_id, "south": north.player_id}
    assert south.Rematch(mm.RematchRequest(game_id=game.id)).game.id == offered.id


@both_stores
def test_play_again_against_the_bot_starts_at_once_with_sides_swapped(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], ada: Client
) -> None:
    game = ada.CreateGame(
        mm.CreateGameRequest(
            game="war", side="north", opponent=mm.SEAT_KIND_BOT, bot_level=2, bot_time=seconds(0.05)
        )
    ).game
    ada.Resign(mm.ResignRequest(game_id=game.id))
    again = ada.Rematch(mm.RematchRequest(game_id=game.id)).game
    assert again.status == mm.GAME_STATUS_RUNNING and again.your_side == "south"
    (bot,) = [seat for seat in again.seats if seat.kind == mm.SEAT_KIND_BOT]
    assert bot.side == "north" and bot.bot_level == 2 and bot.player.bot
    assert ada.Rematch(mm.RematchRequest(game_id=game.id)).game.id == again.id
    expect_error(
        lambda: clients(matchmaker.address, "Other").Rematch(mm.RematchRequest(game_id=game.id)),
        Code.PERMISSION_DENIED,
        "NOT_A_PLAYER",
    )


def test_a_game_of_more_than_two_is_not_played_again_by_rematch(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Swapping sides means nothing with four: the refusal says what to do instead."""
    game, people = four_people(matchmaker, clients)
    people["red"].OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    for side in ("black", "blue", "green"):
        game = people[side].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)).game
    assert game.status == mm.GAME_STATUS_FINISHED
    refused = expect_error(
        lambda: people["red"].Rematch(mm.RematchRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )
    assert refused.message == (
        f"a rematch is for games of two players; game {game.id} had 4: "
        "start a new game of its scenario"
    )
    assert not people["red"].GetGame(mm.GetGameRequest(game_id=game.id)).game.rematch_game_id


# South to move, North down to its Gun and King (docs/positions.md): no default board.
SET_UP = "4gk4/10/10/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM S FF:ff"


def test_play_again_keeps_the_set_up_clock_and_visibility_of_the_game_played(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """A rematch keeps the set-up text, the whole time control and the visibility: it
    begins from the position the finished game began from, not from the ruleset's default
    one, with the same base time and increment, private as the game was."""
    two = players_of(matchmaker.address, clients, "south", "north")
    clock = mm.TimeControl(base=seconds(300), increment=seconds(5))
    created = two["south"].CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", setup=SET_UP, time_control=clock,
            visibility=mm.VISIBILITY_PRIVATE,
        )
    )  # fmt: skip
    game = two["north"].JoinGame(mm.JoinGameRequest(invite_code=created.invite_code)).game
    default = start_game(
        players_of(matchmaker.address, clients, "south", "north"), "war"
    ).state.position
    assert game.state.position != default  # the set-up is not the default board
    two["north"].Resign(mm.ResignRequest(game_id=game.id))
    offered = two["south"].Rematch(mm.RematchRequest(game_id=game.id)).game
    assert offered.state.position == game.state.position
    assert offered.clock.time_control == clock
    assert offered.visibility == mm.VISIBILITY_PRIVATE


def test_play_again_of_a_game_that_expires_meanwhile_is_refused_as_not_found(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], monkeypatch: Any
) -> None:
    """The finished game expires between reading it and recording its rematch: the caller
    is told, as for any game gone, that there is no such game (naming it)."""
    two = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(two, "war")
    two["north"].Resign(mm.ResignRequest(game_id=game.id))
    assert matchmaker.replica is not None
    store = matchmaker.replica.store
    claim = store.claim_rematch

    async def expiring_first(game_id: str, rematch_id: str) -> str:
        await store.redis.delete(keys.game(game_id))  # its TTL runs out just now
        return await claim(game_id, rematch_id)

    monkeypatch.setattr(store, "claim_rematch", expiring_first)
    refused = expect_error(
        lambda: two["south"].Rematch(mm.RematchRequest(game_id=game.id)),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )
    assert refused.message == f"no game '{game.id}' (unknown or expired)"
    assert refused.fields[0][0] == "game_id"
