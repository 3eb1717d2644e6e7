"""Strangers' searches do not cost the bot its games.

The bot's SuggestAction calls used to share the engine's search pool with anyone's: under a
flood of anonymous searches the pool was full whenever the bot asked, the bot's move was
refused (ENGINE_BUSY) and tried again later, and a timed game was lost on the bot's clock.
Now the matchmaker proves its calls its own with the caller key, and the engine admits them
to processes kept for them: a real engine and a real matchmaker, a flood of anonymous
searches (a bounded count) that keeps the rest of the pool full, and a timed bot game that
the bot plays to the end of the flood without losing a second to the flood's refusals.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.matchmaker.conftest import Client, start_matchmaker_process
from tests.matchmaker.helpers import legal_actions, seconds, submission, timed_bot_game
from tests.servers import ENGINE_SERVICE, ServiceProcess, start_service
from wargame.runtime.config import CALLER_KEY_HEADER
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.system

FLOODERS = 24
FLOOD_CALLS = 40  # each flooder's most calls: the flood is long, and bounded
FLOOD_BUDGET = 2.0  # seconds each anonymous search asks for
BOT_MOVES = 6  # the bot's moves the game must reach during the flood
# The bot's whole clock. What proves the promise is the matchmaker's log (the bot was never
# refused); the clock only has to outlast a busy machine, where the bot's own search, niced
# below every serving process, takes longer by the wall clock (8 s ran out at load 27).
BASE = 60.0
BOT_TIME = 0.1  # the bot thinks this long per move


@pytest.fixture
def caller_key(tmp_path: Path) -> Path:
    path = tmp_path / "caller.key"
    path.write_text(secrets.token_hex(32) + "\n")
    return path


@pytest.fixture
def engine(tmp_path: Path, seal_key_file: Path, caller_key: Path) -> Iterator[ServiceProcess]:
    """One worker with the default pool (2 processes, a queue of 4), and the caller key."""
    process = start_service(
        "engine_service.main",
        ["--workers", "1", "--metrics-listen", "off", "--seal-key-file", str(seal_key_file)],
        log_path=tmp_path / "engine.log",
        service=ENGINE_SERVICE,
        env={"WARGAME_ENGINE_CALLER_KEY_FILE": str(caller_key)},
    )
    yield process
    process.stop()


def flood(
    address: str,
    state: game_pb2.GameState,
    stop: threading.Event,
    seen: Counter[str],
    metadata: tuple[tuple[str, str], ...] = (),
) -> None:
    """Anonymous searches (or with a guessed key: `metadata`), one after another, until
    `stop` or FLOOD_CALLS: what each got, counted in `seen`."""
    with grpc.insecure_channel(address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        request = engine_pb2.SuggestActionRequest(
            state=state, time_budget=seconds(FLOOD_BUDGET), level=5
        )
        for _ in range(FLOOD_CALLS):
            if stop.is_set():
                return
            try:
                stub.SuggestAction(request, timeout=30, metadata=metadata)
                seen["searched"] += 1
            except grpc.RpcError as error:
                details = error_details(error)
                seen[details.reason or details.code.name] += 1
                if details.reason == "ENGINE_BUSY":
                    time.sleep(0.02)  # a flooder that obeys no retry hint, but yields the GIL


# A whole timed game under a flood that keeps the engine's pool full (12 s of CPU):
# `make test-slow`; `make test` keeps the matchmaker's reserved share (test_pool_priority.py).
@pytest.mark.slow
def test_a_timed_bot_game_under_a_flood_of_anonymous_searches_never_loses_on_time(
    tmp_path: Path, redis_url: str, engine: ServiceProcess, caller_key: Path
) -> None:
    matchmaker = start_matchmaker_process(
        tmp_path,
        redis_url,
        engine.address,
        env={"WARGAME_MATCHMAKER_ENGINE_CALLER_KEY_FILE": str(caller_key)},
    )
    player = Client(matchmaker.address, "Player")
    stop = threading.Event()
    seen: Counter[str] = Counter()
    guessed: Counter[str] = Counter()  # what the flooders who guess a key got
    guess = ((CALLER_KEY_HEADER, secrets.token_hex(32)),)
    flooders: list[threading.Thread] = []
    try:
        game = player.CreateGame(timed_bot_game(BASE, BOT_TIME)).game
        with grpc.insecure_channel(engine.address) as channel:
            rules = engine_pb2_grpc.RulesEngineStub(channel)
            flooders = [
                threading.Thread(target=flood, args=(engine.address, game.state, stop, seen))
                for _ in range(FLOODERS - 4)
            ] + [
                threading.Thread(
                    target=flood, args=(engine.address, game.state, stop, guessed, guess)
                )
                for _ in range(4)
            ]
            for thread in flooders:
                thread.start()
            while not seen["ENGINE_BUSY"]:  # the pool is full before the game goes on
                assert any(thread.is_alive() for thread in flooders), seen
                time.sleep(0.05)
            bot_moves = 0
            while bot_moves < BOT_MOVES:
                assert any(thread.is_alive() for thread in flooders), "the flood ended first"
                game = player.GetGame(mm.GetGameRequest(game_id=game.id)).game
                assert game.status == mm.GAME_STATUS_RUNNING, game.outcome
                if game.state.to_act != ["south"]:
                    time.sleep(0.05)  # the bot's turn
                    continue
                bot_moves = len(game.moves) // 2
                action = legal_actions(rules, game.state)[0].action
                try:
                    player.SubmitActions(submission(game, action))
                except grpc.RpcError as error:  # the game changed meanwhile (presence)
                    assert error.code() == grpc.StatusCode.ABORTED, error
        assert seen["ENGINE_BUSY"] > FLOODERS, seen  # strangers were refused all along,
        assert guessed["ENGINE_BUSY"] > 0, guessed  # those with a wrong key too,
        log = matchmaker.log()
        assert "ENGINE_BUSY" not in log  # ... and the bot never was
        assert '"due work failed' not in log
    finally:
        stop.set()
        for thread in flooders:
            thread.join(60)
        matchmaker.stop()
