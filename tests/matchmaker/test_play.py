"""Play on running games: how a finished game of two players changes a player's rating
(`play._pair_result`), what a caller is told of a game that is over or a side out of time,
and a submission committed twice under one idempotency key."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from matchmaker import keys
from matchmaker.errors import out_of_time_in_play
from matchmaker.play import Played, _pair_result, _team_result, require_running, seat_rating
from matchmaker.ratings import Rating, Result, team_update, update
from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, SeatKind
from matchmaker.seating import GameSpec
from matchmaker.server import Replica
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.test_multiplayer_service import ARRAYS, SALTS
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings, players_of
from tests.matchmaker.helpers import (
    captured_logs,
    expect_error,
    legal_actions,
    sealed_array,
    seconds,
    serving_engine,
    start_game,
)
from tests.matchmaker.test_multiplayer import NORTH, SIDES, SOUTH, four_people, players_out
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.status import ErrorDetails
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


def test_a_submission_committed_again_under_its_key_replays_the_first(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """Two commits of one submission that both got past the first look at its key (racing
    retries): the second finds the key in the commit and answers what the first did."""
    game = start_game(war_players, "war")
    record, now = matchmaker.call(lambda replica: replica.store.get(game.id))
    action = legal_actions(engine_stub, record.state)[0].action
    key = keys.game_idempotency(game.id, "south", "k1")

    async def twice(replica: Replica) -> tuple[Played, Played, Any]:
        commit = replica.play.commit
        first = await commit(record, now, [action], idempotency_key=key, print_="p1")
        again = await commit(record, now, [action], idempotency_key=key, print_="p1")
        return first, again, await replica.store.update_at(game.id, first.game.version)

    first, again, entry = matchmaker.call(twice)
    assert not first.replayed and again.replayed
    assert first.drawn is None  # a commit not asked for the drawing has none
    # The watchers' update says who acted, and what.
    update = mm.WatchGameResponse.FromString(entry.message)
    assert update.side == "south" and list(update.notations) == list(first.notations)
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


def commits(kind: str) -> float:
    """How many game changes of `kind` the matchmaker counted as committed."""
    sample = REGISTRY.get_sample_value("wargame_matchmaker_commits_total", {"kind": kind})
    return sample or 0.0


def test_a_submission_is_drawn_by_the_engine_call_that_applies_it(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    """The reply shows the new position with its pieces, and the engine was asked once: the
    apply draws it, no second call asks for the drawing of the new position."""
    game = start_game(war_players, "war")
    action = legal_actions(engine_stub, game.state)[0].action
    applied, drawings = engine_calls("ApplyActions"), engine_calls("NewGame")
    committed = commits("actions")
    reply = war_players["south"].SubmitActions(
        mm.SubmitActionsRequest(game_id=game.id, expected_version=game.version, actions=[action])
    )
    assert reply.game.version == game.version + 1 and reply.game.state.pieces
    assert commits("actions") == committed + 1  # counted as a commit of actions
    assert reply.game.state.position != game.state.position
    assert engine_calls("ApplyActions") == applied + 1
    assert engine_calls("NewGame") == drawings


async def red_seals_its_array(replica: Replica) -> tuple[str, Any, mm.WatchGameResponse]:
    """Red seals its array in a new game of Attack at Dawn in sealed mode: the seal's
    notation, red's move as the commit returned it, and the update stored for watchers."""
    game, _ = await replica.seating.create(
        GameSpec("napoleonic", {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}),
        [Seat("red", "p-red", "Red"), Seat("black", "p-black", "Black")],
    )
    array = f"seal {sealed_array('red')}"
    now = await replica.store.time_ms()
    played = await replica.play.commit(game, now, [game_pb2.Action(side="red", notation=array)])
    entry = await replica.store.update_at(game.id, played.game.version)
    assert entry is not None
    return array, played.game.moves[-1], mm.WatchGameResponse.FromString(entry.message)


