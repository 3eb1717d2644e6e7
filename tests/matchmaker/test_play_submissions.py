"""Submissions: checked before the game is read (each action with its place), drawn by the
engine call that applies them, committed once under an idempotency key and replayed to a
caller who sends it again, hidden actions and sealed arrays shown in full only to their
author, and every side still to act told."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from prometheus_client import REGISTRY

from matchmaker import keys
from matchmaker.play import Played
from matchmaker.record import Seat
from matchmaker.seating import GameSpec
from matchmaker.server import Replica
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.test_multiplayer_service import ARRAYS, SALTS
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings, players_of
from tests.matchmaker.helpers import (
    expect_error,
    legal_actions,
    sealed_array,
    serving_engine,
    start_game,
)
from tests.matchmaker.test_play import commits
from wargame.runtime.refusal import Code
from wargame.runtime.status import ErrorDetails
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm


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
