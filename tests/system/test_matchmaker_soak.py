"""Soak (`make test-slow`): two replicas under a minute of mixed load — bot games, games of
two scripted players racing each other through both replicas, watchers on both — then
every game's record must replay to its stored state and no process may have failed."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import Client, start_engine_process, start_matchmaker_process
from tests.matchmaker.helpers import assert_everything_expires, legal_actions, seconds, submission
from tests.matchmaker.test_live import Watcher
from tests.servers import ServiceProcess
from wargame.v1 import engine_pb2, engine_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = [pytest.mark.system, pytest.mark.slow]
SOAK_SECONDS = 60.0


@pytest.fixture
def engine(tmp_path: Path, seal_key_file: Path) -> Iterator[ServiceProcess]:
    process = start_engine_process(tmp_path, seal_key_file)
    yield process
    process.stop()


def race(
    addresses: tuple[str, str], engine: Any, game_id: str, players: dict[str, str], stop_at: float
) -> None:
    """Both players submit whenever they may, each through either replica at random, until
    the game ends or time is up; a lost race (ABORTED) is the only refusal expected."""
    rng = random.Random(game_id)
    clients = {
        side: [Client(address, token=token) for address in addresses]
        for side, token in players.items()
    }
    while time.monotonic() < stop_at:
        side = rng.choice(list(players))
        client = rng.choice(clients[side])
        game = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
        if game.status != mm.GAME_STATUS_RUNNING:
            return
        if side not in game.state.to_act:
            time.sleep(0.01)
            continue
        actions = legal_actions(engine, game.state)
        try:
            client.SubmitActions(submission(game, rng.choice(actions).action))
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise


def worker(
    index: int,
    addresses: tuple[str, str],
    *,
    engine: Any,
    stop_at: float,
    games: list[str],
    errors: list[BaseException],
) -> None:
    """Play game after game (against the bot on even slots) until time is up."""
    try:
        round_ = 0
        while time.monotonic() < stop_at:
            round_ += 1
            first = Client(addresses[index % 2], f"w{index}r{round_}a")
            if index % 2 == 0:
                game = first.CreateGame(
                    mm.CreateGameRequest(
                        game="war", side="north", opponent=mm.SEAT_KIND_BOT, bot_time=seconds(0.05)
                    )
                ).game
                players = {"north": first.token}
            else:
                second = Client(addresses[(index + 1) % 2], f"w{index}r{round_}b")
                game = first.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
                second.JoinGame(mm.JoinGameRequest(game_id=game.id))
                players = {"south": first.token, "north": second.token}
            games.append(game.id)
            race(addresses, engine, game.id, players, stop_at)
    except BaseException as error:  # reported by the test, not lost in a thread
        errors.append(error)


def test_two_replicas_under_mixed_load(
    redis_url: str, engine: ServiceProcess, tmp_path: Path
) -> None:
    replicas = [
        start_matchmaker_process(tmp_path, redis_url, engine.address, name=f"soak-{i}")
        for i in range(2)
    ]
    addresses = (replicas[0].address, replicas[1].address)
    try:
        with grpc.insecure_channel(engine.address) as channel:
            engine_stub = engine_pb2_grpc.RulesEngineStub(channel)
            stop_at = time.monotonic() + SOAK_SECONDS
            games: list[str] = []
            errors: list[BaseException] = []
            threads = [
                threading.Thread(
                    target=worker,
                    args=(i, addresses),
                    kwargs={
                        "engine": engine_stub,
                        "stop_at": stop_at,
                        "games": games,
                        "errors": errors,
                    },
                )
                for i in range(8)
            ]
            for thread in threads:
                thread.start()
            time.sleep(1)
            watchers = {
                game_id: Watcher(Client(addresses[i % 2]), game_id)
                for i, game_id in enumerate(list(games))
            }
            for thread in threads:
                thread.join()
            assert errors == []
            assert len(games) >= 8
            checker = Client(addresses[0])
            for game_id in games:
                game = checker.GetGame(mm.GetGameRequest(game_id=game_id)).game
                if game_id in watchers:
                    seen = watchers[game_id].until(game.version)
                    # A game that ended before its watcher came keeps only its last updates.
                    start = seen[0].version if seen[0].resync else 1
                    assert [m.version for m in seen] == list(range(start, game.version + 1))
                    watchers[game_id].close()
                record = checker.GetRecord(mm.GetRecordRequest(game_id=game_id)).record
                replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
                assert replayed.final_state == game.state
        assert_everything_expires(redis_url)
    finally:
        for process in replicas:
            assert process.stop() == 0
            assert "Traceback" not in process.log()
