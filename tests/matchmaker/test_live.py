"""Live updates, hidden deployments and quick match through the real service."""

from __future__ import annotations

import queue
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.store import text
from tests.matchmaker.conftest import (
    Client,
    InProcessMatchmaker,
    WarReplica,
    both_stores,
    players_of,
)
from tests.matchmaker.helpers import (
    SEALED_DAWN,
    StreamReader,
    Watcher,
    expect_error,
    legal_actions,
    play_moves,
    sealed_array,
    seconds,
    start_game,
    submission,
    sync_client,
    war_game_played,
)
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
__all__ = ["QueueStream", "Watcher"]  # the system suites watch and queue with these too
Code = grpc.StatusCode


@both_stores
def test_watchers_get_every_update_live_and_resume_where_they_left_off(
    war_players: dict[str, Client],
    engine_stub: Any,
    matchmaker: InProcessMatchmaker,
    clients: Callable[..., Client],
) -> None:
    game = start_game(war_players, "war")
    spectator = clients(matchmaker.address)  # no token: a spectator
    live = Watcher(spectator, game.id)
    history = live.until(2)
    assert [m.version for m in history] == [1, 2]
    assert history[-1].game.status == mm.GAME_STATUS_RUNNING and history[-1].game.your_side == ""
    assert not history[0].HasField("game")  # superseded catch-up updates carry no game
    game = play_moves(engine_stub, war_players, game.id, 4, random.Random(1))
    updates = live.until(game.version)
    assert [m.version for m in updates] == list(range(3, game.version + 1))
    assert [n for m in updates for n in m.notations] == list(game.moves)
    assert updates[-1].game.version == game.version and updates[-1].side in ("south", "north")
    # A client that saw version 4 reconnects: it gets 5.. and then live updates.
    resumed = Watcher(war_players["north"], game.id, after=4)
    game = play_moves(engine_stub, war_players, game.id, 1, random.Random(2))
    got = resumed.until(game.version)
    assert [m.version for m in got] == list(range(5, game.version + 1))
    assert got[-1].game.your_side == "north"
    war_players["south"].Resign(mm.ResignRequest(game_id=game.id))
    final = live.until(game.version + 1)[-1]
    assert final.game.status == mm.GAME_STATUS_FINISHED and list(final.notations) == ["resign"]
    assert live.ended.wait(10) and live.error is None  # the stream ends after the last update
    assert resumed.ended.wait(10)
    # A finished game can still be replayed from any version, and the stream ends at once.
    again = Watcher(spectator, game.id, after=game.version - 1)
    assert [m.version for m in again.until(game.version + 1)] == [game.version, game.version + 1]
    assert again.ended.wait(10)


