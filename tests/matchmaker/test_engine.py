"""The matchmaker's client of the rules engine: what a caller learns when the engine is out
of reach or answers with a reason this matchmaker does not know, and when its channels are
opened anew for renewed TLS files."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import grpc
import pytest

import matchmaker.engine
from matchmaker.engine import Engine, EngineError, EngineFailure, refusal_status
from matchmaker.settings import Settings
from tests.matchmaker.helpers import captured_logs, legal_actions
from tests.tls_support import Authority
from wargame.runtime.refusal import Reason
from wargame.runtime.status import ErrorDetails
from wargame.runtime.tls import ClientTLS
from wargame.v1 import game_pb2


def test_an_unknown_reason_is_our_bug_and_says_so() -> None:
    refusal = EngineError(
        ErrorDetails(grpc.StatusCode.FAILED_PRECONDITION, "no such thing", "NOT_A_REASON")
    )
    status = refusal_status(refusal, stored_session=True)
    assert isinstance(status, EngineFailure)
    assert (status.code, status.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert status.message == "the rules engine answered with an unknown reason"
    assert status.engine == "FAILED_PRECONDITION NOT_A_REASON: no such thing"


def test_an_unreachable_engine_is_unavailable_with_a_retry_hint(nowhere: str) -> None:
    settings = Settings(engine_retries=2, engine_timeout=5.0, retry_hint=0.75)

    async def call() -> EngineFailure:
        engine = Engine(nowhere, settings)
        try:
            with pytest.raises(EngineFailure) as failed:
                await engine.games()
            return failed.value
        finally:
            await engine.close()

    failure = asyncio.run(call())
    assert (failure.code, failure.reason) == (
        grpc.StatusCode.UNAVAILABLE,
        Reason.ENGINE_UNAVAILABLE,
    )
    assert failure.message == "the rules engine cannot be reached; retry in 0.75 s"
    assert failure.metadata == {"retry_after_ms": "750"}
    assert failure.retry_after == 0.75
    assert failure.engine.startswith("ListGames: UNAVAILABLE")


def test_channels_are_opened_anew_only_when_the_tls_files_change(
    nowhere: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client looks at its TLS files on every call here (no interval): while they are
    the files it read, it keeps its channels; once one is replaced, it opens new ones."""
    monkeypatch.setattr(matchmaker.engine, "TLS_LOOK_INTERVAL", 0.0)
    authority = Authority.create(tmp_path)
    first = authority.issue("first", [], server=False, client=True)
    cert, key = tmp_path / "client.crt", tmp_path / "client.key"
    shutil.copy(first.cert_file, cert)
    shutil.copy(first.key_file, key)
    tls = ClientTLS(str(authority.ca_file), str(cert), str(key))
    settings = Settings(engine_tls=tls, bot_max_time=0.1, engine_timeout=0.1)

    async def scenario() -> None:
        engine = Engine(nowhere, settings)
        try:
            opened = engine.channels
            with captured_logs() as logs:
                engine._stub()
                engine._stub()
            assert engine.channels is opened
            assert not [entry for entry in logs if "reloaded" in entry["event"]]
            renewed = authority.issue("renewed", [], server=False, client=True)
            shutil.copy(renewed.key_file, tmp_path / "new.key")
            shutil.copy(renewed.cert_file, tmp_path / "new.crt")
            (tmp_path / "new.crt").replace(cert)
            (tmp_path / "new.key").replace(key)
            with captured_logs() as logs:
                engine._stub()
                renewed_channels = engine.channels
                engine._stub()
            assert renewed_channels is not opened and engine.channels is renewed_channels
            assert [entry["event"] for entry in logs] == ["engine TLS files reloaded"]
        finally:
            await engine.close()

    asyncio.run(scenario())


def test_actions_are_applied_to_the_compact_form_unless_a_view_is_asked_for(
    engine_address: str, engine_stub: Any
) -> None:
    """The matchmaker stores the compact state (the position): the engine draws the view
    (the pieces) only when the caller asks for it."""

    async def scenario() -> tuple[game_pb2.GameState, game_pb2.GameState]:
        engine = Engine(engine_address, Settings())
        try:
            state = await engine.new_game("war", {}, "", "")
            action = legal_actions(engine_stub, state)[0].action
            plain = await engine.apply(state, [action])
            drawn = await engine.apply(state, [action], view=True)
            return plain.state, drawn.state
        finally:
            await engine.close()

    plain, drawn = asyncio.run(scenario())
    assert plain.position and plain.position == drawn.position
    assert not plain.pieces and drawn.pieces
