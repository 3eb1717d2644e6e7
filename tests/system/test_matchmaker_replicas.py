"""Several `wargame-matchmaker` processes on one Redis: any replica serves any call, games
are watched on all of them, quick match never pairs a player twice, and a replica killed
mid-game loses nothing (its watchers resume on another, its bot turns are taken over)."""

from __future__ import annotations

import random
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.conftest import flushed
from tests.matchmaker.conftest import Client, start_engine_process, start_matchmaker_process
from tests.matchmaker.helpers import legal_actions, play_moves, seconds
from tests.matchmaker.test_live import QueueStream, Watcher
from tests.servers import RedisServer, ServiceProcess, matchmaker_key_env, start_redis
from wargame.v1 import engine_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("matchmaker-replicas")]


@pytest.fixture(scope="module")
def engine(
    tmp_path_factory: pytest.TempPathFactory, seal_key_file: Path
) -> Iterator[ServiceProcess]:
    process = start_engine_process(tmp_path_factory.mktemp("engine"), seal_key_file)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def installation_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """The module's own Redis: its replicas share it, and only they (a matchmaker of
    another module, with its own key, never writes a game they cannot open)."""
    server = start_redis(tmp_path_factory.mktemp("installation-redis"))
    yield server
    server.stop()


@pytest.fixture
def redis_url(installation_redis: RedisServer) -> str:
    """The module's Redis, flushed before the test."""
    return flushed(installation_redis)


