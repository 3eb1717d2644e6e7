"""Play on running games: how a finished game of two players changes a player's rating
(`play._pair_result`), what a caller is told of a game that is over or a side out of time,
and a submission committed twice under one idempotency key."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from matchmaker import keys
from matchmaker.play import Played, _pair_result, require_running
from matchmaker.ratings import Rating, Result, update
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.server import Replica
from matchmaker.sessions import GameSpec
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings
from tests.matchmaker.helpers import (
    captured_logs,
    legal_actions,
    sealed_array,
    seconds,
    start_game,
)
from tests.matchmaker.test_multiplayer import four_people, players_out
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm

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


def refusal_of(game: GameRecord) -> Refusal:
    with pytest.raises(Refusal) as refused:
        require_running(game)
    return refused.value


def test_a_game_over_is_refused_with_how_it_ended() -> None:
    ended = game_pb2.GameState(outcome=game_pb2.Outcome(winner="south", message="south wins"))
    finished = dataclasses.replace(
        game_of(), status=GameStatus.FINISHED, state_bytes=ended.SerializeToString()
    )
    refusal = refusal_of(finished)
    assert (refusal.code, refusal.reason) == (Code.FAILED_PRECONDITION, Reason.GAME_OVER)
    assert refusal.message == "game g1 is over: south wins"
    # Closed before anyone played: the reason it was closed; else merely finished.
    closed = dataclasses.replace(game_of(), status=GameStatus.FINISHED, closed="nobody joined")
    assert refusal_of(closed).message == "game g1 is over: nobody joined"
    bare = dataclasses.replace(game_of(), status=GameStatus.FINISHED)
    assert refusal_of(bare).message == "game g1 is over: finished"


def test_a_player_out_of_time_in_a_game_of_four_is_out_and_the_caller_looks_again(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """In a game of four, red's time runs out (a minute on, as the flag check is asked
    to see it): red is out, the others play on, and the request that found it out is
    refused as a version conflict (it was made against the state before), not GAME_OVER."""
    game, _ = four_people(matchmaker, clients, time_control=mm.TimeControl(base=seconds(60)))

    async def flag_red(replica: Replica) -> tuple[Refusal, GameRecord]:
        record, now = await replica.store.get(game.id)
        with pytest.raises(Refusal) as refused:
            await replica.play._check_flag(record, now + 61_000)
        after, _ = await replica.store.get(game.id)
        return refused.value, after

    refusal, after = matchmaker.call(flag_red)
    assert after.status == GameStatus.RUNNING and "red" not in after.state.to_act
    assert after.version == game.version + 1
    assert (refusal.code, refusal.reason) == (Code.ABORTED, Reason.VERSION_CONFLICT)
    assert refusal.message == (
        f"red ran out of time and is out; the game goes on at version {after.version}: "
        "fetch it and try again"
    )
    assert refusal.metadata == {"current_version": str(after.version)}


def test_a_submission_committed_again_under_its_key_replays_the_first(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """Two commits of one submission that both got past the first look at its key (racing
    retries): the second finds the key in the commit and answers what the first did."""
    game = start_game(war_players, "war")
    record, now = matchmaker.call(lambda replica: replica.store.get(game.id))
    action = legal_actions(engine_stub, record.state)[0].action
    key = keys.game_idempotency(game.id, "south", "k1")

    async def twice(replica: Replica) -> tuple[Played, Played]:
        commit = replica.play.commit
        first = await commit(record, now, [action], idempotency_key=key, print_="p1")
        again = await commit(record, now, [action], idempotency_key=key, print_="p1")
        return first, again

    first, again = matchmaker.call(twice)
    assert not first.replayed and again.replayed
    assert again.game.id == game.id and again.game.version == first.game.version
    assert list(again.notations) == list(first.notations)


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


def engine_calls(rpc: str) -> float:
    """How many calls of `rpc` the in-process engine has answered OK."""
    return REGISTRY.get_sample_value("wargame_engine_rpcs_total", {"rpc": rpc, "code": "OK"}) or 0.0


def test_a_submission_is_drawn_by_the_engine_call_that_applies_it(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    """The reply shows the new position with its pieces, and the engine was asked once: the
    apply draws it, no second call asks for the drawing of the new position."""
    game = start_game(war_players, "war")
    action = legal_actions(engine_stub, game.state)[0].action
    applied, drawings = engine_calls("ApplyActions"), engine_calls("NewGame")
    reply = war_players["south"].SubmitActions(
        mm.SubmitActionsRequest(game_id=game.id, expected_version=game.version, actions=[action])
    )
    assert reply.game.version == game.version + 1 and reply.game.state.pieces
    assert reply.game.state.position != game.state.position
    assert engine_calls("ApplyActions") == applied + 1
    assert engine_calls("NewGame") == drawings


def test_a_hidden_action_comes_back_from_its_commit_with_its_full_notation(
    redis_url: str, engine_address: str
) -> None:
    """A sealed Attack-at-Dawn array is stored sealed, but the commit's own result (what
    its caller goes on with) holds the author's full notation, not the public stand-in."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, engine_address))
        try:
            game, _ = await replica.sessions.create(
                GameSpec(
                    "napoleonic", {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
                ),
                [Seat("red", "p-red", "Red"), Seat("black", "p-black", "Black")],
            )
            array = f"seal {sealed_array('red')}"
            now = await replica.store.time_ms()
            played = await replica.play.commit(
                game, now, [game_pb2.Action(side="red", notation=array)]
            )
            last = played.game.moves[-1]
            assert (last.side, last.notation) == ("red", array) and last.public != array
        finally:
            await replica.close()

    asyncio.run(scenario())
