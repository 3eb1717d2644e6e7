"""The backup and restore drill of docs/operations.md, as an operator runs it: games are
played through a real `wargame-matchmaker` process while Redis is snapshotted (an RDB taken
over the network: `redis-cli --rdb` of a standalone Redis, `redis-cli --cluster backup` of
every primary of a Redis Cluster); the snapshot is restored into a fresh Redis (the
append-only file switched on after loading it, as the drill says), a new matchmaker is
started on it, and then

- every move acknowledged before the snapshot is there (each game's version at least the
  one its players were told);
- every finished game's record replays, on the engine, to the stored final position, moves
  and result (the result the players were told, for those finished before the snapshot);
- every running game continues: the side to act gets a move accepted with the token it had
  before (the sessions came back too), and the bot of a bot game answers.

The standalone drill runs in `make test`; the cluster's (six Redis nodes, a restore by
`redis-cli --cluster import`) is slow.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis

from tests.matchmaker.conftest import Client, start_matchmaker_process
from tests.matchmaker.helpers import as_advised, legal_actions, play_moves, start_game
from tests.matchmaker.test_full_games import check_record
from tests.servers import RedisServer, ServiceProcess, start_redis, start_redis_cluster
from wargame.v1 import engine_pb2_grpc, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("backup-restore")]

PEOPLE_GAMES = 4  # Game of War between two players; the first FINISHED_GAMES end early
FINISHED_GAMES = 2
MOVES_DURING_SNAPSHOT = 3  # moves acknowledged around the snapshot, at least, each side of it
WAIT = 60.0  # the longest wait for a condition (a bound for a busy machine, not a timing)


def redis_cli(*args: str) -> str:
    """Run redis-cli (the operator's tool) and return what it printed."""
    binary = shutil.which("redis-cli")
    assert binary, "redis-cli comes with redis-server (make setup)"
    done = subprocess.run([binary, *args], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait until `condition()` holds (at most WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT} s: {what}"
        time.sleep(0.02)


@dataclass
class Table:
    """The games in play and what their players were told."""

    seats: dict[str, dict[str, Client]] = field(default_factory=dict)  # game -> side -> player
    acked: dict[str, int] = field(default_factory=dict)  # game -> newest version acknowledged
    told: dict[str, game_pb2.Outcome] = field(default_factory=dict)  # finished game -> its outcome
    bot_game: str = ""
    moves: int = 0  # moves acknowledged by the background player
    lock: threading.Lock = field(default_factory=threading.Lock)

    def acknowledged(self, game: mm.GameView) -> None:
        """Note a version the players were told."""
        with self.lock:
            self.acked[game.id] = max(self.acked.get(game.id, 0), game.version)


def set_the_table(address: str, engine: Any, rng: random.Random) -> Table:
    """PEOPLE_GAMES games between players (FINISHED_GAMES of them resigned after some moves,
    the others running) and one running game against the bot, its human to move."""
    table = Table()
    for index in range(PEOPLE_GAMES):
        players = {side: Client(address, f"{side}{index}") for side in ("south", "north")}
        game = start_game(players, "war")
        game = play_moves(engine, players, game.id, 6, rng)
        if index < FINISHED_GAMES and game.status == mm.GAME_STATUS_RUNNING:
            game = players[game.state.to_act[0]].Resign(mm.ResignRequest(game_id=game.id)).game
        if game.status == mm.GAME_STATUS_FINISHED:
            table.told[game.id] = game.outcome
        table.seats[game.id] = players
        table.acknowledged(game)
    human = Client(address, "Solo")
    request = mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT, bot_level=1)
    game = as_advised(human.CreateGame, request).game
    table.seats[game.id] = {"south": human}
    table.bot_game = game.id
    table.acknowledged(bot_plays(table, game.id, engine, rng))
    return table


def bot_plays(table: Table, game_id: str, engine: Any, rng: random.Random) -> mm.GameView:
    """The human of the bot game moves, then the bot answers: the game, the human to move."""
    human = table.seats[game_id]["south"]
    game = wait_for_turn(human, game_id, "south")
    action = rng.choice(legal_actions(engine, game.state)).action
    request = mm.SubmitActionsRequest(
        game_id=game_id,
        expected_version=game.version,
        idempotency_key=uuid.uuid4().hex,
        actions=[action],
    )
    moved = as_advised(human.SubmitActions, request).game
    table.acknowledged(moved)
    answered = wait_for_turn(human, game_id, "south")
    assert answered.version > moved.version  # the bot moved
    return answered


def wait_for_turn(client: Client, game_id: str, side: str) -> mm.GameView:
    """The game once `side` is to act in it (or it ended)."""
    seen: list[mm.GameView] = []

    def turn() -> bool:
        seen[:] = [client.GetGame(mm.GetGameRequest(game_id=game_id)).game]
        return seen[0].status != mm.GAME_STATUS_RUNNING or side in seen[0].state.to_act

    wait_for(turn, f"{side} to act in {game_id}")
    return seen[0]


@dataclass
class Play:
    """Players moving in every running game between people, in a thread, until stopped."""

    table: Table
    engine: Any
    stop: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(7)
        try:
            while not self.stop.is_set():
                for game_id, players in self.table.seats.items():
                    if game_id in self.table.told or game_id == self.table.bot_game:
                        continue
                    game = play_moves(self.engine, players, game_id, 1, rng)
                    self.table.acknowledged(game)
                    with self.table.lock:
                        self.table.moves += 1
                    if game.status == mm.GAME_STATUS_FINISHED:
                        return  # a random game ended: enough was played around the snapshot
        except BaseException as error:  # handed to the test's thread
            self.error = error


@dataclass
class Backup:
    """What a snapshot taken while games were played must hold."""

    files: list[Path]
    acked: dict[str, int]  # each game's newest version acknowledged before the snapshot
    finished: dict[str, game_pb2.Outcome]  # games finished before it, with their outcome


def snapshot_while_playing(table: Table, engine: Any, take: Callable[[], list[Path]]) -> Backup:
    """Take the snapshot (`take`) while the players move: some moves before it, some after."""
    play = Play(table, engine)
    thread = threading.Thread(target=play.run, daemon=True)
    thread.start()

    def moved(count: int) -> Callable[[], bool]:
        return lambda: play.error is not None or not thread.is_alive() or table.moves >= count

    try:
        wait_for(moved(MOVES_DURING_SNAPSHOT), "moves before the snapshot")
        with table.lock:
            acked, done, before = dict(table.acked), dict(table.told), table.moves
        files = take()
        wait_for(moved(before + MOVES_DURING_SNAPSHOT), "moves after the snapshot")
    finally:
        play.stop.set()
        thread.join(WAIT)
    assert play.error is None, play.error
    return Backup(files, acked, done)


def check_restored(table: Table, backup: Backup, address: str, engine: Any) -> None:
    """Everything the snapshot promised is in the store at `address`, and play goes on."""
    rng = random.Random(3)
    for game_id, players in table.seats.items():
        # The same tokens as before the loss: the players' sessions were restored too.
        restored = {side: Client(address, token=p.token) for side, p in players.items()}
        try:
            any_player = next(iter(restored.values()))
            game = any_player.GetGame(mm.GetGameRequest(game_id=game_id)).game
            assert game.version >= backup.acked[game_id], (game_id, game.version)
            if game_id in backup.finished:
                assert game.status == mm.GAME_STATUS_FINISHED
                assert game.outcome == backup.finished[game_id]
            if game.status == mm.GAME_STATUS_FINISHED:
                check_record(any_player, engine, game_id)  # replays to the same result
            elif game_id == table.bot_game:
                table.seats[game_id] = restored
                bot_plays(table, game_id, engine, rng)  # a move accepted, the bot answers
            else:
                played = play_moves(engine, restored, game_id, 1, rng)
                assert played.version == game.version + 1  # the move was accepted
        finally:
            for client in restored.values():
                client.close()


def aof_on(port: int) -> None:
    """Switch the append-only file on in a running Redis (it writes the file from memory)
    and wait until it is written: the drill's step after loading a snapshot."""
    client = redis.Redis(port=port)
    try:
        client.config_set("appendonly", "yes")

        def written() -> bool:
            info = client.info("persistence")
            return bool(
                info["aof_enabled"]
                and not info["aof_rewrite_in_progress"]
                and not info["aof_rewrite_scheduled"]
                and info["aof_last_bgrewrite_status"] == "ok"
            )

        wait_for(written, f"the append-only file of Redis :{port} written")
    finally:
        client.close()


@pytest.fixture
def engine_stub(engine_address: str) -> Iterator[Any]:
    with grpc.insecure_channel(engine_address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)


def played_then_lost(
    tmp_path: Path, redis_url: str, engine_address: str, engine: Any, take: Callable[[], list[Path]]
) -> tuple[Table, Backup]:
    """Games played through a matchmaker on `redis_url`, snapshotted meanwhile by `take`;
    then the matchmaker stops (the store is lost after it)."""
    matchmaker = start_matchmaker_process(tmp_path, redis_url, engine_address, name="before")
    try:
        table = set_the_table(matchmaker.address, engine, random.Random(5))
        backup = snapshot_while_playing(table, engine, take)
    finally:
        matchmaker.stop()
    assert "Traceback" not in matchmaker.log(), matchmaker.log()[-3000:]
    for players in table.seats.values():
        for client in players.values():
            client.close()
    return table, backup


def restored_and_played(
    tmp_path: Path, redis_url: str, engine_address: str, engine: Any, played: tuple[Table, Backup]
) -> None:
    """A new matchmaker (the same secret key: the same folder) on the restored store."""
    matchmaker: ServiceProcess = start_matchmaker_process(
        tmp_path, redis_url, engine_address, name="after"
    )
    try:
        check_restored(*played, matchmaker.address, engine)
    finally:
        matchmaker.stop()
    assert "Traceback" not in matchmaker.log(), matchmaker.log()[-3000:]


def test_a_standalone_redis_restored_from_its_snapshot_keeps_every_game(
    tmp_path: Path, engine_address: str, engine_stub: Any
) -> None:
    source = start_redis(tmp_path / "redis", extra=["--appendonly", "yes"])
    backups = tmp_path / "backups"
    backups.mkdir()

    def take() -> list[Path]:
        # An RDB over the network (the replication protocol): no access to the node's disk.
        path = backups / "dump.rdb"
        redis_cli("-p", str(source.port), "--rdb", str(path))
        return [path]

    try:
        played = played_then_lost(tmp_path, source.url, engine_address, engine_stub, take)
    finally:
        source.stop()
    shutil.rmtree(source.directory)  # the store is lost

    # Restore: the snapshot as the fresh Redis's dump.rdb, loaded with the append-only file
    # off (with it on, Redis would start from an empty file and ignore the snapshot), then
    # the file switched on and written, then Redis started again as it always runs.
    fresh = tmp_path / "restored"
    fresh.mkdir()
    shutil.copy(played[1].files[0], fresh / "dump.rdb")
    loading = start_redis(fresh)
    aof_on(loading.port)
    loading.stop()
    (fresh / "dump.rdb").unlink()  # from here on the append-only file alone holds the games
    restored: RedisServer = start_redis(fresh, extra=["--appendonly", "yes"])
    try:
        restored_and_played(tmp_path, restored.url, engine_address, engine_stub, played)
    finally:
        restored.stop()


@pytest.mark.slow
def test_a_redis_cluster_restored_from_its_primaries_snapshots_keeps_every_game(
    tmp_path: Path, engine_address: str, engine_stub: Any
) -> None:
    source = start_redis_cluster(tmp_path / "cluster", primaries=3, replicas=1)
    backups = tmp_path / "backups"
    backups.mkdir()

    def take() -> list[Path]:
        # One RDB per primary, each over the network, and the slot map (nodes.json).
        redis_cli("--cluster", "backup", f"127.0.0.1:{source.nodes[0].port}", str(backups))
        return sorted(backups.glob("*.rdb"))

    try:
        played = played_then_lost(tmp_path, source.url, engine_address, engine_stub, take)
    finally:
        source.stop()
    assert len(played[1].files) == 3  # the primaries' alone

    # Restore into a fresh cluster (its shape may differ): each primary's snapshot loaded
    # into a standalone Redis of its own, and its keys copied into the cluster, each to the
    # node that serves its slot; then the append-only file switched on everywhere.
    target = start_redis_cluster(tmp_path / "restored", primaries=3)
    try:
        for index, snapshot in enumerate(played[1].files):
            folder = tmp_path / f"loader{index}"
            folder.mkdir()
            shutil.copy(snapshot, folder / "dump.rdb")
            loader = start_redis(folder)
            try:
                redis_cli(
                    "--cluster", "import", f"127.0.0.1:{target.nodes[0].port}",
                    "--cluster-from", f"127.0.0.1:{loader.port}",
                    "--cluster-copy", "--cluster-replace",
                )  # fmt: skip
            finally:
                loader.stop()
        for node in target.nodes:
            aof_on(node.port)
        restored_and_played(tmp_path, target.url, engine_address, engine_stub, played)
    finally:
        target.stop()
