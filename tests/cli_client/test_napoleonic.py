"""Napoleonic Chess in the client: phase guidance from the state, and the secret deployment.

The commitment is made by the real engine (ParseAction hashes array and salt); the test
checks that only the digest would leave the client, and that the kept array and salt
reveal correctly when the engine applies commit and reveal.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_client.connection import Connection
from cli_client.errors import ClientError
from cli_client.identity import Store
from cli_client.napoleonic import Deployment, example, guidance
from cli_client.session import GameSession
from tests.cli_client.conftest import napoleonic_session
from wargame.v1 import engine_pb2, game_pb2, napoleonic_pb2

RED_ARRAY = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK_ARRAY = "a7=A b7=C c7=C e7=G f7=C g7=C h7=A a6=I b6=I c6=I d6=I e6=I f6=I g6=I h6=I"


def session_of(connection: Connection, state: game_pb2.GameState, side: str) -> GameSession:
    return napoleonic_session(connection, state, side, "g-dawn")


def test_examples_come_from_the_engines_notation_help(connection: Connection) -> None:
    notation = connection.describe_game("napoleonic").board.notation
    assert example(notation, "move", "?") == "move c2-d4"
    assert example(notation, "support", "?").startswith("support ")
    assert example(notation, "nothing-like-this", "fallback") == "fallback"


def test_guidance_follows_the_phase_and_the_seat(connection: Connection) -> None:
    state = connection.describe_game("napoleonic").initial_state
    red, black = session_of(connection, state, "red"), session_of(connection, state, "black")
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT
    assert guidance(red).startswith("Movement:") and "`end`" in guidance(red)
    assert guidance(black) == ""  # not black's part


def test_a_secret_array_is_committed_by_digest_and_revealed_from_the_kept_secret(
    connection: Connection, tmp_path: Path
) -> None:
    state = connection.engine.NewGame(
        engine_pb2.NewGameRequest(game="napoleonic", options={"deployment": "attack_at_dawn"})
    ).state
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT
    store = Store(tmp_path)
    red = Deployment(session_of(connection, state, "red"), store, connection)
    assert red.rows() and all(cell[1] in "23" for cell in red.rows())
    assert sum(red.army().values()) == 15
    with pytest.raises(ClientError):
        red.commitment()  # nothing placed
    with pytest.raises(ClientError):
        red.add("z9=I")
    with pytest.raises(ClientError):
        red.add("a2=Q")
    red.add(RED_ARRAY)
    assert not red.remaining()
    assert "to place: nothing" in red.summary()
    notation = red.commitment()
    assert re.fullmatch(r"commit [0-9a-f]{64}", notation)
    secret = store.secret(red.key)
    assert secret is not None and secret["salt"] not in notation and "=" not in notation
    # the engine accepts the commitment, the opponent's, and then the kept reveal
    black = Deployment(
        session_of(connection, state, "black"), Store(tmp_path / "black"), connection
    )
    black.add(BLACK_ARRAY)
    actions = [
        game_pb2.Action(side="red", notation=notation),
        game_pb2.Action(side="black", notation=black.commitment()),
    ]
    state = connection.engine.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=state, actions=actions)
    ).state
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL
    reveals = []
    for deployment in (red, black):
        text = deployment.reveal_text()
        assert text is not None and text.startswith("reveal ")
        reveals.append(game_pb2.Action(side=deployment.session.your_side, notation=text))
    state = connection.engine.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=state, actions=reveals)
    ).state
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT
    assert {piece.cell for piece in state.pieces if piece.side == "red"} == {
        item.split("=")[0] for item in RED_ARRAY.split()
    }
    red.forget()
    assert store.secret(red.key) is None
