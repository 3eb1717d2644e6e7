"""Integrity tags on the position texts the engine writes (`engine_service.convert.tags`).

A text whose tag this engine's key made is read without `check_state`; any other text, a
forged tag, or a tag made under another key is checked in full, so a state that could not
arise in play is still refused. The engine under test is the session's in-process engine
(keyed by the test seal key, as a served engine is) and a real `wargame-engine` process with
the same seal key, as another replica.
"""

from __future__ import annotations

import grpc
import pytest

from engine_service.convert import conversions
from engine_service.convert.tags import TAG_BYTES, PositionTags, tag_key
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from tests.conftest import TEST_SEAL_KEY
from tests.servers import ServiceProcess
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

from .conftest import refused

# The initial position of the Game of War with a second South King on rank 6: every word
# parses, but no game reaches it (an army has one King), which only `check_state` says.
TWO_KINGS = "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/4K5/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM S FF:ff"
ENGINE_TAGS = PositionTags(tag_key(TEST_SEAL_KEY))


def legal(state: game_pb2.GameState) -> engine_pb2.ListLegalActionsRequest:
    return engine_pb2.ListLegalActionsRequest(state=state)


def war_state(position: str, tag: bytes = b"") -> game_pb2.GameState:
    return game_pb2.GameState(game="war", position=position, position_tag=tag)


@pytest.mark.parametrize("game", ["war", "battle", "napoleonic"])
def test_every_state_the_engine_writes_carries_its_tag(
    stub: engine_pb2_grpc.RulesEngineStub, game: str
) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game=game)).state
    assert len(state.position_tag) == TAG_BYTES
    assert ENGINE_TAGS.vouches(game, state.position, state.position_tag)
    assert stub.ListLegalActions(legal(state)).actions


def test_the_conversions_tag_with_the_key_they_are_given() -> None:
    games = rulesets(TEST_SEAL_KEY)
    war = games["war"]
    game = Game(war, war.new_game(war.resolve_options({})))
    keyed = conversions(games, tag_key(TEST_SEAL_KEY)).game_to_proto(game)
    assert ENGINE_TAGS.vouches("war", keyed.position, keyed.position_tag)
    unkeyed = conversions(games).game_to_proto(game)  # this process's own key
    assert not ENGINE_TAGS.vouches("war", unkeyed.position, unkeyed.position_tag)


def test_a_tag_vouches_for_its_own_game_and_text_only() -> None:
    tag = ENGINE_TAGS.tag("war", TWO_KINGS)
    assert ENGINE_TAGS.vouches("war", TWO_KINGS, tag)
    assert not ENGINE_TAGS.vouches("battle", TWO_KINGS, tag)
    assert not ENGINE_TAGS.vouches("war", TWO_KINGS + " ply=1", tag)
    assert not ENGINE_TAGS.vouches("war", TWO_KINGS, tag[:-1])


def test_a_text_the_engine_tagged_is_not_checked_again(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    """What the tag buys: the key's own tag on a text skips `check_state` (here a text no
    engine would write, tagged with the engine's key to show that the check is skipped)."""
    trusted = war_state(TWO_KINGS, ENGINE_TAGS.tag("war", TWO_KINGS))
    assert stub.ListLegalActions(legal(trusted)).actions


@pytest.mark.parametrize(
    "tag",
    [
        pytest.param(b"\0" * TAG_BYTES, id="zeros"),
        pytest.param(bytes(range(TAG_BYTES)), id="made-up"),
        pytest.param(ENGINE_TAGS.tag("war", TWO_KINGS)[:8], id="cut-short"),
        pytest.param(ENGINE_TAGS.tag("battle", TWO_KINGS), id="another-game"),
        pytest.param(ENGINE_TAGS.tag("war", TWO_KINGS + " ply=2"), id="another-text"),
        pytest.param(
            PositionTags(tag_key(bytes(range(1, 33)))).tag("war", TWO_KINGS), id="other-key"
        ),
        pytest.param(PositionTags(tag_key(None)).tag("war", TWO_KINGS), id="unkeyed"),
    ],
)
def test_a_forged_or_foreign_tag_gets_the_full_check(
    stub: engine_pb2_grpc.RulesEngineStub, tag: bytes
) -> None:
    details = refused(stub.ListLegalActions, legal(war_state(TWO_KINGS, tag)))
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "INVALID_STATE"
    assert "South has 2 kings" in details.message
    assert [name for name, _why in details.fields] == ["state.position"]
    untagged = refused(stub.ListLegalActions, legal(war_state(TWO_KINGS)))
    assert untagged.message == details.message


def test_a_sound_text_under_another_key_is_read_after_the_full_check(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    foreign = PositionTags(tag_key(bytes(range(1, 33)))).tag("war", state.position)
    answer = stub.ListLegalActions(legal(war_state(state.position, foreign)))
    assert answer.actions == stub.ListLegalActions(legal(state)).actions


def test_replicas_with_one_seal_key_accept_each_others_tags(
    stub: engine_pb2_grpc.RulesEngineStub, engine_process: ServiceProcess
) -> None:
    """A state written by one replica is trusted by another: the same seal key, the same
    tags (shown by a text only a skipped check accepts, tagged by the first replica's key)."""
    with grpc.insecure_channel(engine_process.address) as channel:
        other = engine_pb2_grpc.RulesEngineStub(channel)
        state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        assert other.NewGame(engine_pb2.NewGameRequest(game="war")).state == state
        trusted = war_state(TWO_KINGS, ENGINE_TAGS.tag("war", TWO_KINGS))
        assert other.ListLegalActions(legal(trusted)).actions
