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


def legal(connection: Connection, state: game_pb2.GameState) -> list[str]:
    """The engine's legal actions in a state, as texts."""
    return [action.notation for action in connection.legal_actions(state).actions]


def end_phase(connection: Connection, state: game_pb2.GameState) -> game_pb2.GameState:
    """The state after the side to act types `end`."""
    action = game_pb2.Action(side=state.to_act[0], notation="end")
    request = engine_pb2.ApplyActionsRequest(state=state, actions=[action])
    return connection.engine.ApplyActions(request).state


def quoted_example(text: str) -> str:
    """The action quoted in a guidance line."""
    match = re.search(r"`((?:move|attack|support|advance|place) [^`]+)`", text)
    assert match, text
    return match.group(1)


def test_the_movement_example_is_a_legal_move_of_the_players_own_side(
    connection: Connection,
) -> None:
    # Red moves first; after Red's `end` (movement) and `end` (no attacks) it is Black's
    # movement: each side's hint cites a move it could type now, of one of its own units,
    # toward the enemy (never Red's `move c2-d4` shown to Black).
    red_state = connection.describe_game("napoleonic").initial_state
    black_state = end_phase(connection, end_phase(connection, red_state))
    assert red_state.napoleonic.phase == black_state.napoleonic.phase
    assert list(black_state.to_act) == ["black"]
    y_of = {cell.name: cell.y for cell in connection.describe_game("napoleonic").board.cells}
    for side, state in (("red", red_state), ("black", black_state)):
        session = session_of(connection, state, side)
        moves = legal(connection, state)
        text = guidance(session, moves.copy)
        assert text.startswith("Movement:")
        move = quoted_example(text)
        assert move in moves
        start, end = move.removeprefix("move ").split("-")
        assert {piece.side for piece in state.pieces if piece.cell == start} == {side}
        own = [y_of[piece.cell] for piece in state.pieces if piece.side == side]
        enemy = [y_of[piece.cell] for piece in state.pieces if piece.side != side]
        toward = 1 if sum(enemy) / len(enemy) > sum(own) / len(own) else -1
        assert (y_of[end] - y_of[start]) * toward > 0  # forward, not back to its own edge
    assert "c2-d4" not in guidance(session_of(connection, black_state, "black"), lambda: [])


def test_without_a_legal_action_of_its_kind_the_guidance_cites_none(
    connection: Connection,
) -> None:
    state = connection.describe_game("napoleonic").initial_state
    text = guidance(session_of(connection, state, "red"), lambda: ["end"])
    assert text.startswith("Movement: move any of your units; ") and "`move" not in text
    assert example(["end", "move a2-a1", "move b2-b3"], "move") == "move a2-a1"  # the first
    assert example(["end"], "move") == ""


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
