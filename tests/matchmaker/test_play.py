"""How a finished game of two players changes a player's rating (`play._pair_result`)."""

from __future__ import annotations

import dataclasses

from matchmaker.play import _pair_result
from matchmaker.ratings import Rating, Result, update
from matchmaker.record import GameRecord, Seat, SeatKind

BEFORE = Rating(1600.0, 80.0, 0.06, 3)


def game_of(*seats: Seat) -> GameRecord:
    return dataclasses.replace(GameRecord.from_hash("g1", {}), ruleset="war", seats=list(seats))


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
