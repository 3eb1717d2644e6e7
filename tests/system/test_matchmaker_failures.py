"""The matchmaker when the engine or Redis goes away: UNAVAILABLE with a retry hint, the
stored game untouched, and the same request (same idempotency key) succeeding once they
are back."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import (
    Client,
    InProcessMatchmaker,
    fast_settings,
    start_engine_process,
)
from tests.matchmaker.helpers import expect_error, legal_actions
from tests.servers import free_port
from wargame.v1 import engine_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.system
Code = grpc.StatusCode


class PersistentRedis:
    """A redis-server with an append-only file, so it can be stopped and started again."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                str(self.directory),
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[PersistentRedis]:
    server = PersistentRedis(tmp_path)
    server.start()
    yield server
    server.stop()


def started_game(address: str, engine_address: str) -> tuple[Client, Client, mm.GameView, Any]:
    south, north = Client(address, "South"), Client(address, "North")
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    game = north.JoinGame(mm.JoinGameRequest(game_id=game.id)).game
    with grpc.insecure_channel(engine_address) as channel:
        action = legal_actions(engine_pb2_grpc.RulesEngineStub(channel), game.state)[0].action
    request = mm.SubmitActionsRequest(
        game_id=game.id,
        expected_version=game.version,
        idempotency_key=uuid.uuid4().hex,
        actions=[action],
    )
    return south, north, game, request


def unplugged(view: mm.GameView) -> mm.GameView:
    """A game's view without its seats' presence (`connected`)."""
    copy = mm.GameView()
    copy.CopyFrom(view)
    for seat in copy.seats:
        seat.ClearField("connected")
    return copy


def test_engine_down_gives_unavailable_and_the_game_survives(
    redis_url: str, tmp_path: Path, seal_key_file: Path
) -> None:
    engine = start_engine_process(tmp_path, seal_key_file)
    server = InProcessMatchmaker(fast_settings(redis_url, engine.address, engine_retries=2)).start()
    try:
        south, north, game, request = started_game(server.address, engine.address)
        before = north.GetGame(mm.GetGameRequest(game_id=game.id)).game
        port = int(engine.address.rsplit(":", 1)[1])
        engine.kill()
        details = expect_error(
            lambda: south.SubmitActions(request), Code.UNAVAILABLE, "ENGINE_UNAVAILABLE"
        )
        assert int(details.metadata["retry_after_ms"]) == 500 and "retry" in details.message
        assert details.retry_after == 0.5  # google.rpc.RetryInfo
        expect_error(
            lambda: south.CreateGame(mm.CreateGameRequest(game="war")),
            Code.UNAVAILABLE,
            "ENGINE_UNAVAILABLE",
        )
        # Untouched, still served (whether its players still count as connected is the
        # presence sweep's to say meanwhile: nobody watches this game).
        assert unplugged(north.GetGame(mm.GetGameRequest(game_id=game.id)).game) == unplugged(
            before
        )
        engine = start_engine_process(tmp_path, seal_key_file, port=port)
        deadline = time.monotonic() + 60  # a bound for a busy machine: it ends on success

        def until_served() -> mm.SubmitActionsResponse:
            """The very same request, retried as a client does while the engine is
            unavailable (a busy machine may also slow a call past the engine's deadline)."""
            while True:
                try:
                    answer: mm.SubmitActionsResponse = south.SubmitActions(request)
                    return answer
                except grpc.RpcError as error:
                    assert error.code() == Code.UNAVAILABLE and time.monotonic() < deadline
                    time.sleep(0.3)

        reply = until_served()
        assert reply.game.version == game.version + 1
        again = until_served()  # and a further retry is applied once
        assert again.replayed and again.game.version == game.version + 1
    finally:
        server.stop()
        engine.stop()


def test_redis_down_gives_unavailable_and_the_game_survives(
    own_redis: PersistentRedis, tmp_path: Path, seal_key_file: Path
) -> None:
    engine = start_engine_process(tmp_path, seal_key_file)
    server = InProcessMatchmaker(fast_settings(own_redis.url, engine.address)).start()
    try:
        south, north, game, request = started_game(server.address, engine.address)
        before = north.GetGame(mm.GetGameRequest(game_id=game.id)).game
        own_redis.stop()
        details = expect_error(
            lambda: south.SubmitActions(request), Code.UNAVAILABLE, "STORE_UNAVAILABLE"
        )
        assert int(details.metadata["retry_after_ms"]) == 500
        expect_error(
            lambda: north.GetGame(mm.GetGameRequest(game_id=game.id)),
            Code.UNAVAILABLE,
            "STORE_UNAVAILABLE",
        )
        expect_error(
            lambda: Client(server.address).RegisterPlayer(
                mm.RegisterPlayerRequest(display_name="X")
            ),
            Code.UNAVAILABLE,
            "STORE_UNAVAILABLE",
        )
        own_redis.start()
        deadline = time.monotonic() + 60  # a bound for a busy machine: it ends on success
        while True:
            try:
                after = north.GetGame(mm.GetGameRequest(game_id=game.id)).game
                break
            except grpc.RpcError as error:
                assert error.code() == Code.UNAVAILABLE and time.monotonic() < deadline
                time.sleep(0.2)
        assert after.version == before.version and after.state == before.state
        reply = south.SubmitActions(request)
        assert reply.game.version == game.version + 1
        assert south.SubmitActions(request).replayed
    finally:
        server.stop()
        engine.stop()
