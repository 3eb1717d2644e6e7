"""Napoleonic Chess with more than two players (10.6, 10.7) through a real engine server:
scenarios in ListGames and DescribeGame, N-player turns, surrender of one player, draws
agreed by every remaining player, and ResolveBattle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.integration

MULTIPLAYER = {
    "grand_battle_2v2": [
        ("red", "south"),
        ("black", "north"),
        ("blue", "south"),
        ("green", "north"),
    ],
    "three_way": [("red", "red"), ("black", "black"), ("green", "green")],
    "divided_command": [
        ("red", "south"),
        ("black", "north"),
        ("blue", "south"),
        ("green", "north"),
    ],
}


@pytest.fixture
def stub(engine_channel: grpc.Channel) -> engine_pb2_grpc.RulesEngineStub:
    return engine_pb2_grpc.RulesEngineStub(engine_channel)


def refused(call: Callable[..., Any], request: Any) -> ErrorDetails:
    with pytest.raises(grpc.RpcError) as failure:
        call(request, timeout=30)
    return error_details(failure.value)


def new_state(stub: engine_pb2_grpc.RulesEngineStub, scenario: str, **options: str) -> Any:
    request = engine_pb2.NewGameRequest(
        game="napoleonic", options={"scenario": scenario, **options}
    )
    return stub.NewGame(request).state


def apply(stub: engine_pb2_grpc.RulesEngineStub, state: Any, side: str, text: str) -> Any:
    request = engine_pb2.ApplyActionsRequest(
        state=state, actions=[game_pb2.Action(side=side, notation=text)]
    )
    return stub.ApplyActions(request).state


def test_list_games_names_every_scenario_with_its_players(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    games = stub.ListGames(engine_pb2.ListGamesRequest()).games
    napoleonic = next(g for g in games if g.id == "napoleonic")
    scenarios = {s.name: s for s in napoleonic.scenarios}
    assert {"standard", *MULTIPLAYER} <= set(scenarios)
    for name, players in MULTIPLAYER.items():
        assert sorted((s.id, s.alliance) for s in scenarios[name].sides) == sorted(players)
        assert all(s.colour and s.name for s in scenarios[name].sides)
    assert [(s.id, s.alliance) for s in scenarios["standard"].sides] == [
        ("red", "red"),
        ("black", "black"),
    ]
    war = next(g for g in games if g.id == "war")
    assert not war.scenarios
    assert [s.alliance for s in war.sides] == [s.id for s in war.sides]


@pytest.mark.parametrize("scenario", sorted(MULTIPLAYER))
def test_describe_game_gives_the_scenario_players_in_turn_order(
    stub: engine_pb2_grpc.RulesEngineStub, scenario: str
) -> None:
    answer = stub.DescribeGame(
        engine_pb2.DescribeGameRequest(game="napoleonic", options={"scenario": scenario})
    )
    sides = [(s.id, s.alliance) for s in answer.info.sides]
    assert sorted(sides) == sorted(MULTIPLAYER[scenario])
    assert [s.id for s in answer.board.sides] == [s for s, _a in sides]
    assert list(answer.initial_state.napoleonic.turn_order) == [s for s, _a in sides]
    assert list(answer.initial_state.to_act) == [sides[0][0]]
    # Every player has deployment squares to draw.
    tags = {t for cell in answer.board.cells for t in cell.tags}
    assert {f"deployment:{s}" for s, _a in sides} <= tags


def test_a_two_player_description_is_unchanged(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    answer = stub.DescribeGame(engine_pb2.DescribeGameRequest(game="napoleonic"))
    assert [(s.id, s.alliance) for s in answer.info.sides] == [("red", "red"), ("black", "black")]
