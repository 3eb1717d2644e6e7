"""A burst of watchers on one replica: a thousand (five thousand in the slow
run) WatchGame streams opened at once are all served or told to retry
(RESOURCE_EXHAUSTED with a retry hint, never "the session store cannot be reached"); their
reads go over the watchers' own Redis connections, never those of moves, clocks, bots and
pairing; and meanwhile a move is acknowledged at the first try, the bot answers it and a
clock runs out on time. Real Redis (standalone and cluster), real gRPC on loopback."""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from matchmaker import watch
from matchmaker.redis_client import CLIENT_NAME
from tests.matchmaker.conftest import Client, WarReplica
from tests.matchmaker.helpers import (
    legal_actions,
    seconds,
    start_game,
    submission,
    sync_client,
    wait_for,
)
from wargame.runtime.status import error_details
from wargame.v1 import game_pb2, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

CHANNELS = 10  # client connections the watchers are spread over
WATCH_READS = {"xrange", "xrevrange"}  # the commands only watchers send


@dataclass
class Burst:
    """What the burst met."""

    served: int = 0  # watchers that caught up with their game
    refusals: int = 0  # RESOURCE_EXHAUSTED with a retry hint, retried
    errors: list[str] = field(default_factory=list)  # anything else


async def open_at_once(
    address: str,
    games: list[tuple[str, int]],
    count: int,
    burst: Burst | None = None,
    sent: threading.Event | None = None,
) -> Burst:
    """Open `count` spectator streams on `games` (id, version) at once; each retries after
    the hint it is refused with, until it has caught up with its game (`sent` is set once
    every stream has been asked for)."""
    burst = burst or Burst()
    asked = 0
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
    all_served = asyncio.Event()

    async def watch(index: int) -> None:
        nonlocal asked
        game_id, version = games[index % len(games)]
        while True:
            call = stubs[index % CHANNELS].WatchGame(mm.WatchGameRequest(game_id=game_id))
            asked += 1
            if asked == count and sent is not None:
                sent.set()
            try:
                async for message in call:
                    if message.version >= version and not message.HasField("notice"):
                        burst.served += 1
                        if burst.served == count:
                            all_served.set()
                        await all_served.wait()  # held until every watcher is in
                        call.cancel()
                        return
            except grpc.aio.AioRpcError as error:
                details = error_details(error)
                if (
                    details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
                    and details.reason == "TOO_MANY_WATCHERS"
                    and details.retry_after
                ):
                    burst.refusals += 1
                    # As a client does: after the hint, spread (jitter) so that a crowd
                    # refused at once does not come back at once.
                    await asyncio.sleep(details.retry_after * (1 + random.random()))
                    continue
                burst.errors.append(f"{details.code.name} {details.reason}: {details.message}")
                return

    try:
        await asyncio.gather(*(watch(index) for index in range(count)))
    finally:
        for channel in channels:
            await channel.close()
    return burst


class Sampler:
    """Looks at the matchmaker's Redis connections (CLIENT LIST) until stopped: the
    commands of the watchers seen on the connections of moves, clocks, bots and pairing."""

    def __init__(self, redis_url: str) -> None:
        self.client = sync_client(redis_url)
        self.looks = 0
        self.seen: set[str] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                lists: Any = self.client.client_list()
                nodes = lists if isinstance(lists, dict) else {"redis": lists}
                for clients in nodes.values():
                    for client in clients:
                        if client.get("name") == CLIENT_NAME and client.get("cmd") in WATCH_READS:
                            self.seen.add(client["cmd"])
                self.looks += 1
                self.stop.wait(0.01)
        finally:
            self.client.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)


def burst_while_playing(
    count: int,
    *,
    queue: int,
    clients: Callable[..., Client],
    redis_url: str,
    war_replica: WarReplica,
    engine_stub: Any,
) -> None:
    server, two = war_replica(
        watch_connections=2,
        watch_queue=queue,
        max_watchers=count + 50,
        watch_seat_reserve=10,
        max_watchers_per_address=count + 50,
    )
    spectated = [start_game(two, "war") for _ in range(10)]
    # A clocked game nobody moves in, and Ada against the bot, started with the burst.
    clocked = start_game(
        {"south": clients(server.address, "Sol"), "north": clients(server.address, "Nor")},
        "war",
        time_control=mm.TimeControl(base=seconds(1.0)),
    )
    ada = clients(server.address, "Ada")
    bot_game = ada.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", opponent=mm.SEAT_KIND_BOT, bot_time=seconds(0.05)
        )
    ).game
    sampler = Sampler(redis_url)
    try:
        games = [(game.id, game.version) for game in spectated]
        task = threading.Thread(
            target=lambda: results.append(asyncio.run(open_at_once(server.address, games, count)))
        )
        results: list[Burst] = []
        task.start()
        # Ada moves while the watchers pour in: acknowledged at the first try.
        action = legal_actions(engine_stub, bot_game.state)[0].action
        moved = ada.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=bot_game.id,
                expected_version=bot_game.version,
                idempotency_key=uuid.uuid4().hex,
                actions=[action],
            )
        ).game
        task.join(840)
        assert results, "the burst did not end"
    finally:
        sampler.close()
    burst = results[0]
    assert burst.errors == [], burst.errors[:5]
    assert burst.served == count
    assert sampler.looks > 0 and sampler.seen == set(), sampler.seen
    # The bot answered, the clock ran out: the replica's own work went on.
    wait_for(
        lambda: ada.GetGame(mm.GetGameRequest(game_id=bot_game.id)).game.version > moved.version
    )
    over = wait_for(
        lambda: (
            (g := ada.GetGame(mm.GetGameRequest(game_id=clocked.id)).game).status
            == mm.GAME_STATUS_FINISHED
            and g
        )
    )
    assert over.outcome.reason == game_pb2.OUTCOME_REASON_TIME
    print(f"{count} watchers at once: all served, {burst.refusals} told to retry first")


