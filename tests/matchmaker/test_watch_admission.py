"""Who gets a live stream: streams are capped per caller address (an IPv6
caller by its /64, a trusted proxy's caller by x-forwarded-for) and per player, slots are
reserved for a game's seated players, a seated player refused a stream is never
abandoned for it, and an update costs the same whatever the number of streams that do
not read it. Real Redis (standalone and cluster), real gRPC on loopback."""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import grpc
import pytest

from matchmaker import keys, service, views
from tests.matchmaker.conftest import Client, InProcessMatchmaker, WarReplica, both_stores
from tests.matchmaker.helpers import (
    Watcher,
    expect_error,
    play_moves,
    start_game,
    sync_client,
    wait_for,
)
from tests.matchmaker.test_presence import FAST, redis_ms, stream_notices, swept_after
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration


async def _watchers(replica: Any) -> int:
    return int(replica.hub.watchers)


def held(server: InProcessMatchmaker, count: int) -> None:
    """Wait until the replica holds `count` streams."""
    wait_for(lambda: server.call(_watchers) == count)


def refused(client: Client, game_id: str, metadata: Any = None) -> str:
    """Open a stream that must be refused with TOO_MANY_WATCHERS and a retry hint: the
    refusal's message."""
    details = expect_error(
        lambda: next(
            iter(
                client.stub.WatchGame(
                    mm.WatchGameRequest(game_id=game_id),
                    metadata=metadata if metadata is not None else client.metadata,
                    timeout=30,
                )
            )
        ),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_WATCHERS",
    )
    assert details.retry_after and details.retry_after > 0
    return details.message


@both_stores
def test_a_seated_player_gets_its_stream_when_spectators_fill_the_replica(
    clients: Callable[..., Client], war_replica: WarReplica
) -> None:
    # Three streams, one of them for seated players only.
    server, two = war_replica(max_watchers=3, watch_seat_reserve=1)
    game = start_game(two, "war")
    north = Watcher(two["north"], game.id)
    fan = Watcher(clients(server.address, "Fan"), game.id)
    held(server, 2)
    # Spectators have taken all they may: one more is refused...
    assert "most live streams (2)" in refused(clients(server.address, "Crowd"), game.id)
    # ...and South, seated, still gets its own stream (the reserved slot).
    south = Watcher(two["south"], game.id)
    assert south.until(game.version)[-1].game.your_side == "south"
    held(server, 3)
    for watcher in (north, fan, south):
        watcher.close()


def forwarded(address: str) -> tuple[tuple[str, str], ...]:
    return (("x-forwarded-for", address),)


def test_one_address_and_one_player_hold_at_most_their_streams(
    clients: Callable[..., Client], war_replica: WarReplica
) -> None:
    """Callers behind a trusted proxy are counted by the address it names, IPv6 ones by
    their /64; a player is counted whatever address it calls from; a seated player is not
    counted against its address."""
    server, two = war_replica(
        trusted_proxies="127.0.0.0/8", max_watchers_per_address=2, max_watchers_per_player=2
    )
    game = start_game(two, "war")
    spectator = clients(server.address)
    streams = [
        spectator.stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id), metadata=forwarded(address), timeout=60
        )
        for address in ("2001:db8::1", "2001:db8::2")
    ]
    for stream in streams:
        assert next(stream).version >= 1  # open: it catches up
    held(server, 2)
    # A third from the same /64 is refused; from another /64, and the seated players from
    # the same address, are not.
    assert "your address" in refused(spectator, game.id, forwarded("2001:db8::3"))
    other = spectator.stub.WatchGame(
        mm.WatchGameRequest(game_id=game.id), metadata=forwarded("2001:db8:0:1::1"), timeout=60
    )
    assert next(other).version >= 1
    seated = [
        two["south"].stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id),
            metadata=(*two["south"].metadata, *forwarded("2001:db8::4")),
            timeout=60,
        )
        for _ in range(2)
    ]
    for stream in seated:
        assert next(stream).version >= 1  # open: it catches up
    # South holds its two: a third is refused, from any address.
    assert "you hold" in refused(
        two["south"], game.id, (*two["south"].metadata, *forwarded("192.0.2.7"))
    )
    fan = clients(server.address, "Fan")
    fans = [Watcher(fan, game.id) for _ in range(2)]
    held(server, 7)
    assert "you hold" in refused(fan, game.id, (*fan.metadata, *forwarded("192.0.2.8")))
    for stream in [*streams, other, *seated]:
        stream.cancel()
    for watcher in fans:
        watcher.close()


