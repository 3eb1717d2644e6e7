"""Sessions: a time control read from the contract's message, and the clock a new game
is stored with (standing while the game is open, running for the side to act once every
seat is taken)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.protobuf.duration_pb2 import Duration

from matchmaker.ratings import Rating, Result, update
from matchmaker.server import Replica
from matchmaker.sessions import TimeControl
from tests.matchmaker.conftest import Client, InProcessMatchmaker, players_of
from tests.matchmaker.helpers import seconds, start_game
from wargame.runtime.refusal import Reason, Refusal
from wargame.v1 import matchmaker_pb2 as mm


def test_a_time_control_keeps_its_base_and_increment() -> None:
    message = mm.TimeControl(base=seconds(300), increment=seconds(2.5))
    assert TimeControl.of(message) == TimeControl(300_000, 2_500)
    assert TimeControl.of(mm.TimeControl(base=seconds(60))) == TimeControl(60_000, 0)


def test_a_time_control_with_a_zero_base_is_refused() -> None:
    # An increment with no base would be a clock that starts flagged: refused, naming the field.
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(base=seconds(0), increment=seconds(5)), "queue.time_control")
    assert refused.value.reason == Reason.MALFORMED_REQUEST
    assert [name for name, _ in refused.value.fields] == ["queue.time_control.base"]


DAY_MS = 24 * 3600 * 1000
HOUR_MS = 3600 * 1000


def milliseconds(value: int) -> Duration:
    """A protobuf Duration of `value` ms."""
    duration = Duration()
    duration.FromMilliseconds(value)
    return duration


def test_a_base_time_of_1_ms_is_the_shortest_taken() -> None:
    assert TimeControl.of(mm.TimeControl(base=milliseconds(1))) == TimeControl(1, 0)
    assert TimeControl(1, 0).text() == "1+0"


def test_a_base_time_of_7_days_is_the_longest_taken() -> None:
    week = mm.TimeControl(base=milliseconds(7 * DAY_MS))
    assert TimeControl.of(week) == TimeControl(7 * DAY_MS, 0)
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(base=milliseconds(7 * DAY_MS + 1)))
    assert refused.value.reason == Reason.MALFORMED_REQUEST
    assert refused.value.fields == (
        ("time_control.base", "the base time must be positive and at most 7 days"),
    )


def test_an_increment_of_0_to_1_hour_is_taken() -> None:
    base = milliseconds(60_000)
    assert TimeControl.of(mm.TimeControl(base=base, increment=milliseconds(HOUR_MS))) == (
        TimeControl(60_000, HOUR_MS)
    )
    for wrong in (HOUR_MS + 1, -1):
        with pytest.raises(Refusal) as refused:
            TimeControl.of(mm.TimeControl(base=base, increment=milliseconds(wrong)), "tc")
        assert refused.value.fields == (("tc.increment", "the increment must be 0 to 1 hour"),)


def test_no_time_control_or_an_unset_one_is_untimed() -> None:
    assert TimeControl.of(None) == TimeControl(0, 0)
    assert TimeControl.of(mm.TimeControl()) == TimeControl(0, 0)
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(increment=seconds(0)))  # set, though zero: no base
    assert [name for name, _ in refused.value.fields] == ["time_control.base"]


@pytest.mark.integration
def test_an_open_game_is_stored_with_its_clocks_standing_until_it_starts(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """The stored clock is what every replica reads: while the game waits for its second
    player no side's time runs; once it starts, the side to act's does."""
    south, north = (clients(matchmaker.address, name) for name in ("South", "North"))
    created = south.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", time_control=mm.TimeControl(base=seconds(60))
        )
    ).game
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.remaining == {"south": 60_000, "north": 60_000}
    assert record.clock.running == ()
    north.JoinGame(mm.JoinGameRequest(game_id=created.id))
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.running == ("south",)


def won_earlier(matchmaker: InProcessMatchmaker, player_id: str) -> Rating:
    """Three earlier wins counted in a player's Game of War rating: the rating it has now."""

    async def wins(replica: Replica) -> str:
        for number in range(3):
            await replica.players.apply_result(f"earlier-{number}", "war", player_id, Rating(), 1.0)
        return await replica.players.rating_text(player_id, "war")

    rating = Rating.parse(matchmaker.call(wins))
    assert rating.rating > 1600 and rating.games == 3
    return rating


def scored_loss(game: mm.GameView, side: str, opponent: Rating) -> None:
    """A newcomer's loss on `side` was scored against `opponent` (as the view shows it)."""
    loser = next(seat for seat in game.seats if seat.side == side)
    expected = Rating.parse(update(Rating(), [Result(opponent, 0.0)]).text())
    assert loser.rating_before.rating == 1500
    assert loser.rating_after.rating == pytest.approx(expected.rating, abs=1e-3)
    assert loser.rating_after.deviation == pytest.approx(expected.deviation, abs=1e-3)


@pytest.mark.integration
def test_a_rated_game_is_scored_against_the_rating_the_joiner_brought(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """The player who takes the open seat of a rated game sits with its rating of the
    moment: the creator, who loses, is scored against that rating, not a newcomer's."""
    two = players_of(matchmaker.address, clients, "south", "north")
    brought = won_earlier(matchmaker, two["north"].player_id)
    game = start_game(two, "war", rated=True)  # South creates, North joins
    two["south"].Resign(mm.ResignRequest(game_id=game.id))
    scored_loss(two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game, "south", brought)


@pytest.mark.integration
def test_a_rated_game_takes_the_creators_rating_as_of_the_start(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """A creator whose rating changed while its game waited (another game settled) sits
    with the rating of the moment the game starts: the joiner, who loses, is scored
    against that one."""
    two = players_of(matchmaker.address, clients, "south", "north")
    created = two["south"].CreateGame(mm.CreateGameRequest(game="war", side="south", rated=True))
    now = won_earlier(matchmaker, two["south"].player_id)
    two["north"].JoinGame(mm.JoinGameRequest(game_id=created.game.id))
    two["north"].Resign(mm.ResignRequest(game_id=created.game.id))
    scored_loss(two["south"].GetGame(mm.GetGameRequest(game_id=created.game.id)).game, "north", now)
