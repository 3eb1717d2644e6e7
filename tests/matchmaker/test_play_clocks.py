"""Time in play: a side out of time loses (two at once draw a game of two), players out of
time in a game of more are out and the caller looks again, the clocks stop when the game
ends, a game's end is committed once, and a move clears the warnings to a player away."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from matchmaker import keys
from matchmaker.errors import out_of_time_in_play
from matchmaker.play import Played
from matchmaker.record import GameRecord, GameStatus, RatingStatus
from matchmaker.server import Replica
from tests.matchmaker.conftest import Client, InProcessMatchmaker, players_of
from tests.matchmaker.helpers import (
    legal_actions,
    seconds,
    start_game,
)
from tests.matchmaker.test_multiplayer import NORTH, SOUTH, four_people, players_out
from tests.matchmaker.test_play import commits, finished_games
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm


def flags_checked_after(
    matchmaker: InProcessMatchmaker, game_id: str, late_ms: int
) -> tuple[Refusal, GameRecord]:
    """Look at a game's flags `late_ms` after its stored time: the refusal, and the game
    as stored afterwards."""

    async def check(replica: Replica) -> tuple[Refusal, GameRecord]:
        record, now = await replica.store.get(game_id)
        with pytest.raises(Refusal) as refused:
            await replica.play._check_flag(record, now + late_ms)
        after, _ = await replica.store.get(game_id)
        return refused.value, after

    return matchmaker.call(check)


def test_a_player_out_of_time_in_a_game_of_four_is_out_and_the_caller_looks_again(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """In a game of four, red's time runs out (a minute on, as the flag check is asked
    to see it): red is out, the others play on, and the request that found it out is
    refused as a version conflict (it was made against the state before), not GAME_OVER."""
    game, _ = four_people(matchmaker, clients, time_control=mm.TimeControl(base=seconds(60)))

    refusal, after = flags_checked_after(matchmaker, game.id, 61_000)
    assert after.status == GameStatus.RUNNING and "red" not in after.state.to_act
    assert after.version == game.version + 1
    assert (refusal.code, refusal.reason) == (Code.ABORTED, Reason.VERSION_CONFLICT)
    assert refusal.message == (
        f"red ran out of time and is out; the game goes on at version {after.version}: "
        "fetch it and try again"
    )
    assert refusal.metadata == {"current_version": str(after.version)}
    assert [name for name, _ in refusal.fields] == ["expected_version"]


def test_players_out_of_time_together_are_named_together_and_the_caller_looks_again() -> None:
    """Two sides whose clocks ran out at the same moment in a game that goes on are both
    out: the refusal names them together, in the plural, with the version to fetch."""
    refusal = out_of_time_in_play(("blue", "red"), 7)
    assert (refusal.code, refusal.reason) == (Code.ABORTED, Reason.VERSION_CONFLICT)
    assert refusal.message == (
        "blue and red ran out of time and are out; the game goes on at version 7: "
        "fetch it and try again"
    )
    assert refusal.metadata == {"current_version": "7"}
    assert [name for name, _ in refusal.fields] == ["expected_version"]


def test_players_out_of_time_together_in_a_game_of_four_are_all_out(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Red and black out of time at once, one of each alliance: each forfeits in turn, and
    as blue and green play on, the game goes on without both."""
    game, people = four_people(matchmaker, clients, time_control=mm.TimeControl(base=seconds(60)))

    async def flag_both(replica: Replica) -> Played:
        record, now = await replica.store.get(game.id)
        return await replica.play.flag(record, now, ["red", "black"])

    played = matchmaker.call(flag_both)
    assert played.game.status == GameStatus.RUNNING
    assert played.game.version == game.version + 2
    view = people["blue"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert players_out(view) == {"red", "black"}


def dawn_game(matchmaker: InProcessMatchmaker, clients: Callable[..., Client]) -> mm.GameView:
    """A rated Attack-at-Dawn game with one minute each: both sides deploy at once."""
    players = players_of(matchmaker.address, clients, "red", "black")
    game = start_game(
        players,
        "napoleonic",
        options={"scenario": "attack_at_dawn"},
        rated=True,
        time_control=mm.TimeControl(base=seconds(60)),
    )
    assert sorted(game.clock.running.split(",")) == ["black", "red"]
    return game


def test_two_clocks_out_together_draw_a_game_of_two_and_the_caller_is_told(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Both deploying sides are out of time when a request looks (a minute on): the game
    ends drawn on time with its clocks stopped, its watchers get the ending, its ratings
    wait for the sweeper (one cannot be read now), and the request is refused as GAME_OVER
    with how it ended; a second request that read the game before the first committed is
    told who ran out of time."""
    game = dawn_game(matchmaker, clients)
    reasons, endings = finished_games("TIME"), commits("ending")

    async def flag_both(replica: Replica) -> tuple[Refusal, Refusal, GameRecord, Any]:
        record, now = await replica.store.get(game.id)
        later = now + 61_000
        # Red's stored rating cannot be read: the ratings are left for the sweeper.
        red = record.seat_for("red")
        assert red is not None
        await replica.redis.hset(keys.player(red.player), f"rating:{record.rating_pool}", "garbled")
        with pytest.raises(Refusal) as first:
            await replica.play._check_flag(record, later)
        with pytest.raises(Refusal) as second:
            await replica.play._check_flag(record, later)  # read before the first ended it
        after, _ = await replica.store.get(game.id)
        entry = await replica.store.update_at(game.id, after.version)
        return first.value, second.value, after, entry

    first, second, after, entry = matchmaker.call(flag_both)
    message = "black and red ran out of time together: a draw"
    assert (first.code, first.reason) == (Code.FAILED_PRECONDITION, Reason.GAME_OVER)
    assert first.message == f"game {game.id} is over: {message}"
    assert (second.reason, second.message) == (
        Reason.GAME_OVER,
        f"game {game.id} is over: black and red ran out of time",
    )
    assert after.status == GameStatus.FINISHED and after.version == game.version + 1
    ending = after.outcome()
    assert ending is not None
    assert (ending.reason, ending.winner, ending.message) == (
        game_pb2.OUTCOME_REASON_TIME,
        "",
        message,
    )
    assert after.clock is not None and after.clock.running == ()
    assert set(after.clock.remaining) == {"red", "black"}
    assert all(left <= 0 for left in after.clock.remaining.values())
    assert after.clock.at_ms == after.updated_ms  # frozen as it ended
    assert after.rating_status == RatingStatus.PENDING  # rated: to be settled
    assert finished_games("TIME") == reasons + 1
    assert commits("ending") == endings + 1  # one commit: an ending of the matchmaker's
    update = mm.WatchGameResponse.FromString(entry.message)
    assert [(e.kind, e.text) for e in update.events] == [(game_pb2.EVENT_KIND_GAME_OVER, message)]


def test_one_clock_out_in_a_game_of_two_loses_it_for_that_side(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client]
) -> None:
    game = start_game(war_players, "war", time_control=mm.TimeControl(base=seconds(60)))

    refusal, after = flags_checked_after(matchmaker, game.id, 61_000)
    ending = after.outcome()
    assert ending is not None and after.status == GameStatus.FINISHED
    assert (ending.winner, ending.reason) == ("north", game_pb2.OUTCOME_REASON_TIME)
    assert refusal.reason == Reason.GAME_OVER
    assert refusal.message == f"game {game.id} is over: {ending.message}"


def test_a_game_that_ends_stops_the_clocks_without_an_increment(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client]
) -> None:
    """North resigns while South's clock runs: the clocks stop as they are, and South,
    whose turn ended with the game, earns no increment."""
    control = mm.TimeControl(base=seconds(60), increment=seconds(30))
    game = start_game(war_players, "war", time_control=control)
    war_players["north"].Resign(mm.ResignRequest(game_id=game.id))
    record, _ = matchmaker.call(lambda replica: replica.store.get(game.id))
    assert record.status == GameStatus.FINISHED and record.clock is not None
    assert record.clock.running == () and record.clock.remaining["north"] == 60_000
    assert 0 < record.clock.remaining["south"] <= 60_000


def test_players_out_of_time_in_a_game_of_four_forfeit_until_it_ends(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Red, blue and black out of time at once: red forfeits, then blue, which ends the
    game (the players left are all of one alliance, which wins); black, whose alliance
    won, is not made to forfeit."""
    game, people = four_people(matchmaker, clients, time_control=mm.TimeControl(base=seconds(60)))

    async def flag_three(replica: Replica) -> Played:
        record, now = await replica.store.get(game.id)
        return await replica.play.flag(record, now, ["red", "blue", "black"])

    played = matchmaker.call(flag_three)
    assert played.game.status == GameStatus.FINISHED
    assert played.game.version == game.version + 2
    outcome = played.game.outcome()
    assert outcome is not None and set(outcome.winners) == set(NORTH)
    # docs/multiplayer.md: the players left are all of one alliance, which wins.
    assert (outcome.winner, outcome.reason) == ("north", game_pb2.OUTCOME_REASON_ENEMIES_OUT)
    view = people["black"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert players_out(view) == set(SOUTH)


def test_a_player_flagged_first_by_another_caller_in_a_game_of_three_is_looked_at_again(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """In a game of three (`three_way`) a caller finding the player to act out of time,
    when another caller flagged it first, is told VERSION_CONFLICT (look again: the game
    goes on without that player), not that the game is over, as in a game of two."""
    people = {side: clients(matchmaker.address, side) for side in ("red", "black", "green")}
    created = people["red"].CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way"},
            side="red",
            time_control=mm.TimeControl(base=seconds(60)),
        )
    )
    for side in ("black", "green"):
        joined = people[side].JoinGame(mm.JoinGameRequest(invite_code=created.invite_code))
    game = joined.game
    assert game.status == mm.GAME_STATUS_RUNNING and len(game.seats) == 3
    assert list(game.state.to_act) == ["red"]  # red's clock runs

    async def flag_after_another(replica: Replica) -> tuple[GameRecord, Refusal]:
        record, now = await replica.store.get(game.id)
        later = now + 61_000  # the clock of the player to act has run out
        first = await replica.play.flag(record, later, ["red"])
        try:
            await replica.play._check_flag(record, later)  # the game as read before
        except Refusal as refusal:
            return first.game, refusal
        raise AssertionError("a fallen flag was not refused")

    first, refusal = matchmaker.call(flag_after_another)
    assert first.status != GameStatus.FINISHED  # red is out; black and green play on
    assert refusal.reason == Reason.VERSION_CONFLICT


def test_a_new_position_forgets_who_was_warned(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """Warnings to a player away are for one position: a move clears them, so whoever
    must act in the new one is warned afresh."""
    game = start_game(war_players, "war")

    async def move_after_a_warning(replica: Replica) -> GameRecord:
        record, now = await replica.store.get(game.id)
        warned = dataclasses.replace(record, warned={"south": now})
        await replica.store.set_unversioned(record, warned)
        assert (await replica.store.get(game.id))[0].warned == {"south": now}
        action = legal_actions(engine_stub, record.state)[0].action
        await replica.play.commit(warned, now, [action])
        after, _ = await replica.store.get(game.id)
        return after

    after = matchmaker.call(move_after_a_warning)
    assert after.version == game.version + 1 and after.warned == {}


def test_clocks_out_together_end_a_game_once(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """Ending a game of two whose clocks ran out together gives the ending alone (no
    moves); ending it again from the game as it was read before is a version conflict
    that names the version the game is at now."""
    game = dawn_game(matchmaker, clients)

    async def flag_twice(replica: Replica) -> tuple[Played, Refusal]:
        record, now = await replica.store.get(game.id)
        played = await replica.play.flag(record, now + 61_000, ["black", "red"])
        with pytest.raises(Refusal) as again:
            await replica.play.flag(record, now + 61_000, ["black", "red"])
        return played, again.value

    played, again = matchmaker.call(flag_twice)
    assert played.game.status == GameStatus.FINISHED and list(played.notations) == []
    # Ended at the moment the clocks were looked at, a minute on: the change's time, and
    # the game's end time, as stored.
    ended_at = played.game.updated_ms
    assert played.now_ms == played.game.ended_ms == ended_at
    stored, _ = matchmaker.call(lambda replica: replica.store.get(game.id, full=True))
    assert stored.ended_ms == stored.updated_ms == ended_at
    assert [e.kind for e in played.events] == [game_pb2.EVENT_KIND_GAME_OVER]
    assert (again.code, again.reason) == (Code.ABORTED, Reason.VERSION_CONFLICT)
    assert again.metadata == {"current_version": str(played.game.version)}
    # The version that was read, and the one the game is at now.
    assert again.message == (
        f"the game is at version {played.game.version}, not {game.version}: fetch it and try again"
    )
