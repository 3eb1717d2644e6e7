"""A rolling upgrade on a Redis Cluster with games in play: the previous release's
matchmaker (from git, the commit before key layouts were recorded) and this one serve the
same games side by side; `wargame-matchmaker migrate` refuses while the older one is
connected, then, once it is gone, moves Redis to the new layout (twice: idempotent) while
games go on. Nothing a player was told is committed is lost, bots keep answering in the
games of either release, and every due time of a new-layout game ends in its own slot."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from matchmaker import keys
from tests.matchmaker.conftest import Client, flush_cluster, start_matchmaker_process
from tests.matchmaker.helpers import as_advised, legal_actions, submission, sync_client
from tests.servers import ROOT, RedisClusterServers, ServiceProcess, free_port, matchmaker_key_env
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration


def previous_release(folder: Path) -> Path:
    """The tree of the commit before `matchmaker/schema.py` was added (this tree's own
    HEAD while that change is not committed yet), extracted into `folder`."""
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "-1", "--", "matchmaker/schema.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    commit = f"{added}^" if added else "HEAD"
    folder.mkdir()
    archive = subprocess.run(
        ["git", "archive", commit], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    assert not (folder / "matchmaker" / "schema.py").exists()
    return folder


def start_previous(tree: Path, folder: Path, redis_url: str, engine: str) -> ServiceProcess:
    """The previous release's `wargame-matchmaker serve`, run from its own tree."""
    address = f"127.0.0.1:{free_port()}"
    argv = [
        sys.executable, "-m", "matchmaker.main", "serve", "--listen", address,
        "--redis-url", redis_url, "--engine", engine, "--metrics-listen", "off",
        "--rate-limit", "0", "--register-peer-rate", "0", "--register-rate", "0",
        "--sweep-interval", "0.05", "--bot-time", "0.05", "--retry-hint", "0.5",
    ]  # fmt: skip
    log = folder / "previous.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            argv,
            cwd=tree,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**matchmaker_key_env(folder), "PYTHONPATH": str(tree), "PATH": "/usr/bin"},
        )
    handle = ServiceProcess(address, process, log, argv)
    deadline = time.monotonic() + 60
    while True:
        try:
            Client(address, "probe").close()
            return handle
        except Exception:
            assert process.poll() is None and time.monotonic() < deadline, handle.log()[-2000:]
            time.sleep(0.2)


def migrate(redis_url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matchmaker.main", "migrate", "--redis-url", redis_url, *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


class Table:
    """Games played by two clients each (people) or one against a bot, and every version
    (with its moves) a player was told is committed."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.rng = random.Random(30)
        self.games: dict[str, dict[str, Client]] = {}
        self.acknowledged: dict[str, list[tuple[int, list[str]]]] = {}

    def people(self, creator: Client, joiner: Client) -> None:
        created = creator.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
        joined = joiner.JoinGame(mm.JoinGameRequest(game_id=created.id, side="north")).game
        self.games[created.id] = {"south": creator, "north": joiner}
        self.acked(joined)

    def bot(self, player: Client) -> None:
        created = player.CreateGame(
            mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT)
        ).game
        self.games[created.id] = {"south": player}
        self.acked(created)

    def acked(self, game: mm.GameView) -> None:
        self.acknowledged.setdefault(game.id, []).append((game.version, list(game.moves)))

    def play(self, plies: int) -> None:
        """`plies` random legal moves in every running game (a bot's turn is waited for)."""
        for game_id, players in self.games.items():
            for _ in range(plies):
                game = self.turn(game_id, players)
                if game is None:
                    break
                side = game.state.to_act[0]
                choice = self.rng.choice(legal_actions(self.engine, game.state))
                reply = players[side].SubmitActions(submission(game, choice.action))
                self.acked(reply.game)

    def turn(self, game_id: str, players: dict[str, Client]) -> mm.GameView | None:
        """The game once a player of the table is to act (None once it has ended). A read
        answered UNAVAILABLE (on a busy machine, the engine drawing the view can be late) is
        asked again after its hint, as a client is told to."""
        any_player = next(iter(players.values()))
        deadline = time.monotonic() + 60
        while True:
            read = mm.GetGameRequest(game_id=game_id)
            game = as_advised(any_player.GetGame, read, saying="").game
            if game.status != mm.GAME_STATUS_RUNNING:
                return None
            if game.state.to_act and game.state.to_act[0] in players:
                return game
            assert time.monotonic() < deadline, f"the bot of {game_id} never moved"
            time.sleep(0.05)

    def check(self, reader: Client) -> None:
        """Every acknowledged version is in its game's final record."""
        for game_id, seen in self.acknowledged.items():
            final = reader.GetGame(mm.GetGameRequest(game_id=game_id)).game
            for version, moves in seen:
                assert final.version >= version, (game_id, version, final.version)
                assert list(final.moves)[: len(moves)] == moves, (game_id, version)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return previous_release(tmp_path / "previous")


def test_two_releases_share_a_cluster_through_a_migration_with_games_in_play(
    tree: Path,
    tmp_path: Path,
    redis_cluster: RedisClusterServers,
    engine_address: str,
    engine_stub: Any,
) -> None:
    flush_cluster(redis_cluster)
    url = redis_cluster.url
    previous = start_previous(tree, tmp_path, url, engine_address)
    current = start_matchmaker_process(tmp_path, url, engine_address, name="current")
    made: list[Client] = []

    def player(process: ServiceProcess, name: str) -> Client:
        client = Client(process.address, name)
        made.append(client)
        return client

    def player_again(client: Client) -> Client:
        """The same player (its token), now through this release."""
        again = Client(current.address, token=client.token)
        made.append(again)
        return again

    try:
        table = Table(engine_stub)
        for i in range(3):  # each release creates games, and both play in them
            table.people(player(previous, f"old{i}"), player(current, f"new{i}"))
            table.people(player(current, f"new{i}b"), player(previous, f"old{i}b"))
            table.bot(player(previous, f"oldbot{i}"))
            table.bot(player(current, f"newbot{i}"))
        table.play(3)

        refused = migrate(url, "--wait", "0")
        assert refused.returncode != 0
        assert "matchmakers of an older release are connected" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr

        previous.stop()  # the rollout replaces it: its players come back to this release
        for seats in table.games.values():
            for side, client in seats.items():
                seats[side] = player_again(client)
        done = migrate(url, "--wait", "6")  # longer than a replica takes to read it again
        assert done.returncode == 0, done.stderr
        assert "key layout 2 recorded (was 1)" in done.stdout
        moved = re.search(r"due times moved to the games' own slots: (\d+)", done.stdout)
        assert moved and int(moved.group(1)) > 0, done.stdout  # this release's games so far
        table.play(3)  # meanwhile and after: games go on, bots answer
        again = migrate(url, "--wait", "0")
        assert again.returncode == 0 and "already recorded" in again.stdout, again.stderr
        for i in range(2):  # games of the new layout
            table.bot(player(current, f"later{i}"))
        table.play(4)
        table.check(player(current, "reader"))

        redis = sync_client(url)
        try:
            assert redis.get(keys.schema()) == b"2"
            for shard in range(16):
                left = [m.decode() for m in redis.zrange(keys.due(shard), 0, -1)]
                assert [game for game in left if keys.game_due(game)] == []
            later = [game for game in table.games if keys.game_due(game)]
            assert later, "no game of the new layout"
        finally:
            redis.close()
    finally:
        for client in made:
            client.close()
        if previous.process.poll() is None:
            previous.stop()
        current.stop()