def test_a_watcher_ahead_of_the_store_gets_the_game_as_it_is_then_every_update(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    """A watcher that saw versions a Redis failover then lost (commits no replica had
    confirmed, refused to their sender) resumes after a version the store no longer has:
    a resync, the game as it stands, then every update from there (it was refused, and the
    multi-host run's watchers could not come back)."""
    game = start_game(war_players, "war")
    game = play_moves(engine_stub, war_players, game.id, 2, random.Random(3))
    ahead = Watcher(war_players["south"], game.id, after=game.version + 2)
    (resync,) = ahead.until(game.version)
    assert resync.resync and resync.version == resync.game.version == game.version
    assert not resync.notations
    game = play_moves(engine_stub, war_players, game.id, 2, random.Random(4))
    got = ahead.until(game.version)
    assert [m.version for m in got] == [game.version - 1, game.version]
    assert [n for m in got for n in m.notations] == list(game.moves[-2:])
    ahead.close()


def test_an_update_committed_while_a_watch_catches_up_is_sent_as_an_update(
    war_players: dict[str, Client],
    engine_stub: Any,
    matchmaker: InProcessMatchmaker,
    clients: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A watch catches up by reading the game's stream, then the game. A move committed
    between the two reads is sent as the update it is, with its move, not as "some
    updates are no longer kept" (a resync, which tells no moves)."""
    game = start_game(war_players, "war")
    record, now = matchmaker.call(lambda replica: replica.store.get(game.id))
    action = legal_actions(engine_stub, record.state)[0]
    replica = matchmaker.replica
    assert replica is not None
    read = replica.hub.store.updates_after  # the watchers' reads
    committed: list[int] = []

    async def read_then_commit(game_id: str, after: Any, count: int = 500) -> Any:
        entries = await read(game_id, after, count)
        if game_id == game.id and not committed:
            played = await replica.play.commit(record, now, [action.action])
            committed.append(played.game.version)
        return entries

    monkeypatch.setattr(replica.hub.store, "updates_after", read_then_commit)
    spectator = clients(matchmaker.address)  # no token: its watch adds no notice of its own
    (update,) = Watcher(spectator, game.id, after=game.version).until(game.version + 1)
    assert committed == [game.version + 1]
    assert not update.resync and list(update.notations) == [action.notation]


def test_watch_refusals(matchmaker: InProcessMatchmaker, clients: Callable[..., Client]) -> None:
    spectator = clients(matchmaker.address)
    expect_error(
        lambda: list(spectator.stub.WatchGame(mm.WatchGameRequest(game_id="gnope"), timeout=5)),
        Code.NOT_FOUND,
        "SESSION_NOT_FOUND",
    )
    expect_error(
        lambda: list(spectator.stub.WatchGame(mm.WatchGameRequest(), timeout=5)),
        Code.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    forged = Client(matchmaker.address, token="pnobody." + "y" * 43)
    expect_error(
        lambda: list(
            forged.stub.WatchGame(
                mm.WatchGameRequest(game_id="g1"), metadata=forged.metadata, timeout=5
            )
        ),
        Code.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )
    forged.close()


def test_a_trimmed_history_resyncs_with_the_whole_game(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    _server, players = war_replica(stream_maxlen=1)
    game = war_game_played(engine_stub, players, 200, 4)
    first = next(
        iter(
            players["south"].stub.WatchGame(
                mm.WatchGameRequest(game_id=game.id, after_version=0), timeout=10
            )
        )
    )
    # Approximate trimming keeps some entries; with 200+ versions version 1 is gone.
    assert first.resync and first.version == game.version and first.game.version == game.version


@both_stores
def test_a_finished_game_keeps_only_its_last_updates(
    engine_stub: Any, redis_url: str, war_replica: WarReplica
) -> None:
    _server, players = war_replica(finished_stream_keep=5)
    game = war_game_played(engine_stub, players, 12, 6)
    stream = sync_client(redis_url)

    def versions_kept() -> list[int]:
        """The versions whose update the stream holds (notices between them aside: players
        not watching may be announced as gone meanwhile)."""
        ids = [text(id_) for id_, _ in stream.xrange(keys.game_stream(game.id))]
        return [int(v) for v, seq in (id_.split("-") for id_ in ids) if seq == "0"]

    assert versions_kept() == list(range(1, game.version + 1))  # running: everything kept
    over = players["north"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert versions_kept() == list(range(over.version - 4, over.version + 1))
    stream.close()
    # The updates a late watcher gets (the notices between them aside, as above).
    late = [
        m
        for m in players["south"].stub.WatchGame(mm.WatchGameRequest(game_id=game.id), timeout=10)
        if not m.HasField("notice")
    ]
    assert late[0].resync and [m.version for m in late] == [over.version]
    recent = [
        m
        for m in players["south"].stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id, after_version=over.version - 3), timeout=10
        )
        if not m.HasField("notice")
    ]
    assert [m.version for m in recent] == [over.version - 2, over.version - 1, over.version]


@both_stores
def test_a_watcher_resuming_after_the_end_misses_no_version(
    engine_stub: Any, war_replica: WarReplica
) -> None:
    """By default a finished game keeps every update while its stream lives: a watcher
    cut off early in the game and back after its end resumes from its last version (no
    resync), whatever the length of the game."""
    _server, players = war_replica()
    game = war_game_played(engine_stub, players, 40, 7)
    over = players["north"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert over.version > 40
    resumed = list(
        players["south"].stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id, after_version=2), timeout=10
        )
    )
    updates = [m for m in resumed if not m.HasField("notice")]
    assert not any(m.resync for m in updates)
    assert [m.version for m in updates] == list(range(3, over.version + 1))


def test_hidden_deployment_is_never_shown_to_the_other_side(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    red, black = players["red"], players["black"]
    game = start_game(players, "napoleonic", options=SEALED_DAWN)
    assert sorted(game.state.to_act) == ["black", "red"]
    watcher = Watcher(black, game.id)
    spectator = Watcher(clients(matchmaker.address), game.id)
    red_array = sealed_array("red")
    reply = red.SubmitActions(submission(game, game_pb2.Action(notation=f"seal {red_array}")))
    assert red_array.split()[0] in reply.notations[0]  # the author sees its own array
    version = reply.game.version
    secrets = [item.encode() for item in red_array.split()[:3]]

    def leaks(message: Any) -> bool:
        blob = message.SerializeToString()
        return any(secret in blob for secret in secrets)

    for viewer in (black, clients(matchmaker.address)):
        seen = viewer.GetGame(mm.GetGameRequest(game_id=game.id)).game
        assert not leaks(seen), "GetGame showed red's array"
        assert seen.moves[-1] != reply.notations[0]
    for stream in (watcher, spectator):
        assert not any(leaks(m) for m in stream.until(version))
    record = black.GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    assert not any(secret.decode() in record for secret in secrets)
    # Black seals too: the arrays are laid out together and everything is open.
    black_array = sealed_array("black")
    done = black.SubmitActions(
        submission(reply.game, game_pb2.Action(notation=f"seal {black_array}"))
    ).game
    assert done.state.napoleonic.phase == 5  # MOVEMENT
    assert any(red_array.split()[0] in move for move in done.moves)
    record = black.GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
    assert replayed.final_state == red.GetGame(mm.GetGameRequest(game_id=game.id)).game.state
    watcher.close()
    spectator.close()


class QueueStream(StreamReader):
    """A JoinQueue stream read by a thread."""

    def __init__(self, client: Client, request: mm.JoinQueueRequest) -> None:
        super().__init__(
            client.stub.JoinQueue(request, metadata=client.metadata, timeout=60),
            cancel_is_error=True,
        )

    def all(self, timeout: float = 20) -> Iterator[mm.JoinQueueResponse]:
        assert self.ended.wait(timeout), "the queue stream did not end"
        while not self.messages.empty():
            yield self.messages.get()


@both_stores
def test_quick_match_pairs_two_players_into_one_game(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    ada, bob = clients(matchmaker.address, "Ada"), clients(matchmaker.address, "Bob")
    request = mm.JoinQueueRequest(
        game="war", rated=True, time_control=mm.TimeControl(base=seconds(300))
    )
    first = QueueStream(ada, request)
    waiting = first.messages.get(timeout=10)
    assert (
        waiting.position == 1
        and waiting.waiting == 1
        and waiting.ticket
        and not waiting.HasField("game")
    )
    assert waiting.rating_window >= 100
    expect_error(
        lambda: list(ada.stub.JoinQueue(request, metadata=ada.metadata, timeout=5)),
        Code.FAILED_PRECONDITION,
        "ALREADY_QUEUED",
    )
    second = QueueStream(bob, request)
    ada_last = list(first.all())[-1]
    bob_last = list(second.all())[-1]
    assert first.error is None and second.error is None
    assert ada_last.game.id == bob_last.game.id
    assert {ada_last.game.your_side, bob_last.game.your_side} == {"south", "north"}
    assert ada_last.game.status == mm.GAME_STATUS_RUNNING and ada_last.game.rated
    assert ada_last.game.clock.time_control.base.seconds == 300
    # Matched players may queue again.
    third = QueueStream(ada, mm.JoinQueueRequest(game="war"))
    assert third.messages.get(timeout=10).position == 1
    ada.LeaveQueue(mm.LeaveQueueRequest())
    assert (
        not any(m.HasField("game") for m in third.all()) and third.error is None
    )  # ended, unmatched


def test_queue_refusals_and_leaving_by_closing_the_stream(ada: Client) -> None:
    expect_error(
        lambda: list(ada.stub.JoinQueue(mm.JoinQueueRequest(), metadata=ada.metadata, timeout=5)),
        Code.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    expect_error(
        lambda: list(
            ada.stub.JoinQueue(mm.JoinQueueRequest(game="go"), metadata=ada.metadata, timeout=5)
        ),
        Code.NOT_FOUND,
        "UNKNOWN_GAME",
    )
    expect_error(
        lambda: list(
            ada.stub.JoinQueue(
                mm.JoinQueueRequest(game="war", options={"x": "y"}),
                metadata=ada.metadata,
                timeout=5,
            )
        ),
        Code.INVALID_ARGUMENT,
        "UNKNOWN_OPTION",
    )
    expect_error(
        lambda: ada.LeaveQueue(mm.LeaveQueueRequest(ticket="nonsense")), Code.INVALID_ARGUMENT
    )
    stream = QueueStream(ada, mm.JoinQueueRequest(game="war"))
    assert stream.messages.get(timeout=10).position == 1
    stream.call.cancel()
    assert stream.ended.wait(10)
    deadline = time.monotonic() + 10
    while True:  # the cancelled stream took the ticket out: Ada may queue again
        try:
            again = QueueStream(ada, mm.JoinQueueRequest(game="war"))
            assert again.messages.get(timeout=10).position == 1
            break
        except (AssertionError, queue.Empty):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    again.call.cancel()
