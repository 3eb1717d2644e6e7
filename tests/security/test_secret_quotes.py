"""A refused `commit`, `reveal` or `seal` quotes nothing of its text.

Those texts hold a player's hidden deployment (and a salt): a refusal that quoted their
first 40 characters, or the item it could not read, put part of the secret in the
client's error, in the engine's log and in the matchmaker's, where anyone reading them
would learn it. The refusal still says what is wrong, and where: the item by its number.
"""

from __future__ import annotations

import itertools
import json
import secrets
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import Client, start_matchmaker_process
from tests.security.engine import start_engine
from tests.servers import ServiceProcess
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

RED = "a2=C b2=A c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
SALT = "5a" * 32
BAD_ITEM = "d2=Q"  # no unit type Q: the refusal must not name the item


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """An engine with a seal key (sealed Attack at Dawn needs one)."""
    directory = tmp_path_factory.mktemp("secret_quotes")
    key = directory / "seal.key"
    key.write_text(secrets.token_hex(32))
    process = start_engine(directory, "--seal-key-file", str(key))
    yield process
    process.stop()


def _state(stub: engine_pb2_grpc.RulesEngineStub, mode: str) -> game_pb2.GameState:
    options = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": mode}
    return stub.NewGame(engine_pb2.NewGameRequest(game="napoleonic", options=options)).state


CASES = {
    "seal with an unreadable item": ("sealed", f"seal {RED} {BAD_ITEM}"),
    "seal with a stray word": ("sealed", f"seal {RED} banana"),
    "commit with a short salt": ("commit_reveal", f"commit {RED} salt {SALT[:40]}"),
    "commit with an unreadable item": ("commit_reveal", f"commit {RED} {BAD_ITEM} salt {SALT}"),
    "commit without its salt": ("commit_reveal", f"commit {RED}"),
    "reveal with a bad salt": ("commit_reveal", f"reveal {RED} salt {'zz' * 32}"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refused_secret_text_is_named_never_quoted(
    engine: ServiceProcess, stub: engine_pb2_grpc.RulesEngineStub, case: str
) -> None:
    mode, text = CASES[case]
    state = _state(stub, mode)
    calls: tuple[Callable[[], Any], ...] = (
        lambda: stub.ParseAction(
            engine_pb2.ParseActionRequest(state=state, text=text, side="red"), timeout=30
        ),
        lambda: stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side="red", notation=text)]
            ),
            timeout=30,
        ),
    )
    # Any two items of the array in a row (one alone may be an example of the help), the
    # item that could not be read, the stray word, any piece of a salt.
    items = RED.split()
    secrets = [" ".join(pair) for pair in itertools.pairwise(items)]
    secrets += [BAD_ITEM, "banana", SALT[:8], "zzzz"]
    for call in calls:
        with pytest.raises(grpc.RpcError) as failure:
            call()
        details = error_details(failure.value)
        assert details.code == grpc.StatusCode.INVALID_ARGUMENT, details
        assert details.reason == "NOTATION_INVALID", details
        told = [details.message, *(text for _, text in details.fields)]
        told += list(details.metadata.values())
        for secret in secrets:
            assert not any(secret in line for line in told), (secret, details.message)
        assert details.message.startswith(f"'{text.split()[0]}'"), details.message
    log = engine.log()
    assert "NOTATION_INVALID" in log
    for secret in secrets:
        assert secret not in log, secret


def test_a_refused_array_names_its_bad_item_by_number(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = _state(stub, "sealed")
    with pytest.raises(grpc.RpcError) as failure:
        stub.ParseAction(
            engine_pb2.ParseActionRequest(state=state, text=f"seal {RED} {BAD_ITEM}", side="red"),
            timeout=30,
        )
    message = error_details(failure.value).message
    assert f"array item {len(RED.split()) + 1} is not" in message, message


# -- a refused array's squares: told to its sender, never logged ---------------------------

# RED with its last Infantry off red's rows and its Guards on a square that holds another
# unit: two problems, each naming a square of the array.
ILLEGAL = RED.replace("h3=I", "h6=I").replace("e2=G", "f2=G")
ILLEGAL_SQUARES = ("h6", "f2")


@pytest.mark.parametrize("mode", ["sealed", "commit_reveal"])
def test_a_refused_array_names_its_squares_to_its_sender_and_to_no_log(
    engine: ServiceProcess,
    stub: engine_pb2_grpc.RulesEngineStub,
    tmp_path: Path,
    redis_url: str,
    mode: str,
) -> None:
    """The engine refuses an illegal `seal` or `commit` array naming every problem square
    to the player who sent it (through the matchmaker too), while the engine's log and the
    matchmaker's say what was refused and how many problems, and no square."""
    text = f"seal {ILLEGAL}" if mode == "sealed" else f"commit {ILLEGAL} salt {SALT}"
    state = _state(stub, mode)
    with pytest.raises(grpc.RpcError) as failure:
        stub.ApplyActions(
            engine_pb2.ApplyActionsRequest(
                state=state, actions=[game_pb2.Action(side="red", notation=text)]
            ),
            timeout=30,
        )
    told = error_details(failure.value)
    assert told.reason == "DEPLOYMENT_INVALID", told
    for square in ILLEGAL_SQUARES:
        assert square in told.message, told.message  # the sender learns what to mend

    matchmaker = start_matchmaker_process(tmp_path, redis_url, engine.address)
    try:
        red, black = Client(matchmaker.address, "Red"), Client(matchmaker.address, "Black")
        options = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": mode}
        game = red.CreateGame(mm.CreateGameRequest(game="napoleonic", side="red", options=options))
        game = black.JoinGame(mm.JoinGameRequest(game_id=game.game.id)).game
        with pytest.raises(grpc.RpcError) as failure:
            red.SubmitActions(
                mm.SubmitActionsRequest(
                    game_id=game.id,
                    expected_version=game.version,
                    idempotency_key=uuid.uuid4().hex,
                    actions=[game_pb2.Action(side="red", notation=text)],
                )
            )
        relayed = error_details(failure.value)
        assert relayed.reason == "DEPLOYMENT_INVALID", relayed
        assert all(square in relayed.message for square in ILLEGAL_SQUARES), relayed.message
        logs = {"engine": engine.log(), "matchmaker": matchmaker.log()}
    finally:
        matchmaker.stop()
    for name, log in logs.items():
        refused = [line for line in log.splitlines() if "DEPLOYMENT_INVALID" in line]
        assert refused, name  # the refusal is logged ...
        for line in refused:  # ... naming no square of the array
            said = json.loads(line).get("message", "")
            assert not any(square in said for square in ILLEGAL_SQUARES), (name, said)
            assert not any(item in line for item in ILLEGAL.split()), (name, line)
