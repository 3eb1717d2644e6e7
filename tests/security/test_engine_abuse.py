"""Flooding the engine with searches and replays does not stop play.

Several clients flood one engine with maximum-budget SuggestAction calls and ReplayRecord
calls of long records (with and without every state), re-sending as soon as they are
refused, while players play games through a real matchmaker on the same engine. Every
game move is accepted (no ENGINE_UNAVAILABLE), and the flood is refused with
RESOURCE_EXHAUSTED (ENGINE_BUSY) and a retry hint.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from tests.matchmaker.conftest import Client, start_matchmaker_process
from tests.matchmaker.helpers import play_moves, start_game
from tests.security.engine import long_record, start_engine
from tests.servers import ServiceProcess
from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc

pytestmark = pytest.mark.system

FLOODERS = {"SuggestAction": 10, "ReplayRecord": 3}  # the pool admits 6 at once
GAMES = 3
MOVES = 24


class Flood:
    """Clients that keep calling one RPC, each on its own connection, until stopped."""

    def __init__(self, address: str, rpc: str, requests: list[Any], clients: int) -> None:
        self.stop = threading.Event()
        self.answered = 0
        self.refused: list[ErrorDetails] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._client, args=(address, rpc, requests, n))
            for n in range(clients)
        ]

    def __enter__(self) -> Flood:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join()

    def _client(self, address: str, rpc: str, requests: list[Any], number: int) -> None:
        options = [("grpc.use_local_subchannel_pool", 1)]
        with grpc.insecure_channel(address, options=options) as channel:
            call: Any = getattr(engine_pb2_grpc.RulesEngineStub(channel), rpc)
            turn = number
            while not self.stop.is_set():
                future = call.future(requests[turn % len(requests)], timeout=60)
                turn += 1
                while not future.done() and not self.stop.wait(0.05):
                    pass
                if not future.done():
                    future.cancel()
                    return
                with self._lock:
                    if future.exception() is None:
                        self.answered += 1
                    else:
                        self.refused.append(error_details(future.exception()))
                self.stop.wait(0.05)  # an abuser does not wait for the retry hint


@pytest.fixture
def stack(
    tmp_path: Path, redis_url: str, seal_key_file: Path
) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    """An engine (one worker, the default pool) and a matchmaker process using it."""
    engine = start_engine(tmp_path, "--seal-key-file", str(seal_key_file))
    matchmaker = start_matchmaker_process(tmp_path, redis_url, engine.address)
    yield engine, matchmaker
    matchmaker.stop()
    engine.stop()


def test_games_go_on_while_the_engine_is_flooded(stack) -> None:
    engine, matchmaker = stack
    with grpc.insecure_channel(engine.address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        war = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
        searches = [
            engine_pb2.SuggestActionRequest(
                state=war, time_budget=duration_pb2.Duration(seconds=30), seed=seed
            )
            for seed in range(4)
        ]
        record = long_record(18_000)
        replays = [
            engine_pb2.ReplayRecordRequest(record=record),
            engine_pb2.ReplayRecordRequest(record=record, include_states=True),
        ]
        rng = random.Random(15)
        with (
            Flood(engine.address, "SuggestAction", searches, FLOODERS["SuggestAction"]) as search,
            Flood(engine.address, "ReplayRecord", replays, FLOODERS["ReplayRecord"]) as replay,
        ):
            for number in range(GAMES):
                players = {
                    side: Client(matchmaker.address, f"{side}{number}")
                    for side in ("south", "north")
                }
                try:
                    game = start_game(players, "war")
                    # play_moves asserts that every submit is accepted, as the notation sent.
                    game = play_moves(stub, players, game.id, MOVES, rng)
                    assert game.version >= MOVES
                finally:
                    for client in players.values():
                        client.close()
            assert any(details.reason == "ENGINE_BUSY" for details in search.refused)
    for details in search.refused + replay.refused:
        assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED, details
        assert details.reason in ("ENGINE_BUSY", "RESPONSE_TOO_LARGE"), details
        if details.reason == "ENGINE_BUSY":
            assert details.retry_after is not None and details.retry_after > 0