def test_a_hidden_action_comes_back_from_its_commit_with_its_full_notation(
    redis_url: str, engine_address: str
) -> None:
    """A sealed Attack-at-Dawn array is stored sealed, but the commit's own result (what
    its caller goes on with) holds the author's full notation, not the public stand-in;
    watchers are told of the sealing alone."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, engine_address))
        try:
            array, last, update = await red_seals_its_array(replica)
            assert (last.side, last.notation) == ("red", array) and last.public != array
            # What others see is the engine's public notation of a seal (10.1: no squares).
            assert last.public == "seal (array hidden until both are in)"
            # Watchers learn that red sealed its deployment, nothing of the engine's text.
            assert [(e.kind, e.side, e.text, list(e.cells)) for e in update.events] == [
                (game_pb2.EVENT_KIND_DEPLOYMENT_SEALED, "red", "red's deployment is sealed", [])
            ]
        finally:
            await replica.close()

    asyncio.run(scenario())


def field_names(details: ErrorDetails) -> list[str]:
    """The request fields a refusal names."""
    return [name for name, _ in details.fields]


def test_a_submission_is_checked_before_the_game_is_read(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
    engine_stub: Any,
) -> None:
    """What a submission must carry, refused with the field at fault: a game id that could
    be one, some actions but no more than the limit, a key of at most 200 characters; and
    the caller's token is checked even so."""
    matchmaker = replica(max_actions_per_submit=2)
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")
    first = legal_actions(engine_stub, game.state)[0].action

    def submit(client: Client, *actions: game_pb2.Action, **request: Any) -> Any:
        fields: dict[str, Any] = {"game_id": game.id, "expected_version": game.version}
        fields.update(request)
        return client.SubmitActions(mm.SubmitActionsRequest(actions=list(actions), **fields))

    south = players["south"]
    too_many = expect_error(
        lambda: submit(south, first, first, first), Code.INVALID_ARGUMENT, "TOO_MANY_ACTIONS"
    )
    assert too_many.message == "3 actions; at most 2" and field_names(too_many) == ["actions"]
    # As many as the limit allows pass on to the engine, which judges the second move.
    at_limit = expect_error(lambda: submit(south, first, first), Code.FAILED_PRECONDITION)
    assert at_limit.message == "it is not south's turn: north to act"
    assert at_limit.metadata == {"index": "1"}  # the engine's word on the second action
    none = expect_error(lambda: submit(south), Code.INVALID_ARGUMENT, "MISSING_FIELD")
    assert field_names(none) == ["actions"]
    no_id = expect_error(lambda: submit(south, first, game_id=""), Code.INVALID_ARGUMENT)
    assert no_id.reason == "MISSING_FIELD" and field_names(no_id) == ["game_id"]
    bad_id = expect_error(
        lambda: submit(south, first, game_id="no such game"), Code.NOT_FOUND, "SESSION_NOT_FOUND"
    )
    assert "no such game" in bad_id.message and field_names(bad_id) == ["game_id"]
    long_key = expect_error(
        lambda: submit(south, first, idempotency_key="k" * 201),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    assert long_key.message == "the idempotency key is longer than 200 characters"
    assert field_names(long_key) == ["idempotency_key"]
    # Without a token a faulty request is refused for the token, not for its fault.
    anonymous = clients(matchmaker.address)
    expect_error(lambda: submit(anonymous), Code.UNAUTHENTICATED, "TOKEN_MISSING")
    # Nothing of that changed the game; a key of 200 characters is kept.
    played = submit(south, first, idempotency_key="k" * 200)
    assert played.game.version == game.version + 1 and not played.replayed
    again = submit(south, first, idempotency_key="k" * 200)
    assert again.replayed and again.game.version == played.game.version


def test_each_action_of_a_submission_is_checked_with_its_place(
    matchmaker: InProcessMatchmaker,
    war_players: dict[str, Client],
    clients: Callable[..., Client],
    engine_stub: Any,
) -> None:
    """Refusals name the action at fault and say what is wrong with it: no kind, another
    player's side, out of turn, a reason to resign that only the matchmaker gives, a stale
    version, a game unknown or not the caller's."""
    south, north = war_players["south"], war_players["north"]
    game = start_game(war_players, "war")
    first = legal_actions(engine_stub, game.state)[0].action

    def submit(client: Client, *actions: game_pb2.Action, version: int = game.version) -> Any:
        return client.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id, expected_version=version, actions=list(actions)
            )
        )

    empty = expect_error(lambda: submit(south, first, game_pb2.Action()), Code.INVALID_ARGUMENT)
    assert empty.reason == "MISSING_FIELD" and field_names(empty) == ["actions[1].kind"]
    theirs = expect_error(
        lambda: submit(north, game_pb2.Action(offer_draw=game_pb2.OfferDraw()), first),
        Code.PERMISSION_DENIED,
        "NOT_A_PLAYER",
    )
    assert theirs.message == "you play north, not south"
    assert field_names(theirs) == ["actions[1].side"]
    as_north = game_pb2.Action(side="north", notation="a8-a7")
    early = expect_error(lambda: submit(north, as_north), Code.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    assert early.message == "it is not north's turn: south to act"
    assert field_names(early) == ["actions[0]"]
    by_time = game_pb2.Action(resign=game_pb2.Resign(reason=game_pb2.OUTCOME_REASON_TIME))
    timed = expect_error(lambda: submit(south, by_time), Code.INVALID_ARGUMENT)
    assert (
        timed.message == "players resign with RESIGNATION; TIME and ABANDONED are the matchmaker's"
    )
    assert field_names(timed) == ["actions[0].resign.reason"]
    stale = expect_error(
        lambda: submit(south, first, version=game.version - 1), Code.ABORTED, "VERSION_CONFLICT"
    )
    assert stale.message == (
        f"the game is at version {game.version}, not {game.version - 1}: fetch it and try again"
    )
    assert field_names(stale) == ["expected_version"]
    assert stale.metadata["current_version"] == str(game.version)
    stranger = clients(matchmaker.address, "Stranger")
    unseated = expect_error(lambda: submit(stranger, first), Code.PERMISSION_DENIED)
    assert unseated.message == f"you hold no seat in game {game.id}"
    unknown_id = "g" + "0" * (len(game.id) - 1)
    unknown = expect_error(
        lambda: south.SubmitActions(
            mm.SubmitActionsRequest(game_id=unknown_id, expected_version=2, actions=[first])
        ),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )
    assert unknown.message.endswith("(unknown or expired)") and unknown_id in unknown.message
    assert field_names(unknown) == ["game_id"]
    assert south.GetGame(mm.GetGameRequest(game_id=game.id)).game.version == game.version
    # Offers and resignations need not wait for the turn; a side left out is the caller's.
    offer = game_pb2.Action(offer_draw=game_pb2.OfferDraw())
    offered = submit(north, offer).game
    assert offered.version == game.version + 1 and offered.state.draw_offer == "north"
    resigned = submit(north, game_pb2.Action(resign=game_pb2.Resign()), version=offered.version)
    outcome = resigned.game.outcome
    assert resigned.game.status == mm.GAME_STATUS_FINISHED
    assert (outcome.winner, outcome.reason) == ("south", game_pb2.OUTCOME_REASON_RESIGNATION)


def test_a_game_waiting_for_players_refuses_a_submission_by_its_id(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    south = war_players["south"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    first = legal_actions(engine_stub, created.state)[0].action
    waiting = expect_error(
        lambda: south.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=created.id, expected_version=created.version, actions=[first]
            )
        ),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )
    assert waiting.message == f"game {created.id} is waiting for players"


def test_a_resignation_by_someone_without_a_seat_names_the_game(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], clients: Callable[..., Client]
) -> None:
    game = start_game(war_players, "war")
    stranger = clients(matchmaker.address, "Stranger")
    refused = expect_error(
        lambda: stranger.Resign(mm.ResignRequest(game_id=game.id)),
        Code.PERMISSION_DENIED,
        "NOT_A_PLAYER",
    )
    assert refused.message == f"you hold no seat in game {game.id}"


