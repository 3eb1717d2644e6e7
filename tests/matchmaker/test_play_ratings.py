"""Ratings as games of play end: how a finished game of two players changes a player's
rating (`play._pair_result`), games of alliances settled by alliance, ratings kept before
and after once, left pending when they cannot be settled, and none for a bot's game."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine
from typing import Any

from matchmaker import keys
from matchmaker.play import _pair_result, _team_result, seat_rating
from matchmaker.ratings import Rating, Result, team_update, update
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.server import Replica
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings
from tests.matchmaker.helpers import (
    captured_logs,
    legal_actions,
    start_game,
)
from tests.matchmaker.test_multiplayer import SIDES, SOUTH, four_people
from tests.matchmaker.test_play import game_of
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm

BEFORE = Rating(1600.0, 80.0, 0.06, 3)


def test_the_opponent_is_rated_as_they_were_when_the_game_began() -> None:
    opponent = Rating(1700.0, 60.0, 0.06, 9)
    game = game_of(
        Seat("red", "ada", rating=BEFORE.text()),
        Seat("black", "bo", kind=SeatKind.BOT, rating=opponent.text()),
    )
    assert _pair_result(game, "red", "black")(BEFORE) == update(BEFORE, [Result(opponent, 0.0)])


def test_an_unrated_opponent_counts_as_a_new_player() -> None:
    game = game_of(Seat("red", "ada", rating=BEFORE.text()), Seat("black", "bo"))
    assert _pair_result(game, "red", "")(BEFORE) == update(BEFORE, [Result(Rating(), 0.5)])


def test_without_an_opponent_seat_the_opponent_is_a_new_player() -> None:
    """No other seat (a record holding one side only): the default rating stands in."""
    game = game_of(Seat("red", "ada", rating=BEFORE.text()))
    assert _pair_result(game, "red", "red")(BEFORE) == update(BEFORE, [Result(Rating(), 1.0)])


def test_ratings_that_cannot_be_settled_at_the_end_are_left_pending_with_a_warning(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client]
) -> None:
    """A rated game ends while a player's stored rating cannot be read: the game is over
    all the same, its ratings left pending for the sweeper, and the warning an operator
    looks for names the game."""
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war", rated=True)

    async def garble(replica: Replica) -> None:
        await replica.redis.hset(keys.player(south.player_id), "rating:war", "garbled")

    matchmaker.call(garble)
    with captured_logs() as logs:
        ended = north.Resign(mm.ResignRequest(game_id=game.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED and ended.outcome.winner == "south"
    warnings = [
        (entry.get("event"), entry.get("exc_info"))
        for entry in logs
        if entry.get("game_id") == game.id and entry["log_level"] == "warning"
    ]
    assert ("ratings not settled yet", True) in warnings
    record, _ = matchmaker.call(lambda replica: replica.store.get(game.id))
    assert record.rating_status == RatingStatus.PENDING


def test_a_rated_game_of_alliances_ranks_the_winning_alliance_first() -> None:
    """Openskill's team model: each player's rating moves with its alliance's result, the
    others as they were when the game began, the player's own as it is now."""
    ratings = {
        "red": Rating(1500.0, 90.0, 0.06, 4),
        "black": Rating(1650.0, 70.0, 0.06, 8),
        "blue": Rating(1400.0, 100.0, 0.06, 2),
        "green": Rating(1550.0, 60.0, 0.06, 12),
    }
    seats = [Seat(side, side, rating=rating.text()) for side, rating in ratings.items()]
    drawn = game_pb2.GameState(game="napoleonic")
    for side, team in (("red", "south"), ("black", "north"), ("blue", "south"), ("green", "north")):
        drawn.napoleonic.players.add(id=side, alliance=team)
    won = game_pb2.GameState(outcome=game_pb2.Outcome(winners=["red", "blue"]))
    game = dataclasses.replace(game_of(*seats), state_bytes=won.SerializeToString())
    teams = [
        [BEFORE, ratings["blue"]],
        [ratings["black"], ratings["green"]],
    ]
    assert _team_result(game, drawn, "red")(BEFORE) == team_update(teams, [1, 2])[0][0]
    teams = [
        [ratings["red"], ratings["blue"]],
        [BEFORE, ratings["green"]],
    ]
    lost = _team_result(game, drawn, "black")(BEFORE)
    assert lost == team_update(teams, [1, 2])[1][0] and lost.rating < BEFORE.rating
    # A draw (no winners): every alliance ranks first.
    drew = dataclasses.replace(game, state_bytes=game_pb2.GameState().SerializeToString())
    teams = [[ratings["red"], BEFORE], [ratings["black"], ratings["green"]]]
    assert _team_result(drew, drawn, "blue")(BEFORE) == team_update(teams, [1, 1])[0][1]


