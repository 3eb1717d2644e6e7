"""The objectives' own measures (docs/operations.md) move when their events happen.

Real Redis servers, the real engine and a real matchmaker replica (in this process, so its
metrics are read from the registry it publishes): a move reaching each watcher's stream is
timed once per watcher, a bot's move once, and a commit no replica confirmed is counted by
what became of it, apart from other refusals.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from prometheus_client import REGISTRY

from tests.matchmaker.conftest import Client, InProcessMatchmaker, WarReplica, run
from tests.matchmaker.helpers import (
    Watcher,
    legal_actions,
    play_moves,
    start_game,
    store_client,
    submission,
    wait_for,
)
from tests.matchmaker.test_replication import change, hasty_and_patient
from tests.servers import start_redis
from wargame.runtime.refusal import Code, Refusal
from wargame.v1 import matchmaker_pb2 as mm

DELIVERY = "wargame_matchmaker_watch_delivery_seconds"
BOT_REPLY = "wargame_matchmaker_bot_reply_seconds"
WATCHERS = "wargame_matchmaker_watchers"
UNCONFIRMED = "wargame_matchmaker_unconfirmed_commits_total"


def value(name: str, **labels: str) -> float:
    """A sample of this process's registry (0 before its first observation)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_move_is_timed_once_for_each_watcher_it_reaches(
    war_replica: WarReplica, clients: Callable[..., Client], engine_stub: Any
) -> None:
    server, two = war_replica()
    game = start_game(two, "war")
    watchers = [Watcher(clients(server.address), game.id, after=game.version) for _ in range(2)]
    before = value(f"{DELIVERY}_count")
    played = play_moves(engine_stub, two, game.id, 1, random.Random(3))
    for watcher in watchers:
        watcher.until(played.version)
    # Observed once each update is written to a stream (the client may read it first).
    wait_for(lambda: value(f"{DELIVERY}_count") == before + 2)
    assert value(f"{DELIVERY}_bucket", le="+Inf") >= before + 2
    # One watcher leaves, and the replica has seen its stream end, before the next move
    # (closed after it, the stream could be written the move first: timing luck).
    open_streams = value(WATCHERS)
    watchers[0].close()
    wait_for(lambda: value(WATCHERS) == open_streams - 1)
    played = play_moves(engine_stub, two, game.id, 1, random.Random(4))
    watchers[1].until(played.version)
    wait_for(lambda: value(f"{DELIVERY}_count") == before + 3)  # one watcher left
    watchers[1].close()


def test_the_bots_move_is_timed_from_the_commit_that_made_it_its_turn(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client], engine_stub: Any
) -> None:
    server = replica(bot_time=0.05)
    ada = clients(server.address, "Ada")
    game = ada.CreateGame(
        mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT)
    ).game
    count, total = value(f"{BOT_REPLY}_count"), value(f"{BOT_REPLY}_sum")
    reply = ada.SubmitActions(
        submission(game, legal_actions(engine_stub, game.state)[0].action, key="first")
    )
    wait_for(
        lambda: ada.GetGame(mm.GetGameRequest(game_id=game.id)).game.version > reply.game.version
    )
    wait_for(lambda: value(f"{BOT_REPLY}_count") == count + 1)
    assert value(f"{BOT_REPLY}_sum") > total  # it took some time, from the player's commit


def test_a_commit_no_replica_confirmed_is_counted_by_what_became_of_it(tmp_path: Path) -> None:
    primary = start_redis(tmp_path / "primary")
    replica = start_redis(
        tmp_path / "replica", extra=("--replicaof", "127.0.0.1", str(primary.port))
    )
    check = redis.Redis(port=replica.port)
    wait_for(lambda: check.info("replication").get("master_link_status") == "up")
    check.close()
    refused, unreplicated = (
        value(UNCONFIRMED, outcome="refused"),
        value(UNCONFIRMED, outcome="unreplicated"),
    )

    async def scenario() -> None:
        client = await store_client(primary.url)
        # A commit meant to be confirmed may wait long (on a busy machine the replica's
        # answer can take seconds); one meant to be refused waits 0.5 s.
        store, patient = hasty_and_patient(client, primary.url, replica_wait=0.5)
        assert (await patient.commit(change(0))).version == 1  # confirmed: nothing counted
        assert value(UNCONFIRMED, outcome="refused") == refused
        os.kill(replica.process.pid, signal.SIGSTOP)  # the replica stops answering
        with pytest.raises(Refusal) as unconfirmed:
            await store.commit(change(1))
        assert unconfirmed.value.code == Code.UNAVAILABLE
        assert value(UNCONFIRMED, outcome="refused") == refused + 1
        os.kill(replica.process.pid, signal.SIGCONT)
        replica.stop()  # gone for good: the commit stands, unconfirmed
        deadline = time.monotonic() + 60
        while redis.Redis(port=primary.port).info("replication")["connected_slaves"]:
            assert time.monotonic() < deadline, "the primary still counts its replica"
            time.sleep(0.1)
        assert (await store.commit(change(2))).version == 3
        assert value(UNCONFIRMED, outcome="unreplicated") == unreplicated + 1
        assert value(UNCONFIRMED, outcome="refused") == refused + 1
        await client.aclose()

    try:
        run(scenario())
    finally:
        if replica.process.poll() is None:
            os.kill(replica.process.pid, signal.SIGCONT)
        replica.stop()
        primary.stop()