def finished_games(reason: str) -> float:
    """How many games the matchmaker counted as finished for `reason`."""
    sample = REGISTRY.get_sample_value(
        "wargame_matchmaker_games_finished_total", {"reason": reason}
    )
    return sample or 0.0


def test_a_finished_game_is_counted_by_its_reason_and_logged_with_its_outcome(
    war_players: dict[str, Client],
) -> None:
    game = start_game(war_players, "war")
    before = finished_games("RESIGNATION")
    with captured_logs() as logs:
        ended = war_players["north"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED and ended.outcome.message
    assert finished_games("RESIGNATION") == before + 1
    finished = [
        entry.get("outcome")
        for entry in logs
        if entry.get("event") == "game finished" and entry.get("game_id") == game.id
    ]
    assert finished == [ended.outcome.message]


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


def test_a_finished_game_leaves_the_lobby_frees_its_players_and_is_no_longer_due(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """A public game ends: the lobby no longer lists it among running games, its players
    may sit in another (at most one unfinished game each here), the sweeper has nothing
    left to do for it."""
    matchmaker = replica(max_open_games=1)
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")
    south = players["south"]

    def listed() -> bool:
        running = south.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_RUNNING)).games
        return any(view.id == game.id for view in running)

    async def kept(replica: Replica) -> tuple[bool, float | None, list[bool]]:
        """Whether the lobby's running list holds the game, its due time, and whether each
        player's unfinished games count it."""
        rows = await replica.store.list_page([GameStatus.RUNNING], ["war"], 0, 50)
        due: float | None = await replica.redis.zscore(replica.store._due(game.id), game.id)
        counted = [
            await replica.redis.zscore(keys.player_games(client.player_id), game.id) is not None
            for client in players.values()
        ]
        return any(row[2] == game.id for row in rows), due, counted

    assert listed()
    assert matchmaker.call(kept)[0] and matchmaker.call(kept)[2] == [True, True]
    expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest(game="war")),
        Code.RESOURCE_EXHAUSTED,
        "TOO_MANY_GAMES",
    )
    players["north"].Resign(mm.ResignRequest(game_id=game.id))
    # (The store first: browsing also drops a finished game it comes across.)
    assert matchmaker.call(kept) == (False, None, [False, False])
    assert not listed()
    for client in players.values():
        assert client.CreateGame(mm.CreateGameRequest(game="war")).game.status == (
            mm.GAME_STATUS_OPEN
        )


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

    async def settle_again(replica: Replica) -> GameRecord:
        record, _ = await replica.store.get(game.id)
        kept = dataclasses.replace(
            record,
            seats=[dataclasses.replace(s, rating_before="", rating_after="") for s in record.seats],
            rating_status=RatingStatus.PENDING,
        )
        await replica.store.set_unversioned(record, kept)  # as that settlement left it
        await replica.play.settle_ratings(kept)
        after, _ = await replica.store.get(game.id)
        return after

    after = matchmaker.call(settle_again)
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