@both_stores
def test_a_seated_player_refused_a_stream_is_never_abandoned(
    clients: Callable[..., Client], redis_url: str, war_replica: WarReplica, engine_stub: Any
) -> None:
    """South's stream ends and spectators take every stream at once (no reserve): South,
    refused while it keeps trying, is never warned when its turn comes, let alone abandoned.
    Each refusal is a knock that counts as presence for `presence_ttl`, 8 s here: with 2 s, a
    busy machine kept South's next try later than that, and South was rightly seen to have
    gone. (South had a stream: no start's grace counts it as there.)"""
    server, two = war_replica(
        **{**FAST, "presence_ttl": 8.0, "max_watchers": 3, "watch_seat_reserve": 0}
    )
    game = start_game(two, "war")
    north = Watcher(two["north"], game.id)  # there throughout
    south = Watcher(two["south"], game.id)
    fans = [Watcher(clients(server.address, "Fan0"), game.id)]
    held(server, 3)
    game = play_turn(engine_stub, two, game.id)  # South moves: North to act
    south.close()  # South has left (not to act: not warned)
    held(server, 2)
    fans.append(Watcher(clients(server.address, "Fan1"), game.id))
    held(server, 3)
    trying = threading.Event()
    stop = threading.Event()
    refusals: list[str] = []

    def keep_trying() -> None:  # as a client does: again after the retry hint
        while not stop.is_set():
            refusals.append(refused(two["south"], game.id))
            trying.set()
            stop.wait(0.2)

    thread = threading.Thread(target=keep_trying, daemon=True)
    thread.start()
    try:
        assert trying.wait(30)  # refused once: knocked (a refusal is given after the knock)
        souths = [kind for kind, side in stream_notices(redis_url, game.id) if side == b"south"]
        assert souths == [b"DISCONNECTED", b"RECONNECTED"]
        game = play_turn(engine_stub, two, game.id)  # North moves: South to act
        # The sweeper looks at the game again and again, long past the abandonment
        # deadline South would have had since its turn came.
        begun = redis_ms(redis_url)
        wait_for(
            lambda: (
                swept_after(redis_url, game.id, begun + 4 * ABANDON_MS)
                or not swept_after(redis_url, game.id, 0)
            ),  # over: no longer due
            60,
        )
    finally:
        stop.set()
        thread.join(30)
    game = two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert game.status == mm.GAME_STATUS_RUNNING, game.outcome
    assert game.state.to_act[0] == "south"
    assert (b"ABANDON_WARNING", b"south") not in stream_notices(redis_url, game.id)
    assert all("this server holds its most" in refusal for refusal in refusals)
    for watcher in (north, *fans):
        watcher.close()


def play_turn(engine: Any, players: dict[str, Client], game_id: str) -> mm.GameView:
    """Random legal actions by the side to act until the turn passes to the other."""
    rng = random.Random(game_id)
    viewer = next(iter(players.values()))
    mover = viewer.GetGame(mm.GetGameRequest(game_id=game_id)).game.state.to_act[0]
    while True:
        game = play_moves(engine, players, game_id, 1, rng)
        assert game.status == mm.GAME_STATUS_RUNNING
        if game.state.to_act[0] != mover:
            return game


ABANDON_MS = int(FAST["abandon_after"] * 1000)


@dataclass
class ViewsBuilt:
    """Game views the service built: `live` (for calls and live updates) and `read_back`
    (for streams reading their way back, in `read_backs` reads of the game's stream)."""

    live: int = 0
    read_back: int = 0
    read_backs: int = 0


