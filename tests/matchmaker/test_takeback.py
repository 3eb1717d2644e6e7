"""Takeback against the bot through the Matchmaker RPC, with a real Redis and a real
engine: the player's last action and the bot's answer are undone (state, moves, record and
the actions list all cut together, watchers told), and what may not be taken back (against
people, nothing yet, a stale version, a secret deployment) is refused and loses nothing."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.clocks import Clock
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import (
    Watcher,
    expect_error,
    legal_actions,
    sealed_array,
    seconds,
    start_game,
    submit_text,
    sync_client,
    wait_for,
)
from wargame.v1 import engine_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


def _bot_game(player: Client, game: str, side: str, **request: Any) -> mm.GameView:
    view: mm.GameView = player.CreateGame(
        mm.CreateGameRequest(
            game=game, side=side, opponent=mm.SEAT_KIND_BOT, bot_time=seconds(0.05), **request
        )
    ).game
    return view


def _my_turn(player: Client, game_id: str) -> mm.GameView:
    """The game once the bot has answered and the player is to act."""

    def ready() -> mm.GameView | None:
        view: mm.GameView = player.GetGame(mm.GetGameRequest(game_id=game_id)).game
        return view if view.your_side in view.state.to_act else None

    found: mm.GameView = wait_for(ready)
    return found


def _play(player: Client, engine: Any, view: mm.GameView, pick: int = 0) -> mm.GameView:
    action = legal_actions(engine, view.state)[pick].action
    reply = player.SubmitActions(
        mm.SubmitActionsRequest(game_id=view.id, expected_version=view.version, actions=[action])
    )
    return _my_turn(player, reply.game.id)


def test_a_takeback_undoes_the_players_move_and_the_bots_answer_record_and_all(
    ada: Client, engine_stub: Any, matchmaker: InProcessMatchmaker
) -> None:
    start = _my_turn(ada, _bot_game(ada, "war", "south").id)
    first = _play(ada, engine_stub, start, pick=0)
    second = _play(ada, engine_stub, first, pick=1)
    assert len(second.moves) == 4
    spectator = Client(matchmaker.address)
    try:
        watcher = Watcher(spectator, start.id, after=second.version)
        reply = ada.TakeBack(mm.TakeBackRequest(game_id=start.id, expected_version=second.version))
        assert list(reply.taken_back) == list(second.moves[2:])
        back = reply.game
        assert back.version == second.version + 1 and back.status == mm.GAME_STATUS_RUNNING
        assert list(back.moves) == list(first.moves)
        assert back.state.position == first.state.position and list(back.state.to_act) == ["south"]
        (update,) = watcher.until(back.version)
        assert update.side == "south" and list(update.taken_back) == list(second.moves[2:])
        assert list(update.game.moves) == list(first.moves)
        # A retry of the same takeback takes nothing more back.
        expect_error(
            lambda: ada.TakeBack(
                mm.TakeBackRequest(game_id=start.id, expected_version=second.version)
            ),
            Code.ABORTED,
            "VERSION_CONFLICT",
        )
        # Play on: the record holds the kept moves and the new ones, none of those undone.
        again = _play(ada, engine_stub, back, pick=2)
        record = ada.GetRecord(mm.GetRecordRequest(game_id=start.id)).record
        for notation in again.moves:
            assert notation in record
        replay = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
        assert replay.final_state.position == again.state.position
    finally:
        spectator.close()


def test_takebacks_are_refused_against_people_before_any_action_and_in_a_finished_game(
    ada: Client, war_players: dict[str, Client], engine_stub: Any
) -> None:
    south = war_players["south"]
    against_people = start_game(war_players, "war")
    submit_text(
        south, against_people.id, legal_actions(engine_stub, against_people.state)[0].notation
    )
    refused = expect_error(
        lambda: south.TakeBack(mm.TakeBackRequest(game_id=against_people.id)),
        Code.FAILED_PRECONDITION,
        "UNDO_NOT_ALLOWED",
    )
    assert refused.message == "takebacks are only for unrated games against the bot"
    fresh = _my_turn(ada, _bot_game(ada, "war", "south").id)
    expect_error(
        lambda: ada.TakeBack(mm.TakeBackRequest(game_id=fresh.id)),
        Code.FAILED_PRECONDITION,
        "UNDO_NOT_ALLOWED",
    )
    assert ada.GetGame(mm.GetGameRequest(game_id=fresh.id)).game.version == fresh.version
    ada.Resign(mm.ResignRequest(game_id=fresh.id))
    expect_error(
        lambda: ada.TakeBack(mm.TakeBackRequest(game_id=fresh.id)),
        Code.FAILED_PRECONDITION,
        "GAME_OVER",
    )


def test_a_secret_deployment_is_never_taken_back_but_the_moves_after_it_are(
    ada: Client, engine_stub: Any
) -> None:
    options = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    game = _bot_game(ada, "napoleonic", "red", options=options)
    submit_text(ada, game.id, f"seal {sealed_array('red')}")
    laid_out = _my_turn(ada, game.id)
    refused = expect_error(
        lambda: ada.TakeBack(mm.TakeBackRequest(game_id=game.id)),
        Code.FAILED_PRECONDITION,
        "UNDO_NOT_ALLOWED",
    )
    assert "secret deployment" in refused.message and "10.1" in refused.message
    moved = ada.SubmitActions(
        mm.SubmitActionsRequest(
            game_id=game.id,
            expected_version=laid_out.version,
            actions=[legal_actions(engine_stub, laid_out.state)[0].action],
        )
    ).game
    back = ada.TakeBack(mm.TakeBackRequest(game_id=game.id)).game
    assert back.state.position == laid_out.state.position
    assert list(back.moves) == list(laid_out.moves) and moved.version < back.version


def _stored_clock(redis_url: str, game_id: str) -> Clock:
    """The game's clock as its hash keeps it (time left per side when last committed)."""
    client: Any = sync_client(redis_url)
    try:
        return Clock.from_json(client.hget(keys.game(game_id), "clock"))
    finally:
        client.close()


def test_a_takeback_gives_back_the_time_spent_since_the_position_it_returns_to(
    ada: Client, engine_stub: Any, redis_url: str
) -> None:
    hour = mm.TimeControl(base=seconds(3600))
    start = _my_turn(ada, _bot_game(ada, "war", "south", time_control=hour).id)
    first = _play(ada, engine_stub, start, pick=0)
    reading = _stored_clock(redis_url, first.id)  # as the position after the bot's answer
    assert reading.running == ("south",)

    def spent() -> bool:  # South thinks until its clock shows time spent
        view = ada.GetGame(mm.GetGameRequest(game_id=first.id)).game
        return view.clock.remaining["south"].ToMilliseconds() < reading.remaining["south"] - 200

    wait_for(spent)
    second = _play(ada, engine_stub, first, pick=1)
    assert _stored_clock(redis_url, first.id).remaining["south"] < reading.remaining["south"]
    ada.TakeBack(mm.TakeBackRequest(game_id=first.id, expected_version=second.version))
    back = _stored_clock(redis_url, first.id)
    assert back.remaining == reading.remaining and back.running == ("south",)
    # Back to the start: each side's whole base time.
    ada.TakeBack(mm.TakeBackRequest(game_id=first.id))
    assert _stored_clock(redis_url, first.id).remaining == {"south": 3_600_000, "north": 3_600_000}