def test_a_key_sent_again_replays_only_the_same_submission_at_the_same_version(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    """A retried submission gets the first one's answer; the same key on other actions or
    at another version is refused with the key named as the fault."""
    south = war_players["south"]
    game = start_game(war_players, "war")
    first, other = (entry.action for entry in legal_actions(engine_stub, game.state)[:2])

    def submit(action: game_pb2.Action, version: int = game.version) -> Any:
        return south.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id, expected_version=version, idempotency_key="k", actions=[action]
            )
        )

    played = submit(first)
    committed = commits("actions")
    again = submit(first)
    assert again.replayed and list(again.notations) == list(played.notations)
    assert commits("actions") == committed  # a replay commits nothing
    assert [(e.kind, e.text) for e in again.events] == [(e.kind, e.text) for e in played.events]
    for attempt in (lambda: submit(other), lambda: submit(first, game.version + 1)):
        reused = expect_error(attempt, Code.INVALID_ARGUMENT, "IDEMPOTENCY_KEY_REUSED")
        assert reused.message == "this idempotency key was used for a different submission"
        assert field_names(reused) == ["idempotency_key"]


def test_a_sealed_array_sent_again_replays_its_full_notation_to_its_author(
    napoleonic_players: dict[str, Client],
) -> None:
    """The replay of a hidden action answers its author with what was sent, not the public
    stand-in others see."""
    red = napoleonic_players["red"]
    game = start_game(
        napoleonic_players,
        "napoleonic",
        options={"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
    )
    array = f"seal {sealed_array('red')}"
    request = mm.SubmitActionsRequest(
        game_id=game.id,
        expected_version=game.version,
        idempotency_key="seal-1",
        actions=[game_pb2.Action(side="red", notation=array)],
    )
    played = red.SubmitActions(request)
    again = red.SubmitActions(request)
    assert not played.replayed and again.replayed
    assert list(again.notations) == list(played.notations) == [array]


def test_a_server_made_action_the_engine_refuses_is_refused_not_retried(
    war_players: dict[str, Client],
) -> None:
    """North offers a draw twice: the second offer is the engine's refusal, at once, and
    the game does not change."""
    north = war_players["north"]
    game = start_game(war_players, "war")
    offered = north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)).game
    refused = expect_error(
        lambda: north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)), Code.FAILED_PRECONDITION
    )
    assert refused.reason != "VERSION_CONFLICT" and "kept changing" not in refused.message
    assert north.GetGame(mm.GetGameRequest(game_id=game.id)).game.version == offered.version