@pytest.fixture
def views_built(monkeypatch: pytest.MonkeyPatch) -> Iterator[ViewsBuilt]:
    """What the service built from now on (`ViewsBuilt`)."""
    built = ViewsBuilt()
    build = views.game_view
    catch_up = service.MatchmakerService._catch_up
    reading_back: ContextVar[bool] = ContextVar("reading_back", default=False)

    def counted(*args: Any, **kwargs: Any) -> Any:
        if reading_back.get():
            built.read_back += 1
        else:
            built.live += 1
        return build(*args, **kwargs)

    async def counted_catch_up(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.read_backs += 1
        token = reading_back.set(True)
        try:
            return await catch_up(self, *args, **kwargs)
        finally:
            reading_back.reset(token)

    monkeypatch.setattr(service, "game_view", counted)
    monkeypatch.setattr(service.MatchmakerService, "_catch_up", counted_catch_up)
    yield built


def newest_entry(redis_url: str, game_id: str) -> bytes:
    """The id of the newest entry of a game's stream."""
    client: Any = sync_client(redis_url)
    try:
        ((entry_id, _),) = client.xrevrange(keys.game_stream(game_id), "+", "-", count=1)
    finally:
        client.close()
    return bytes(entry_id)


def stream_entries(redis_url: str, game_id: str, after: bytes) -> Counter[int]:
    """How many entries (an update and the notices after it) a game's stream holds per
    version after the entry `after` (a stream id)."""
    client: Any = sync_client(redis_url)
    try:
        rows = client.xrange(keys.game_stream(game_id), b"(" + after, "+")
    finally:
        client.close()
    return Counter(int(entry_id.partition(b"-")[0]) for entry_id, _ in rows)


@both_stores
def test_an_update_costs_the_same_whatever_the_number_of_unread_streams(
    clients: Callable[..., Client],
    redis_url: str,
    war_replica: WarReplica,
    engine_stub: Any,
    views_built: ViewsBuilt,
) -> None:
    """Forty spectator streams nobody reads: each update is built once for all of them
    (one view per side and entry of the newest version, not one per stream), a reader
    beside them gets every update, and each unread stream, read at last, hands out every
    version once, in order (from its buffer or, fallen behind, read back from the game's
    stream)."""
    server, two = war_replica(abandon_after=600.0)
    game = start_game(two, "war")
    # The feed builds views for the entries written after the streams opened: the moves'
    # updates, and the notices of the sweeper, which may come before the first move.
    opened = newest_entry(redis_url, game.id)
    unread = [
        clients(server.address).stub.WatchGame(
            mm.WatchGameRequest(game_id=game.id, after_version=game.version), timeout=120
        )
        for _ in range(40)
    ]
    reader = Watcher(clients(server.address), game.id, after=game.version)
    held(server, 41)
    before = replace(views_built)
    moves = 24
    played = play_moves(engine_stub, two, game.id, moves, random.Random(7))
    updates = played.version - game.version
    assert updates > 20  # more than a watcher buffers (watch.BUFFER)
    reader.until(played.version, 60)
    built = replace(views_built)
    # Counted after the views: every entry a view was built for is in the stream by then
    # (on a busy machine the sweeper announces the players without a stream as gone).
    entries = stream_entries(redis_url, game.id, opened)
    # GetGame and SubmitActions build one view each per move (play_moves calls both);
    # the live updates at most one per entry: the update and the sweeper's notices.
    live = built.live - before.live
    assert live <= (2 * updates + 1) + entries.total(), (live, updates, entries)
    # A stream left behind (the reader, on a busy machine) reads its way back: each read
    # builds one view per entry of the game's newest version, none per update it missed.
    reads = built.read_backs - before.read_backs
    assert built.read_back - before.read_back <= reads * max(entries.values()), (built, reads)
    for stream in unread:
        versions = []
        for message in stream:
            if not message.HasField("notice"):
                versions.append(message.version)
            if message.version == played.version and not message.HasField("notice"):
                break
        assert versions == list(range(game.version + 1, played.version + 1)), versions
        stream.cancel()
    reader.close()
