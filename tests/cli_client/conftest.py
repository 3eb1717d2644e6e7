"""Fixtures for the client's unit tests: a stub of the real in-process engine, described games,
and the view of a game running from a described game's start (`at_the_start`)."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from cli_client.connection import Addresses, Connection
from cli_client.session import GameSession
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2, matchmaker_pb2


@pytest.fixture
def engine(engine_channel: grpc.Channel) -> engine_pb2_grpc.RulesEngineStub:
    """A RulesEngine stub on the session's in-process engine."""
    return engine_pb2_grpc.RulesEngineStub(engine_channel)


@pytest.fixture
def describe(
    engine: engine_pb2_grpc.RulesEngineStub,
) -> Callable[..., engine_pb2.DescribeGameResponse]:
    """DescribeGame(game, **options)."""

    def call(game: str, **options: str) -> engine_pb2.DescribeGameResponse:
        reply: engine_pb2.DescribeGameResponse = engine.DescribeGame(
            engine_pb2.DescribeGameRequest(game=game, options=options), timeout=30
        )
        return reply

    return call


@pytest.fixture
def play(engine: engine_pb2_grpc.RulesEngineStub) -> Callable[..., engine_pb2.ApplyActionsResponse]:
    """Apply notation texts in order, each by the side to act: play(state, "e3-e4", ...)."""

    def call(state: game_pb2.GameState, *texts: str) -> engine_pb2.ApplyActionsResponse:
        reply = engine_pb2.ApplyActionsResponse(state=state)
        for text in texts:
            action = game_pb2.Action(side=reply.state.to_act[0], notation=text)
            step = engine.ApplyActions(
                engine_pb2.ApplyActionsRequest(state=reply.state, actions=[action]), timeout=30
            )
            reply = engine_pb2.ApplyActionsResponse(
                state=step.state,
                events=[*reply.events, *step.events],
                applied=[*reply.applied, *step.applied],
            )
        return reply

    return call


@pytest.fixture
def connection(engine_address: str) -> Connection:
    """A client connection to the in-process engine (no matchmaker behind it)."""
    return Connection(Addresses(engine=engine_address, matchmaker="127.0.0.1:1"))


def at_the_start(
    reply: engine_pb2.DescribeGameResponse, your_side: str, version: int = 1
) -> matchmaker_pb2.GameView:
    """The view of game g1, running from the described game's start, as `your_side` sees it
    (no seats: a test adds the ones it needs)."""
    return matchmaker_pb2.GameView(
        id="g1",
        game=reply.board.game,
        status=matchmaker_pb2.GAME_STATUS_RUNNING,
        version=version,
        your_side=your_side,
        state=reply.initial_state,
    )


def napoleonic_session(
    connection: Connection, state: game_pb2.GameState, side: str, game_id: str
) -> GameSession:
    """The client's session of a running Napoleonic game `game_id` in `state`, seen by `side`."""
    view = matchmaker_pb2.GameView(
        id=game_id,
        game="napoleonic",
        status=matchmaker_pb2.GAME_STATUS_RUNNING,
        version=1,
        your_side=side,
        state=state,
    )
    return GameSession(view, connection.describe_game("napoleonic", dict(state.options)), side)