def test_a_server_made_action_without_a_try_left_says_the_game_kept_changing(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """With no optimistic retry allowed (`submit_retries` 0), a resignation is never
    committed: the caller is told to try again, and the game goes on."""
    matchmaker = replica()
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")  # joining is a server-made commit too: then no retry

    async def no_retries(replica: Replica) -> None:
        replica.play.settings = dataclasses.replace(replica.play.settings, submit_retries=0)

    matchmaker.call(no_retries)
    refused = expect_error(
        lambda: players["north"].Resign(mm.ResignRequest(game_id=game.id)),
        Code.ABORTED,
        "VERSION_CONFLICT",
    )
    assert refused.message == "the game kept changing; try again"
    view = players["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert view.status == mm.GAME_STATUS_RUNNING and view.version == game.version


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


def test_a_commit_replayed_after_its_update_left_the_stream_answers_the_game_alone(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """A submission committed again under its key once its update is no longer kept in the
    game's stream (trimmed in a long game) still replays: the game as the first commit
    left it, with no moves or events, as there are none left to tell."""
    game = start_game(war_players, "war")
    record, now = matchmaker.call(lambda replica: replica.store.get(game.id))
    action = legal_actions(engine_stub, record.state)[0].action
    key = keys.game_idempotency(game.id, "south", "k1")

    async def twice(replica: Replica) -> tuple[Played, Played]:
        commit = replica.play.commit
        first = await commit(record, now, [action], idempotency_key=key, print_="p1")
        stream = keys.game_stream(game.id)
        assert await replica.redis.xdel(stream, f"{first.game.version}-0") == 1
        again = await commit(record, now, [action], idempotency_key=key, print_="p1")
        return first, again

    first, again = matchmaker.call(twice)
    assert again.replayed and again.game.version == first.game.version
    assert list(again.notations) == [] and list(again.events) == []


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


def test_a_submission_sent_again_makes_the_game_due_again_if_its_first_commit_did_not(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], engine_stub: Any
) -> None:
    """A first attempt that stopped after its commit, before the sweeper's due index knew
    of the game: sending the submission again replays it and makes the running game due
    again (the sweeper must still look whether north, now to act, is there)."""
    game = start_game(war_players, "war")
    action = legal_actions(engine_stub, game.state)[0].action
    request = mm.SubmitActionsRequest(
        game_id=game.id, expected_version=game.version, idempotency_key="k", actions=[action]
    )
    played = war_players["south"].SubmitActions(request)

    async def due(replica: Replica) -> float | None:
        return await replica.redis.zscore(replica.store._due(game.id), game.id)

    async def forget(replica: Replica) -> None:
        assert await replica.redis.zrem(replica.store._due(game.id), game.id) == 1

    matchmaker.call(forget)
    assert matchmaker.call(due) is None
    again = war_players["south"].SubmitActions(request)
    assert again.replayed and again.game.version == played.game.version
    assert matchmaker.call(due) is not None


@pytest.fixture(scope="module")
def leaky_engine() -> Iterator[str]:
    """A real engine that leaves a seal's array in its public notation (the public
    notation it gives is the full one): the address it serves on."""
    from engine_service.rules import rulesets
    from engine_service.service import RulesEngine

    class Leaky(RulesEngine):
        def ApplyActions(self, request: Any, context: Any) -> Any:
            reply = super().ApplyActions(request, context)
            for applied in reply.applied:
                applied.public_notation = applied.notation
            return reply

    with serving_engine(Leaky(rulesets(TEST_SEAL_KEY))) as address:
        yield address


def test_a_sealed_array_is_hidden_from_others_even_if_the_engine_leaves_it_public(
    redis_url: str, leaky_engine: str
) -> None:
    """Defence in depth: an engine whose public notation of a seal still holds the array
    does not make others see it; they see that a seal was made, and its author keeps the
    full notation."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, leaky_engine))
        try:
            array, last, update = await red_seals_its_array(replica)
            assert (last.side, last.notation, last.public) == ("red", array, "seal (hidden)")
            assert list(update.notations) == ["seal (hidden)"]
        finally:
            await replica.close()

    asyncio.run(scenario())


def test_a_side_that_has_acted_is_told_every_side_still_to_act(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """In a secret deployment of three (10.1: every player commits), red has committed
    and submits again: refused before the engine is asked, naming black and green, both
    still to commit, joined by "and"."""
    people = {side: clients(matchmaker.address, side) for side in ("red", "black", "green")}
    created = people["red"].CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way", "deployment": "attack_at_dawn"},
            side="red",
        )
    )
    for side in ("black", "green"):
        joined = people[side].JoinGame(
            mm.JoinGameRequest(invite_code=created.invite_code, side=side)
        )
    game = joined.game
    assert list(game.state.to_act) == ["red", "black", "green"]
    commit = game_pb2.Action(notation=f"commit {ARRAYS['red']} salt {SALTS['red']}")
    committed = (
        people["red"]
        .SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id, expected_version=game.version, actions=[commit]
            )
        )
        .game
    )
    assert list(committed.state.to_act) == ["black", "green"]
    again = expect_error(
        lambda: people["red"].SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id, expected_version=committed.version, actions=[commit]
            )
        ),
        Code.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    assert again.message == "it is not red's turn: black and green to act"
    assert field_names(again) == ["actions[0]"]