@pytest.fixture(scope="module")
def installation(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment naming one secret key for every matchmaker of the module: they share
    one Redis, as the replicas of one installation do, so each can open what another sealed."""
    return matchmaker_key_env(tmp_path_factory.mktemp("installation"))


@pytest.fixture(scope="module")
def shared_replicas(
    installation_redis: RedisServer,
    engine: ServiceProcess,
    installation: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[ServiceProcess]]:
    """Two replicas for the module (they keep nothing: each test flushes Redis under them)."""
    logs = tmp_path_factory.mktemp("replicas")
    started = [
        start_matchmaker_process(
            logs,
            installation_redis.url,
            engine.address,
            "--sweep-lease",
            "2",
            name=f"matchmaker-{i}",
            env=installation,
        )
        for i in range(2)
    ]
    yield started
    for process in started:
        process.stop()
        assert "Traceback" not in process.log(), process.log()[-3000:]


@pytest.fixture
def replicas(redis_url: str, shared_replicas: list[ServiceProcess]) -> list[ServiceProcess]:
    """The module's replicas, alive, on a flushed Redis."""
    for process in shared_replicas:
        assert process.process.poll() is None
    return shared_replicas


@pytest.fixture
def engine_stub(engine: ServiceProcess) -> Iterator[Any]:
    with grpc.insecure_channel(engine.address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)


def test_a_game_created_on_one_replica_is_played_and_watched_on_both(
    replicas: list[ServiceProcess], engine_stub: Any
) -> None:
    a, b = (replica.address for replica in replicas)
    south, north = Client(a, "South"), Client(b, "North")
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    north.JoinGame(mm.JoinGameRequest(game_id=game.id))
    watchers = [Watcher(Client(a), game.id), Watcher(Client(b), game.id)]
    game = play_moves(engine_stub, {"south": south, "north": north}, game.id, 8, random.Random(11))
    north.Resign(mm.ResignRequest(game_id=game.id))
    for watcher in watchers:
        seen = watcher.until(game.version + 1)
        assert [m.version for m in seen] == list(range(1, game.version + 2))
        assert seen[-1].game.status == mm.GAME_STATUS_FINISHED
        assert watcher.ended.wait(10) and watcher.error is None
    # Either replica writes the same record (tag order aside: the engine writes its tags
    # in protobuf map order, which differs between processes).
    records = [
        client.GetRecord(mm.GetRecordRequest(game_id=game.id)).record for client in (south, north)
    ]
    assert sorted(records[0].splitlines()) == sorted(records[1].splitlines())


def test_many_concurrent_queue_joins_on_two_replicas_pair_each_player_once(
    replicas: list[ServiceProcess],
) -> None:
    players = [Client(replicas[i % 2].address, f"player{i}") for i in range(40)]
    request = mm.JoinQueueRequest(game="war", rated=True)
    barrier = threading.Barrier(len(players))
    streams: list[QueueStream] = [None] * len(players)  # type: ignore[list-item]

    def join(index: int) -> None:
        barrier.wait()
        streams[index] = QueueStream(players[index], request)

    threads = [threading.Thread(target=join, args=(i,)) for i in range(len(players))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    games: dict[str, list[tuple[str, str]]] = {}
    for player, stream in zip(players, streams, strict=True):
        last = list(stream.all(timeout=30))[-1]
        assert stream.error is None and last.HasField("game"), f"{player.player_id} was not matched"
        assert any(seat.player.id == player.player_id for seat in last.game.seats)
        games.setdefault(last.game.id, []).append((player.player_id, last.game.your_side))
    assert len(games) == len(players) // 2
    for seated in games.values():
        assert (
            len(seated) == 2
            and len({p for p, _ in seated}) == 2
            and {s for _, s in seated} == {"south", "north"}
        )


def test_a_killed_replica_loses_nothing(
    redis_url: str,
    engine: ServiceProcess,
    installation: dict[str, str],
    tmp_path: Path,
    engine_stub: Any,
) -> None:
    a, b = (
        start_matchmaker_process(
            tmp_path, redis_url, engine.address, name=f"kill-{i}", env=installation
        )
        for i in range(2)
    )
    south_a, north_b = Client(a.address, "South"), Client(b.address, "North")
    game = south_a.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    north_b.JoinGame(mm.JoinGameRequest(game_id=game.id))
    watcher = Watcher(Client(a.address), game.id)
    game = play_moves(
        engine_stub, {"south": south_a, "north": north_b}, game.id, 4, random.Random(5)
    )
    seen = watcher.until(game.version)
    last = seen[-1].version
    a.kill()
    assert watcher.ended.wait(10) and watcher.error is not None  # the connection broke
    # South carries on through the other replica with the same token.
    south_b = Client(b.address, token=south_a.token)
    game = play_moves(
        engine_stub, {"south": south_b, "north": north_b}, game.id, 4, random.Random(6)
    )
    resumed = Watcher(Client(b.address), game.id, after=last)
    got = resumed.until(game.version)
    assert [m.version for m in seen + got] == list(range(1, game.version + 1))
    moves = [n for m in seen + got for n in m.notations]
    assert moves == list(south_b.GetGame(mm.GetGameRequest(game_id=game.id)).game.moves)
    assert b.stop() == 0


def claimed_by(replicas: list[ServiceProcess], game_id: str) -> list[ServiceProcess]:
    """The replicas whose sweeper has claimed the game (their debug log says so)."""
    return [
        replica
        for replica in replicas
        if any(
            '"due game claimed"' in line and game_id in line for line in replica.log().splitlines()
        )
    ]


def test_a_bot_turn_left_by_a_killed_replica_is_taken_over_when_its_lease_runs_out(
    engine: ServiceProcess, tmp_path: Path
) -> None:
    # How soon is a measurement, not a test (`make test-slow`'s multi-host run reports how
    # soon play recovers from a lost matchmaker): here the other replica takes the turn
    # over once the dead one's lease runs out, and the bot moves once.
    # A Redis of its own: no other replica (this module's shared ones) may take the turn.
    own = start_redis(tmp_path / "redis")
    replicas = [
        start_matchmaker_process(
            tmp_path, own.url, engine.address, "--log-level", "debug", name=f"takeover-{i}"
        )
        for i in range(2)
    ]
    try:
        human = Client(replicas[0].address, "Human")
        # The bot moves first and thinks 1 s: kill whichever replica claimed its turn.
        game = human.CreateGame(
            mm.CreateGameRequest(
                game="war", side="north", opponent=mm.SEAT_KIND_BOT, bot_time=seconds(1)
            )
        ).game
        deadline = time.monotonic() + 10
        while not (claimers := claimed_by(replicas, game.id)):
            assert time.monotonic() < deadline, "no replica claimed the bot's turn"
            time.sleep(0.01)
        (dead,) = claimers
        (other,) = [replica for replica in replicas if replica is not dead]
        dead.kill()
        killed = time.monotonic()
        survivor = Client(other.address, token=human.token)
        at_kill = survivor.GetGame(mm.GetGameRequest(game_id=game.id)).game
        assert at_kill.version == game.version, "the bot moved before its replica was killed"
        watcher = Watcher(Client(other.address), game.id, after=game.version)
        while not claimed_by([other], game.id):
            assert time.monotonic() < killed + 60, "the other replica never took the turn over"
            time.sleep(0.01)
        taken_over = time.monotonic() - killed
        moved = watcher.until(game.version + 1, timeout=60)[-1]
        completed = time.monotonic() - killed
        print(f"bot turn taken over {taken_over:.2f} s, completed {completed:.2f} s after the kill")
        assert moved.side == "south" and len(moved.notations) == 1
        view = survivor.GetGame(mm.GetGameRequest(game_id=game.id)).game
        assert view.state.to_act[0] == "north" and view.version == game.version + 1
    finally:
        for replica in replicas:
            replica.stop()
        own.stop()


def test_sigterm_ends_streams_cleanly_and_finishes_calls(
    redis_url: str,
    engine: ServiceProcess,
    installation: dict[str, str],
    tmp_path: Path,
    engine_stub: Any,
) -> None:
    process = start_matchmaker_process(
        tmp_path, redis_url, engine.address, name="graceful", env=installation
    )
    south, north = Client(process.address, "South"), Client(process.address, "North")
    game = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    north.JoinGame(mm.JoinGameRequest(game_id=game.id))
    watcher = Watcher(Client(process.address), game.id)
    queued = QueueStream(Client(process.address, "Waiting"), mm.JoinQueueRequest(game="napoleonic"))
    watcher.until(2)
    assert not queued.messages.get(timeout=20).HasField("game")  # the ticket waits its turn
    process.process.send_signal(signal.SIGTERM)
    assert watcher.ended.wait(10) and watcher.error is None
    assert queued.ended.wait(10) and queued.error is None
    assert process.process.wait(20) == 0
    assert "matchmaker stopped" in process.log()
    # The ticket left the queue with the stream: nothing waits for a dead stream.
    later = start_matchmaker_process(
        tmp_path, redis_url, engine.address, name="after", env=installation
    )
    try:
        again = Client(later.address, token=south.token)
        view = again.GetGame(mm.GetGameRequest(game_id=game.id)).game
        assert view.version == 2
        action = legal_actions(engine_stub, view.state)[0].action
        reply = again.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id,
                expected_version=2,
                idempotency_key=uuid.uuid4().hex,
                actions=[action],
            )
        )
        assert reply.game.version == 3
    finally:
        later.stop()