# The bursts of five thousand are slow: run with the slow tests only.
SLOW = (pytest.mark.slow, pytest.mark.timeout(1200))


@pytest.mark.parametrize(
    ("redis_url", "count", "queue"),
    [
        ("standalone", 1000, 50),
        ("cluster", 1000, 50),
        pytest.param("standalone", 5000, 1000, marks=SLOW),
    ],
    indirect=["redis_url"],
)
def test_watchers_at_once_are_served_or_told_to_retry_while_play_goes_on(
    clients: Callable[..., Client],
    redis_url: str,
    war_replica: WarReplica,
    engine_stub: Any,
    *,
    count: int,
    queue: int,
) -> None:
    burst_while_playing(
        count,
        queue=queue,
        clients=clients,
        redis_url=redis_url,
        war_replica=war_replica,
        engine_stub=engine_stub,
    )


def moves_behind_a_burst(count: int, war_replica: WarReplica, engine_stub: Any) -> None:
    """A move sent after `count` WatchGame calls is not queued behind them: when it is
    acknowledged, most of them have not even been taken up yet (before, gRPC took every
    call in one queue: a move waited for the whole burst), and moves keep being
    acknowledged while the burst is still opening; then every watcher is served."""
    moves = 6
    server, two = war_replica(
        watch_queue=count + 50,
        max_watchers=count + 50,
        watch_seat_reserve=10,
        max_watchers_per_address=count + 50,
    )
    spectated = [start_game(two, "war") for _ in range(10)]
    game = start_game(two, "war")

    async def taken(replica: Any) -> int:  # WatchGame calls the replica has begun to handle
        return int(replica.hub.watchers + sum(replica.hub.opening.values()))

    burst, sent = Burst(), threading.Event()
    games = [(spectated_game.id, spectated_game.version) for spectated_game in spectated]
    task = threading.Thread(
        target=lambda: asyncio.run(open_at_once(server.address, games, count, burst, sent))
    )
    task.start()
    try:
        wait_for(lambda: sent.is_set() and server.call(taken) > 0)
        taken_then, served_then = [], []
        for _ in range(moves):
            side = game.state.to_act[0]
            first = legal_actions(engine_stub, game.state)[0].action
            game = two[side].SubmitActions(submission(game, first)).game
            taken_then.append(server.call(taken))
            served_then.append(burst.served)
    finally:
        task.join(840)
    print(f"WatchGame calls taken up at each move: {taken_then}; served: {served_then}")
    assert taken_then[0] < count // 2, taken_then
    assert served_then[-1] < count, served_then  # the moves went on while the burst opened
    assert burst.errors == [], burst.errors[:5]
    assert burst.served == count


@pytest.mark.parametrize("count", [1000, pytest.param(5000, marks=SLOW)])
def test_moves_sent_behind_a_burst_of_watchers_are_taken_up_before_them(
    war_replica: WarReplica, engine_stub: Any, count: int
) -> None:
    moves_behind_a_burst(count, war_replica, engine_stub)


def test_spectators_opening_one_after_another_on_a_game_read_it_once(
    war_replica: WarReplica, redis_url: str, engine_stub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A burst arrives spread out (gRPC takes its calls up a few at a time), so streams
    opening on one game one after another share no read in flight: the game's feed keeps
    its spectators' read, and each stream opening after it takes it without a read of its
    own, until a move is handed out; a stream opening after the move reads again and is
    sent the move, and the streams already open are sent it too (none missed it)."""
    monkeypatch.setattr(watch, "KEEP_SECONDS", 3600.0)  # not timed: dropped by a move only
    server, two = war_replica()
    game = start_game(two, "war")
    redis = sync_client(redis_url)
    channel = grpc.insecure_channel(server.address)
    stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
    streams: list[Any] = []

    def open_stream(version: int) -> None:
        """One spectator stream more, read until it caught up with `version`."""
        stream = stub.WatchGame(mm.WatchGameRequest(game_id=game.id))
        streams.append(stream)
        while next(stream).version < version:
            pass

    def reads() -> int:  # XRANGE calls so far: a catch-up's read of the game's stream
        return int(redis.info("commandstats").get("cmdstat_xrange", {}).get("calls", 0))

    try:
        open_stream(game.version)  # the first: its game has a feed from now on

        async def listening(replica: Any) -> bool:  # the feed's read on its subscription done
            reading = replica.hub.feeds[game.id]._reading
            return reading is not None and reading.done()

        wait_for(lambda: server.call(listening))
        before = reads()
        for _ in range(20):
            open_stream(game.version)
        kept_reads = reads() - before
        side = game.state.to_act[0]
        first = legal_actions(engine_stub, game.state)[0].action
        moved = two[side].SubmitActions(submission(game, first)).game
        for stream in streams:  # every open stream is sent the move
            while next(stream).version < moved.version:
                pass
        open_stream(moved.version)  # one opening after the move catches up with it
    finally:
        for stream in streams:
            stream.cancel()
        channel.close()
        redis.close()
    assert kept_reads == 0, kept_reads
