"""When the sweeper next looks at a game (`matchmaker/schedule.py`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from matchmaker import clocks
from matchmaker.record import (
    BOT_PLAYER,
    GameRecord,
    GameStatus,
    RatingStatus,
    Seat,
    SeatKind,
)
from matchmaker.schedule import (
    RATING_RETRY_MS,
    next_due,
    offered_to_bot,
    open_until,
    ttl,
)
from matchmaker.settings import Settings
from matchmaker.states import players_out
from tests.matchmaker.helpers import game_record
from wargame.v1 import game_pb2, napoleonic_pb2

NOW = 1_000_000


def humans_only(state: game_pb2.GameState) -> GameRecord:
    """A running untimed game of two people, both present and unwarned."""
    seats = [Seat("south", "ps", "South"), Seat("north", "pn", "North")]
    return game_record(state, seats, ruleset="war")


def test_a_game_of_people_is_looked_at_only_at_the_next_presence_check() -> None:
    # No bot to act or to answer a draw offer: nothing is due now, only the check of
    # whether the side to act is still there.
    settings = Settings(presence_check=30.0)
    for state in (
        game_pb2.GameState(game="war", position="p", to_act=["south"]),
        game_pb2.GameState(game="war", position="p", to_act=["south"], draw_offer="north"),
    ):
        assert next_due(humans_only(state), NOW, settings) == NOW + 30_000


SETTINGS = Settings(
    presence_check=30.0, open_game_ttl=120.0, finished_game_ttl=600.0, running_game_ttl=9000.0
)


def running(to_act: list[str], **state: Any) -> GameRecord:
    """A running untimed game of South (a person) and North (the bot)."""
    game = humans_only(game_pb2.GameState(game="war", position="p", to_act=to_act, **state))
    game.seats = [Seat("south", "ps", "South"), Seat("north", BOT_PLAYER, "Bot", SeatKind.BOT)]
    return game


def test_an_open_game_is_looked_at_when_it_expires() -> None:
    game = dataclasses.replace(humans_only(game_pb2.GameState()), status=GameStatus.OPEN)
    game.created_ms = 5_000
    assert next_due(game, NOW, SETTINGS) == 5_000 + 120_000 == open_until(game, SETTINGS)


def test_a_finished_game_is_looked_at_again_only_while_its_ratings_are_pending() -> None:
    game = humans_only(game_pb2.GameState(game="war", position="p"))
    game.status = GameStatus.FINISHED
    game.rating_status = RatingStatus.PENDING
    assert next_due(game, NOW, SETTINGS) == NOW + RATING_RETRY_MS
    for settled in (RatingStatus.NONE, RatingStatus.DONE):
        game.rating_status = settled
        assert next_due(game, NOW, SETTINGS) is None


def test_a_running_clock_brings_the_look_forward_to_its_flag() -> None:
    game = humans_only(game_pb2.GameState(game="war", position="p", to_act=["south"]))
    game.clock = clocks.Clock(
        base_ms=60_000,
        increment_ms=0,
        remaining={"south": 5_000, "north": 1_000},
        at_ms=NOW,
        running=("south",),
    )
    assert next_due(game, NOW, SETTINGS) == NOW + 5_000  # North's clock is stopped
    game.clock = dataclasses.replace(game.clock, remaining={"south": 50_000}, running=("south",))
    assert next_due(game, NOW, SETTINGS) == NOW + 30_000  # the presence check comes first
    game.clock = dataclasses.replace(game.clock, running=())
    assert next_due(game, NOW, SETTINGS) == NOW + 30_000


def test_a_side_to_act_that_left_is_looked_at_now_and_a_warned_one_when_warned() -> None:
    game = humans_only(game_pb2.GameState(game="war", position="p", to_act=["south"]))
    game.away = {"south": NOW - 100}
    assert next_due(game, NOW, SETTINGS) == NOW  # its warning is due
    game.warned = {"south": NOW + 7_000}
    assert next_due(game, NOW, SETTINGS) == NOW + 7_000  # abandoned then unless back
    # Only the sides to act count: North left and was warned, but it is not its turn.
    game = humans_only(game_pb2.GameState(game="war", position="p", to_act=["south"]))
    game.away, game.warned = {"north": NOW - 100}, {"north": NOW + 1_000}
    assert next_due(game, NOW, SETTINGS) == NOW + 30_000


def test_a_game_nobody_may_act_in_is_not_due() -> None:
    assert (
        next_due(humans_only(game_pb2.GameState(game="war", position="p")), NOW, SETTINGS) is None
    )


def test_a_bots_turn_or_a_draw_offer_it_must_answer_is_due_now() -> None:
    assert next_due(running(["north"]), NOW, SETTINGS) == NOW
    offered = running(["south"], draw_offer="south")
    assert offered_to_bot(offered) == offered.seats[1]
    assert next_due(offered, NOW, SETTINGS) == NOW
    # Nothing for the bot to answer: no offer, its own offer, or a game that is not running.
    assert offered_to_bot(running(["south"])) is None
    assert offered_to_bot(running(["south"], draw_offer="north")) is None
    # The person's turn against the bot alone: nobody waits, no look at its presence.
    assert next_due(running(["south"], draw_offer="north"), NOW, SETTINGS) is None
    open_game = dataclasses.replace(offered, status=GameStatus.OPEN)
    assert offered_to_bot(open_game) is None


def test_a_bot_that_accepted_or_is_out_owes_no_answer_to_a_draw_offer() -> None:
    players = [
        napoleonic_pb2.NapoleonicPlayer(id="red"),
        napoleonic_pb2.NapoleonicPlayer(id="blue"),
        napoleonic_pb2.NapoleonicPlayer(id="green", out=True),
    ]
    state = game_pb2.GameState(
        game="napoleonic",
        to_act=["red"],
        draw_offer="red",
        napoleonic=napoleonic_pb2.NapoleonicState(players=players),
    )
    game = humans_only(state)
    game.seats = [
        Seat("red", "pr", "Red"),
        Seat("blue", BOT_PLAYER, "Bot", SeatKind.BOT),
        Seat("green", BOT_PLAYER, "Bot", SeatKind.BOT),
    ]
    assert players_out(state) == {"green"}
    assert offered_to_bot(game) == game.seats[1]  # blue has not answered; green is out
    state.draw_accepted.append("blue")
    game.state_bytes = state.SerializeToString()
    game._state = None
    assert offered_to_bot(game) is None


def test_a_games_keys_live_as_long_as_its_status_asks() -> None:
    assert ttl(GameStatus.FINISHED, SETTINGS) == 600.0
    assert ttl(GameStatus.OPEN, SETTINGS) == 120.0 + 600.0  # open, then finished unplayed
    assert ttl(GameStatus.RUNNING, SETTINGS) == 9000.0
