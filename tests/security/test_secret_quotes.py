"""A refused `commit`, `reveal` or `seal` quotes nothing of its text.

Those texts hold a player's hidden deployment (and a salt): a refusal that quoted their
first 40 characters, or the item it could not read, put part of the secret in the
client's error, in the engine's log and in the matchmaker's, where anyone reading them
would learn it. The refusal still says what is wrong, and where: the item by its number.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from tests.security.engine import start_engine
from tests.servers import ServiceProcess
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

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