def test_a_rated_game_of_two_keeps_each_rating_before_and_after_once(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client]
) -> None:
    """South wins a rated game: both ratings move, once, and the game keeps them; a
    settlement that stopped after counting them (before keeping them, or after keeping
    the first seat's only) keeps, when run again, for every seat the rating the game began
    with and the one the player has now."""
    first = start_game(war_players, "war", rated=True)
    war_players["south"].Resign(mm.ResignRequest(game_id=first.id))
    game = start_game(war_players, "war", rated=True)  # begun with the ratings of the first
    war_players["north"].Resign(mm.ResignRequest(game_id=game.id))
    ended = war_players["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert ended.outcome.winner == "south"
    seats = {seat.side: seat for seat in ended.seats}
    assert seats["south"].rating_after.rating > seats["south"].rating_before.rating
    assert seats["north"].rating_after.rating < seats["north"].rating_before.rating

    def rating(client: Client) -> float:
        (held,) = client.GetPlayer(mm.GetPlayerRequest()).player.ratings
        return float(held.rating)

    now = {side: rating(client) for side, client in war_players.items()}
    assert now == {side: seat.rating_after.rating for side, seat in seats.items()}

    def settle_again(game_id: str) -> Callable[[Replica], Coroutine[Any, Any, GameRecord]]:
        async def settle(replica: Replica) -> GameRecord:
            record, _ = await replica.store.get(game_id)
            cleared = [
                dataclasses.replace(s, rating_before="", rating_after="") for s in record.seats
            ]
            kept = dataclasses.replace(record, seats=cleared, rating_status=RatingStatus.PENDING)
            await replica.store.set_unversioned(record, kept)  # as that settlement left it
            await replica.play.settle_ratings(kept)
            after, _ = await replica.store.get(game_id)
            return after

        return settle

    # The first game began with new players (no rating yet): the default was counted.
    begun_new = matchmaker.call(settle_again(first.id))
    assert [(s.rating, s.rating_before) for s in begun_new.seats] == [("", Rating().text())] * 2
    after = matchmaker.call(settle_again(game.id))
    assert after.rating_status == RatingStatus.DONE
    assert {side: rating(client) for side, client in war_players.items()} == now
    for seat in after.seats:
        assert seat.rating and seat.rating_before == seat.rating
        assert Rating.parse(seat.rating_after).rating == now[seat.side]
    view = war_players["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert [s.rating_after.rating for s in view.seats] == [
        s.rating_after.rating for s in ended.seats
    ]

    async def settle_the_rest(replica: Replica) -> GameRecord:
        """Again, after a settlement that kept the first seat's ratings and stopped."""
        record, _ = await replica.store.get(game.id)
        first, *rest = record.seats
        cleared = [dataclasses.replace(s, rating_before="", rating_after="") for s in rest]
        kept = dataclasses.replace(
            record, seats=[first, *cleared], rating_status=RatingStatus.PENDING
        )
        await replica.store.set_unversioned(record, kept)
        await replica.play.settle_ratings(kept)
        again, _ = await replica.store.get(game.id)
        return again

    again = matchmaker.call(settle_the_rest)
    assert again.rating_status == RatingStatus.DONE and again.seats == after.seats


def test_a_side_without_a_seat_has_no_rating() -> None:
    """The rating a side's player had as the game began: none ("", a new player's) for a
    side that holds no seat."""
    game = game_of(Seat("red", "ada", rating=BEFORE.text()))
    assert seat_rating(game, "red") == BEFORE.text()
    assert seat_rating(game, "black") == ""


def test_a_game_has_an_end_time_and_awaits_ratings_only_once_it_ended_rated(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """A move leaves a game without an end time, and a rated game's ratings are not
    awaited while it runs; a game that ends is stamped with the time of its last change,
    and an unrated one awaits no ratings."""

    def stored(game_id: str) -> GameRecord:
        record, _ = matchmaker.call(lambda replica: replica.store.get(game_id, full=True))
        return record

    rated = start_game(war_players, "war", rated=True)
    action = legal_actions(engine_stub, rated.state)[0].action
    war_players["south"].SubmitActions(
        mm.SubmitActionsRequest(game_id=rated.id, expected_version=rated.version, actions=[action])
    )
    moved = stored(rated.id)
    assert moved.version == rated.version + 1 and moved.status == GameStatus.RUNNING
    assert (moved.ended_ms, moved.rating_status) == (0, RatingStatus.NONE)
    unrated = start_game(war_players, "war")
    war_players["north"].Resign(mm.ResignRequest(game_id=unrated.id))
    ended = stored(unrated.id)
    assert ended.status == GameStatus.FINISHED and ended.rating_status == RatingStatus.NONE
    assert ended.ended_ms == ended.updated_ms > 0


def test_a_rated_game_of_alliances_is_settled_by_alliance_as_it_ends(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Black and green resign a rated game of four, new players all: red and blue's
    alliance won. The ratings are settled as it ends, each by openskill's team model over
    the two alliances (the winners ranked first), and the game keeps them."""
    game, people = four_people(matchmaker, clients, rated=True)
    people["black"].Resign(mm.ResignRequest(game_id=game.id))
    ended = people["green"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED and set(ended.outcome.winners) == set(SOUTH)
    record, _ = matchmaker.call(lambda replica: replica.store.get(game.id))
    assert record.rating_status == RatingStatus.DONE
    new = Rating()
    (winner, _), (loser, _) = team_update([[new, new], [new, new]], [1, 2])
    assert winner.rating > new.rating > loser.rating
    kept = {seat.side: (seat.rating_before, seat.rating_after) for seat in record.seats}
    assert kept == {
        side: (new.text(), (winner if side in SOUTH else loser).text()) for side in SIDES
    }


# The `three_way` scenario's start, with red and green allied against black (a `players`
# section, docs/positions.md): a game of three with alliances.
RED_AND_GREEN_ALLIED = (
    "board 12x12; players: red/south black/black green/south; "
    "red: e2=A f2=C g2=C i2=G j2=C k2=C l2=A e3=I f3=I g3=I h3=I i3=I j3=I k3=I l3=I; "
    "black: e10=I f10=I g10=I h10=I i10=I j10=I k10=I l10=I "
    "e11=A f11=C g11=C i11=G j11=C k11=C l11=A; "
    "green: b3=A c3=I b4=C c4=I b5=C c5=I c6=I b7=G c7=I b8=C c8=I b9=C c9=I b10=A c10=I; "
    "hills: g6 i8; turn: red movement 0"
)


def test_a_rated_game_of_three_is_settled_by_its_alliances(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """A rated game of three, new players all, where red and green are allied: black
    resigns, and their alliance wins. The alliances are the position's (drawn by the
    engine, as for four), so openskill's team model rates two alliances, red and green
    ranked first, not three players each alone."""
    people = {side: clients(matchmaker.address, side) for side in ("red", "black", "green")}
    created = people["red"].CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way"},
            setup=RED_AND_GREEN_ALLIED,
            side="red",
            rated=True,
        )
    )
    for side in ("black", "green"):
        joined = people[side].JoinGame(
            mm.JoinGameRequest(invite_code=created.invite_code, side=side)
        )
    assert joined.game.status == mm.GAME_STATUS_RUNNING
    ended = people["black"].Resign(mm.ResignRequest(game_id=created.game.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED
    # docs/multiplayer.md: the players left are all of one alliance, which wins.
    assert (ended.outcome.winner, set(ended.outcome.winners)) == ("south", {"red", "green"})
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.game.id))
    assert record.rating_status == RatingStatus.DONE
    new = Rating()
    (winner, _), (loser,) = team_update([[new, new], [new]], [1, 2])
    kept = {seat.side: Rating.parse(seat.rating_after) for seat in record.seats}
    assert kept == {"red": winner, "green": winner, "black": loser}


def test_a_rated_game_of_two_is_settled_without_the_engine(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], redis_url: str
) -> None:
    """The ratings of a game of two need no drawing of its position (alliances are for
    games of more): a replica whose engine is unreachable still settles them."""
    game = start_game(war_players, "war", rated=True)
    war_players["north"].Resign(mm.ResignRequest(game_id=game.id))

    async def settle_without_engine() -> GameRecord:
        replica = await Replica.connect(fast_settings(redis_url))  # engine: 127.0.0.1:1
        try:
            record, _ = await replica.store.get(game.id)
            assert record.rating_status == RatingStatus.DONE
            cleared = dataclasses.replace(
                record,
                seats=[
                    dataclasses.replace(s, rating_before="", rating_after="") for s in record.seats
                ],
                rating_status=RatingStatus.PENDING,
            )
            await replica.store.set_unversioned(record, cleared)
            await replica.play.settle_ratings(cleared)
            after, _ = await replica.store.get(game.id)
            return after
        finally:
            await replica.close()

    after = asyncio.run(settle_without_engine())
    assert after.rating_status == RatingStatus.DONE
    ratings = {
        side: client.GetPlayer(mm.GetPlayerRequest()).player.ratings[0].rating
        for side, client in war_players.items()
    }
    assert ratings["south"] > Rating().rating > ratings["north"]
    for seat in after.seats:  # new players when the game began
        assert Rating.parse(seat.rating_before) == Rating()
        assert Rating.parse(seat.rating_after).rating == ratings[seat.side]
    # Glicko-2 for two players: each new player's one result against a new opponent
    # (south won, north lost), not the team model of games of more.
    kept = {seat.side: Rating.parse(seat.rating_after) for seat in after.seats}
    assert kept == {
        "south": update(Rating(), [Result(Rating(), 1.0)]),
        "north": update(Rating(), [Result(Rating(), 0.0)]),
    }


def test_a_game_against_the_bot_counts_in_no_rating_even_when_settled(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Games against the bot are never rated (README): settling one that ended (as the
    sweeper would a game left pending) moves no rating and keeps none in the game, neither
    the person's nor the bot's."""
    ada = clients(matchmaker.address, "Ada")
    created = ada.CreateGame(
        mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT)
    ).game
    assert created.status == mm.GAME_STATUS_RUNNING
    ended = ada.Resign(mm.ResignRequest(game_id=created.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED

    async def settle(replica: Replica) -> GameRecord:
        record, _ = await replica.store.get(created.id)
        await replica.play.settle_ratings(record)
        after, _ = await replica.store.get(created.id)
        return after

    after = matchmaker.call(settle)
    assert {seat.kind for seat in after.seats} == {SeatKind.HUMAN, SeatKind.BOT}
    assert [(seat.rating_before, seat.rating_after) for seat in after.seats] == [("", "")] * 2
    assert list(ada.GetPlayer(mm.GetPlayerRequest()).player.ratings) == []
