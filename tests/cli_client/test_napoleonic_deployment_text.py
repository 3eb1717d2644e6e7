"""The deployment texts the client builds (rules 10.1 Attack at Dawn, 10.2 Marching Orders).

Each text is checked against the real engine, which reads it by the rules: the array the
client writes is the canonical array of 10.1 (what a commitment hashes), the sealed mode
sends exactly `seal <array>`, the reveal sends the kept array and salt, and the guidance
of each deployment phase names the engine's own notation.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from cli_client.connection import Connection
from cli_client.errors import ClientError
from cli_client.identity import Store
from cli_client.napoleonic import Deployment, guidance, phase_label
from cli_client.session import GameSession
from tests.cli_client.conftest import napoleonic_session
from wargame.v1 import engine_pb2, game_pb2, napoleonic_pb2

# The canonical array of setup.py's docstring (10.1): by rank, then by file.
RED_CANONICAL = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
RED_SCRAMBLED = "h3=i, a3=I g2=c b2=C e2=g c2=C f2=C a2=a h2=A b3=I c3=I d3=I e3=I f3=I g3=I"
BLACK_ARRAY = "a7=A b7=C c7=C e7=G f7=C g7=C h7=A a6=I b6=I c6=I d6=I e6=I f6=I g6=I h6=I"


def new_state(connection: Connection, **options: str) -> game_pb2.GameState:
    request = engine_pb2.NewGameRequest(game="napoleonic", options=options)
    return connection.engine.NewGame(request).state


def session_of(connection: Connection, state: game_pb2.GameState, side: str) -> GameSession:
    return napoleonic_session(connection, state, side, "g-deploy")


def apply(
    connection: Connection, state: game_pb2.GameState, *actions: tuple[str, str]
) -> game_pb2.GameState:
    request = engine_pb2.ApplyActionsRequest(
        state=state,
        actions=[game_pb2.Action(side=side, notation=text) for side, text in actions],
    )
    return connection.engine.ApplyActions(request).state


def test_the_array_text_is_the_canonical_array_of_rule_10_1(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, deployment="attack_at_dawn")
    red = Deployment(session_of(connection, state, "red"), Store(tmp_path), connection)
    red.add(RED_SCRAMBLED)  # any order, commas, lower-case letters
    assert red.array_text() == RED_CANONICAL
    canonical = connection.engine.ParseAction(
        engine_pb2.ParseActionRequest(state=state, text=f"seal {RED_CANONICAL}", side="red")
    )
    assert canonical.notation == f"seal {red.array_text()}"


def test_ranks_order_the_array_by_number_not_by_text(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, scenario="grand_battle", deployment="attack_at_dawn")
    red = Deployment(session_of(connection, state, "red"), Store(tmp_path), connection)
    red.add("b10=I a9=I l1=C c1=C a1=A")  # rank 10 after rank 9; file l after file c
    assert red.array_text() == "a1=A c1=C l1=C a9=I b10=I"


def test_placing_a_square_again_changes_its_unit_and_clear_starts_again(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, deployment="attack_at_dawn")
    red = Deployment(session_of(connection, state, "red"), Store(tmp_path), connection)
    red.add("a2=A b2=C")
    red.add("a2=I")
    assert red.array_text() == "a2=I b2=C"
    assert red.remaining() == red.army() - Counter({"I": 1, "C": 1})
    assert red.summary().startswith("placed: a2=I b2=C · to place: ")
    assert "2×A" in red.summary() and "7×I" in red.summary()
    assert [(p.kind, p.side, p.cell) for p in red.pieces()] == [
        ("infantry", "red", "a2"),
        ("cavalry", "red", "b2"),
    ]
    red.clear()
    assert red.array_text() == "" and red.pieces() == []
    assert red.summary() == "placed: nothing yet · to place: 2×A 4×C 1×G 8×I"
    for wrong in ("a2", "a2=", "a2=AB", "2a=A", "a2:A"):
        with pytest.raises(ClientError, match="is not a placement like a2=A"):
            red.add(wrong)
    with pytest.raises(ClientError, match="is not a square of this board"):
        red.add("i2=A")
    with pytest.raises(ClientError, match="is not a unit letter"):
        red.add("a2=Z")
    assert red.array_text() == ""  # a refused placement changes nothing


def test_sealed_mode_sends_the_array_itself_and_the_engine_deploys_it(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, deployment="attack_at_dawn", attack_at_dawn_mode="sealed")
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED
    red = Deployment(session_of(connection, state, "red"), Store(tmp_path), connection)
    black = Deployment(session_of(connection, state, "black"), Store(tmp_path), connection)
    with pytest.raises(ClientError, match="place your army first"):
        red.sealed()
    red.add(RED_SCRAMBLED)
    black.add(BLACK_ARRAY)
    assert red.sealed() == f"seal {RED_CANONICAL}"
    state = apply(connection, state, ("red", red.sealed()), ("black", black.sealed()))
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT
    placed = {(p.cell, p.kind) for p in state.pieces if p.side == "red"}
    assert placed == {(p.cell, p.kind) for p in red.pieces()}


def test_the_reveal_sends_the_kept_array_and_salt_once_both_have_committed(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, deployment="attack_at_dawn")
    store = Store(tmp_path)
    red = Deployment(session_of(connection, state, "red"), store, connection)
    black = Deployment(session_of(connection, state, "black"), Store(tmp_path / "b"), connection)
    assert red.reveal_text() is None  # nothing kept yet
    red.add(RED_SCRAMBLED)
    black.add(BLACK_ARRAY)
    committed = red.commitment()
    secret = store.secret(red.key)
    assert secret is not None
    assert secret == {"array": RED_CANONICAL, "salt": secret["salt"], "commit": committed}
    assert red.reveal_text() == f"reveal {RED_CANONICAL} salt {secret['salt']}"
    state = apply(connection, state, ("red", committed), ("black", black.commitment()))
    assert state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL
    text = red.reveal_text()
    assert text is not None
    state = apply(connection, state, ("red", text))
    red.session = session_of(connection, state, "red")
    assert red.revealed()
    assert not Deployment(session_of(connection, state, "black"), store, connection).revealed()
    store.set_secret(red.key, {"array": RED_CANONICAL})  # a secret without its salt
    assert red.reveal_text() is None


def test_the_kept_secret_belongs_to_one_game_and_seat(
    connection: Connection, tmp_path: Path
) -> None:
    state = new_state(connection, deployment="attack_at_dawn")
    red = Deployment(session_of(connection, state, "red"), Store(tmp_path), connection)
    black = Deployment(session_of(connection, state, "black"), Store(tmp_path), connection)
    assert red.key == "127.0.0.1:1/g-deploy/red" and black.key == "127.0.0.1:1/g-deploy/black"


def test_each_deployment_phase_guides_with_a_legal_placement(connection: Connection) -> None:
    marching = new_state(connection, deployment="marching_orders")
    assert marching.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT
    first = session_of(connection, marching, marching.to_act[0])
    assert phase_label(first) == "placement"
    placements = [action.notation for action in connection.legal_actions(marching).actions]
    text = guidance(first, lambda: placements)
    example = re.fullmatch(r"Placement: place a unit in your rows \(`(place [^`]+)`\)\.", text)
    assert example, text
    # the example is one of the player's legal placements, and the engine takes it
    assert example.group(1) in placements
    placed = apply(connection, marching, (marching.to_act[0], example.group(1)))
    assert len(placed.pieces) == len(marching.pieces) + 1
    dawn = new_state(connection, deployment="attack_at_dawn")
    assert guidance(session_of(connection, dawn, "red")).startswith(
        "Attack at Dawn: set up your army in secret"
    )
    sealed = new_state(connection, deployment="attack_at_dawn", attack_at_dawn_mode="sealed")
    assert guidance(session_of(connection, sealed, "black")).startswith("Attack at Dawn:")
