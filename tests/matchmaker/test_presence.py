"""Presence: a player who watches its game is there, however long it thinks;
one who leaves is announced, warned, and loses as abandoned only if it does not come back.
Time is moved by configuration: abandonment after a fraction of a second, not ten minutes.
Every test runs on a standalone Redis and on a Redis Cluster."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.presence import Presence
from matchmaker.record import GameRecord, Seat
from matchmaker.server import Replica
from matchmaker.settings import Settings
from matchmaker.store import CommitOutcome
from tests.matchmaker.conftest import (
    Client,
    InProcessMatchmaker,
    WarReplica,
    both_stores,
    fast_settings,
    run,
)
from tests.matchmaker.helpers import (
    StreamReader,
    Watcher,
    captured_logs,
    expect_error,
    game_record,
    play_moves,
    start_game,
    sync_client,
    wait_for,
)
from tests.matchmaker.test_store import change, make_store
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

KEPT = 3_600_000  # ms the presence hash is kept, in the script's tests
ABANDON = 0.4  # seconds from the warning to the abandonment, in these tests' settings
# A presence renewed every 0.1 s lives 2 s: a busy machine may hold a renewal up for more
# than a second, and a present player must never seem to have left.
FAST = {
    "abandon_after": ABANDON,
    "presence_interval": 0.1,
    "presence_ttl": 2.0,
    "presence_check": 0.2,
}


@pytest.fixture
def two(war_replica: WarReplica) -> dict[str, Client]:
    """South and North on a replica with these tests' presence settings."""
    return war_replica(**FAST)[1]


def notices(watcher: Watcher) -> list[mm.WatchGameResponse]:
    """The notices a watcher has received so far (the rest of its queue is kept)."""
    seen = []
    while not watcher.messages.empty():
        message = watcher.messages.get()
        if message.HasField("notice"):
            seen.append(message)
    return seen


def swept_after(redis_url: str, game_id: str, moment_ms: int) -> bool:
    """True once the sweeper has looked at the game after `moment_ms` (Redis time): a look
    reschedules it `presence_check` later."""
    client = sync_client(redis_url)
    try:
        due = keys.game_due(game_id) or keys.due(keys.shard(game_id, Settings().index_shards))
        score = client.zscore(due, game_id)
    finally:
        client.close()
    return score is not None and score > moment_ms + FAST["presence_check"] * 1000


def redis_ms(redis_url: str) -> int:
    client = sync_client(redis_url)
    try:
        seconds, micros = client.time()
    finally:
        client.close()
    return int(seconds) * 1000 + int(micros) // 1000


def connected(game: mm.GameView) -> dict[str, bool]:
    return {seat.side: seat.connected for seat in game.seats}


def watcher_fields(redis_url: str, game_id: str) -> dict[str, int]:
    """The game's presence hash: watcher field (`<side>|<watch id>`) -> until (ms)."""
    client: Any = sync_client(redis_url)
    try:
        fields = client.hgetall(keys.game_presence(game_id))
    finally:
        client.close()
    return {field.decode(): int(until) for field, until in fields.items()}


def watching(redis_url: str, game_id: str) -> set[str]:
    """The sides with a watcher in the game's presence hash."""
    return {field.partition("|")[0] for field in watcher_fields(redis_url, game_id)}


def settle(redis_url: str, game_id: str, *watchers: Watcher) -> None:
    """Wait until both players watch and the sweeper has looked at the game since, then
    forget the notices of the moments before."""
    wait_for(lambda: watching(redis_url, game_id) == {"south", "north"})
    since = redis_ms(redis_url)
    wait_for(lambda: swept_after(redis_url, game_id, since))
    for watcher in watchers:
        notices(watcher)


def watched_game(two: dict[str, Client], redis_url: str) -> tuple[mm.GameView, Watcher, Watcher]:
    """A Game of War between `two`, each watching it, settled (see `settle`): the game,
    South's watcher and North's."""
    game = start_game(two, "war")
    south, north = Watcher(two["south"], game.id), Watcher(two["north"], game.id)
    settle(redis_url, game.id, south, north)
    return game, south, north


@both_stores
def test_a_long_think_with_the_client_open_is_never_abandoned(
    war_replica: WarReplica, engine_stub: Any, redis_url: str
) -> None:
    # A presence of 5 s here: a machine busy enough to hold the replica's loop for 2 s
    # (three suites and a hog on 2 cores did) must not make a present player seem gone.
    settings = {**FAST, "abandon_after": 1.0, "presence_ttl": 5.0}
    think = 12 * settings["abandon_after"]  # twelve minutes against ten
    assert think > 2 * settings["presence_ttl"]  # the think outlasts two lifetimes
    _server, two = war_replica(**settings)
    game, south, north = watched_game(two, redis_url)  # a friendly game: untimed, unrated
    game = play_moves(engine_stub, two, game.id, 2, random.Random(4))  # south to act again
    think_until = redis_ms(redis_url) + int(think * 1000)
    wait_for(lambda: swept_after(redis_url, game.id, think_until), timeout=60)
    now = two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert now.status == mm.GAME_STATUS_RUNNING and now.version == game.version
    assert connected(now) == {"south": True, "north": True}
    assert notices(north) == [], "a present player was announced as gone"
    game = play_moves(engine_stub, two, game.id, 1, random.Random(5))  # and then it moves
    assert game.status == mm.GAME_STATUS_RUNNING
    south.close()
    north.close()


@both_stores
def test_a_player_who_leaves_is_warned_then_loses_as_abandoned(
    two: dict[str, Client], redis_url: str
) -> None:
    game, south, north = watched_game(two, redis_url)
    south.close()  # south, to act, closes its client
    left, _ = north.notice(mm.NOTICE_KIND_DISCONNECTED, "south")
    assert left.notice.text == "south disconnected" and left.version == game.version
    assert connected(left.game) == {"south": False, "north": True}
    warning, _ = north.notice(mm.NOTICE_KIND_ABANDON_WARNING, "south")
    deadline_ms = warning.notice.deadline.ToMilliseconds()
    assert deadline_ms - warning.at.ToMilliseconds() == pytest.approx(ABANDON * 1000, abs=5)
    assert "ends as abandoned at" in warning.notice.text and "unless they come back" in (
        warning.notice.text
    )
    final = north.until(game.version + 1)[-1]
    assert final.game.status == mm.GAME_STATUS_FINISHED
    assert final.game.outcome.reason == game_pb2.OUTCOME_REASON_ABANDONED
    assert final.game.outcome.winner == "north"
    assert final.at.ToMilliseconds() >= deadline_ms  # never before the warned time
    assert north.ended.wait(10)


@both_stores
def test_a_game_against_the_bot_waits_for_its_player_who_leaves_on_its_turn(
    two: dict[str, Client], redis_url: str
) -> None:
    # Nobody else waits in a game against the bot: the player who leaves on its turn is
    # never warned nor abandoned, and the sweeper has nothing to look at until it is back.
    player = two["south"]
    game = player.CreateGame(
        mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT)
    ).game
    watcher = Watcher(player, game.id)
    wait_for(lambda: watching(redis_url, game.id) == {"south"})
    watcher.close()
    wait_for(
        lambda: not connected(player.GetGame(mm.GetGameRequest(game_id=game.id)).game)["south"]
    )
    assert warned(redis_url, game.id) == {}
    client: Any = sync_client(redis_url)
    try:
        index = keys.game_due(game.id) or keys.due(keys.shard(game.id, Settings().index_shards))
        assert client.zscore(index, game.id) is None  # no look due, no abandonment coming
    finally:
        client.close()
    assert (b"ABANDON_WARNING", b"south") not in stream_notices(redis_url, game.id)
    back = Watcher(player, game.id)  # it comes back, however much later, and plays on
    wait_for(lambda: connected(player.GetGame(mm.GetGameRequest(game_id=game.id)).game)["south"])
    view = player.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert view.status == mm.GAME_STATUS_RUNNING and view.version == game.version
    back.close()


def game_field(redis_url: str, game_id: str, name: str) -> bytes | None:
    """One field of the game's hash as stored."""
    client: Any = sync_client(redis_url)
    try:
        raw: bytes | None = client.hget(keys.game(game_id), name)
    finally:
        client.close()
    return raw


def paired(two: dict[str, Client]) -> mm.GameView:
    """The game quick-match pairs `two` into (both queue, the pairer seats them)."""
    streams = [
        StreamReader(
            client.stub.JoinQueue(
                mm.JoinQueueRequest(game="war"), metadata=client.metadata, timeout=60
            )
        )
        for client in two.values()
    ]
    games = []
    for stream in streams:
        message = stream.messages.get(timeout=60)
        while not message.game.id:
            message = stream.messages.get(timeout=60)
        games.append(message.game)
    assert games[0].id == games[1].id
    return games[0]


@both_stores
@pytest.mark.parametrize("seating", ["join", "pairing"])
def test_a_player_just_seated_is_present_before_its_first_stream_opens(
    war_replica: WarReplica, redis_url: str, seating: str
) -> None:
    # The side to act is seated but its client has not opened its stream yet; the other's
    # has. For a presence lifetime from the start the first counts as there: the other is
    # not told it disconnected, and no abandonment warning (nor deadline) is given, however
    # often the sweeper looks meanwhile.
    _server, two = war_replica(**{**FAST, "presence_ttl": 600.0})
    game = start_game(two, "war") if seating == "join" else paired(two)
    (later,) = game.state.to_act
    seated = {seat.player.id: seat.side for seat in game.seats}
    waiting = next(client for client in two.values() if seated[client.player_id] != later)
    watcher = Watcher(waiting, game.id)
    wait_for(lambda: watching(redis_url, game.id) == {seated[waiting.player_id]})
    since = redis_ms(redis_url)
    wait_for(lambda: swept_after(redis_url, game.id, since))
    assert game_field(redis_url, game.id, "away") is None
    assert warned(redis_url, game.id) == {}
    assert stream_notices(redis_url, game.id) == []
    view = waiting.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert all(connected(view).values())
    assert notices(watcher) == []
    watcher.close()


@both_stores
def test_a_player_seated_who_never_opens_a_stream_is_gone_once_a_presence_lifetime_has_passed(
    two: dict[str, Client], redis_url: str
) -> None:
    game = start_game(two, "war")  # South, to act, never watches; North does
    north = Watcher(two["north"], game.id)
    left, _ = north.notice(mm.NOTICE_KIND_DISCONNECTED, "south")
    started = int(game_field(redis_url, game.id, "started_ms") or 0)
    assert started and left.at.ToMilliseconds() >= started + FAST["presence_ttl"] * 1000
    warning, _ = north.notice(mm.NOTICE_KIND_ABANDON_WARNING, "south")
    assert warning.notice.deadline.ToMilliseconds() >= started + FAST["presence_ttl"] * 1000
    north.close()


def warned(redis_url: str, game_id: str) -> dict[str, int]:
    """The game's warned sides as its hash keeps them: side -> deadline (ms)."""
    client: Any = sync_client(redis_url)
    try:
        raw = client.hget(keys.game(game_id), "warned")
    finally:
        client.close()
    return {side: int(ms) for side, ms in json.loads(raw or "{}").items()}


@both_stores
def test_the_opponent_sees_disconnect_and_reconnect_and_a_return_in_time_saves_the_game(
    war_replica: WarReplica, redis_url: str
) -> None:
    # A deadline far off: the return is in time however slow the machine (the sweeper
    # would end a game whose warning outlived the return only at that deadline, so the
    # warning itself is read).
    _server, two = war_replica(**{**FAST, "abandon_after": 600.0})
    game, south, north = watched_game(two, redis_url)
    # North, not to act, leaves and comes back: announced both ways, never warned.
    north.close()
    left, _ = south.notice(mm.NOTICE_KIND_DISCONNECTED, "north")
    assert connected(left.game)["north"] is False
    north = Watcher(two["north"], game.id)
    back, between = south.notice(mm.NOTICE_KIND_RECONNECTED, "north")
    assert back.notice.text == "north reconnected" and connected(back.game)["north"] is True
    assert not any(m.notice.kind == mm.NOTICE_KIND_ABANDON_WARNING for m in between)
    assert warned(redis_url, game.id) == {}
    # South, to act, leaves, is warned, and returns before its deadline: the warning is
    # gone with the return (the script that announces it clears it), and the game goes on.
    # North's new stream replays the game's notices from its start, which may hold a
    # warning from before South's first stream opened: the one announced is the one kept.
    south.close()
    wait_for(lambda: "south" in warned(redis_url, game.id))
    deadline_ms = warned(redis_url, game.id)["south"]
    warning, _ = north.notice(mm.NOTICE_KIND_ABANDON_WARNING, "south")
    while warning.notice.deadline.ToMilliseconds() != deadline_ms:
        warning, _ = north.notice(mm.NOTICE_KIND_ABANDON_WARNING, "south")
    assert warned(redis_url, game.id) == {"south": deadline_ms}
    south = Watcher(two["south"], game.id)
    north.notice(mm.NOTICE_KIND_RECONNECTED, "south")
    assert warned(redis_url, game.id) == {}
    returned = redis_ms(redis_url)
    wait_for(lambda: swept_after(redis_url, game.id, returned), timeout=60)
    view = two["north"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert view.status == mm.GAME_STATUS_RUNNING and connected(view)["south"] is True
    assert warned(redis_url, game.id) == {}
    south.close()
    north.close()


@both_stores
def test_presence_survives_a_change_of_replica(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
    redis_url: str,
) -> None:
    # A presence lives a minute here, so the client's move takes all the time it needs;
    # the end of that minute is then brought forward by hand.
    settings = {**FAST, "presence_ttl": 60.0}
    first = replica(**settings)
    second = replica(**settings)
    two = {"south": clients(first.address, "South"), "north": clients(second.address, "North")}
    game = start_game(two, "war")
    south = Watcher(two["south"], game.id)
    north = Watcher(two["north"], game.id)
    settle(redis_url, game.id, south, north)
    (old,) = [field for field in watcher_fields(redis_url, game.id) if field.startswith("south|")]
    first.stop()  # south's replica goes away; its stream ends with it
    assert south.ended.wait(20)
    assert old in watcher_fields(redis_url, game.id), "a shutdown took the presence away"
    moved = Client(second.address, token=two["south"].token)
    south = Watcher(moved, game.id)  # the client reconnects to the other replica
    south.until(game.version)
    wait_for(lambda: len(watcher_fields(redis_url, game.id)) == 3)  # north, south twice
    # The old stream's presence lapses now: nobody renews it any more.
    client: Any = sync_client(redis_url)
    try:
        client.hset(keys.game_presence(game.id), old, redis_ms(redis_url) - 1)
    finally:
        client.close()
    since = redis_ms(redis_url)
    wait_for(lambda: swept_after(redis_url, game.id, since))
    assert old not in watcher_fields(redis_url, game.id)
    assert notices(north) == [], "a player who only changed replica was announced as gone"
    view = moved.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert view.status == mm.GAME_STATUS_RUNNING and connected(view)["south"] is True
    south.close()
    north.close()


@both_stores
def test_a_seated_player_refused_a_stream_is_present_all_the_same(
    clients: Callable[..., Client], redis_url: str, war_replica: WarReplica
) -> None:
    # Room for two streams, none reserved; the warning's deadline far off (south, to act,
    # has left).
    changes = {**FAST, "abandon_after": 60.0, "max_watchers": 2, "watch_seat_reserve": 0}
    server, two = war_replica(**changes)
    game = start_game(two, "war")
    north = Watcher(two["north"], game.id)
    spectator = Watcher(clients(server.address, "Spectator"), game.id)
    north.notice(mm.NOTICE_KIND_ABANDON_WARNING, "south")
    wait_for(lambda: server.call(_watchers) == 2)  # the spectator's stream is held too
    expect_error(
        lambda: next(iter(two["south"].WatchGame(mm.WatchGameRequest(game_id=game.id)))),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_WATCHERS",
    )
    # Refused, South is knocking: there, its warning lifted.
    north.notice(mm.NOTICE_KIND_RECONNECTED, "south")
    assert "south" in watching(redis_url, game.id)
    spectator.close()
    wait_for(lambda: server.call(_watchers) == 1)
    south = Watcher(two["south"], game.id)  # room again: south's own stream
    wait_for(lambda: server.call(_watchers) == 2)
    south.close()
    north.close()


def stream_notices(redis_url: str, game_id: str) -> list[tuple[bytes, bytes]]:
    """The (kind, side) of every notice in a game's stream."""
    client: Any = sync_client(redis_url)
    try:
        rows = client.xrange(keys.game_stream(game_id))
    finally:
        client.close()
    return [(fields[b"n"], fields[b"s"]) for _, fields in rows if b"n" in fields]


async def _watchers(replica: Any) -> int:
    return int(replica.hub.watchers)


def test_a_failed_renewal_is_logged_and_the_renewals_go_on(redis_url: str) -> None:
    """A round of renewals that Redis refuses (here a presence key of the wrong type) is
    logged for the operator, and the next round comes all the same."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, presence_interval=0.05))
        try:
            presence = replica.presence
            await replica.store.redis.set(keys.game_presence("g-broken"), "not a hash")
            presence.watching["g-broken"] = {"south|w1"}
            stop = asyncio.Event()
            with captured_logs() as logs:
                running = asyncio.create_task(presence.run(stop))

                def failures() -> list[dict[str, Any]]:
                    return [e for e in logs if e["event"] == "presence renewal failed"]

                deadline = time.monotonic() + 15
                while len(failures()) < 2:  # two rounds: the loop survived the first
                    assert time.monotonic() < deadline, "timed out"
                    await asyncio.sleep(0.01)
                stop.set()
                presence.poke.set()
                await running
            assert {(e["log_level"], "WRONGTYPE" in e["error"]) for e in failures()} == {
                ("warning", True)
            }
        finally:
            await replica.close()

    asyncio.run(scenario())


class ChangedMeanwhile(Presence):
    """A replica's presence that, before each of its first `changes` scripts, sees another
    replica commit a change to the game (a move, a chat...): the version it read is stale
    by the time its script runs, as happens when two replicas work on one game at once."""

    def __init__(self, replica: Replica, changes: int) -> None:
        super().__init__(replica.store, replica.scripts, replica.settings)
        self.changes = changes

    async def _run(self, game: GameRecord, add: str, remove: str) -> Any:
        if self.changes:
            self.changes -= 1
            current, now, _ = await self.store.load(game.id)
            assert current is not None
            changed = dataclasses.replace(current, version=current.version + 1, updated_ms=now)
            result = await self.store.commit_change(current, changed, now, mm.WatchGameResponse())
            assert result.outcome == CommitOutcome.OK
        return await super()._run(game, add, remove)


def running_war_game(game_id: str) -> GameRecord:
    """A running Game of War between two people, South to act, nobody known to have left."""
    return game_record(
        game_pb2.GameState(game="war", position="p", to_act=["south"]),
        [Seat("south", "p-south", "South"), Seat("north", "p-north", "North")],
        id=game_id,
        version=1,
        updated_ms=1,
        acted_ms=1,
    )


@both_stores
def test_a_presence_change_made_while_the_game_changed_is_applied_to_the_new_version(
    redis_url: str,
) -> None:
    """North arrives while another replica commits a change to the game: the presence
    script finds the game moved on, and the update is made again on the new version (South,
    to act, who never came, is then announced as gone and warned), not dropped."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, abandon_after=60.0))
        try:
            store = replica.store
            redis: Any = store.redis
            game = running_war_game("g-changed-meanwhile")
            now = await store.time_ms()
            created = await store.commit_change(None, game, now, mm.WatchGameResponse())
            assert created.outcome == CommitOutcome.OK
            presence = ChangedMeanwhile(replica, changes=2)
            await presence.arrive(game.id, "north")
            assert presence.changes == 0  # the game changed twice under it
            after, now, _ = await store.load(game.id)
            assert after is not None and after.version == 3
            assert set(after.away) == {"south"} and set(after.warned) == {"south"}
            assert after.warned["south"] - after.away["south"] == 60_000
            kinds = {
                (fields[b"n"], fields[b"s"])
                for _, fields in await redis.xrange(keys.game_stream(game.id))
                if b"n" in fields
            }
            assert kinds == {(b"DISCONNECTED", b"south"), (b"ABANDON_WARNING", b"south")}
            # The sweeper comes round at the warned deadline (or sooner).
            due_key = store._due(game.id)
            due = await redis.zscore(due_key, game.id)
            assert due is not None and due <= after.warned["south"]
            fields = await redis.hkeys(keys.game_presence(game.id))
            assert [field.decode().partition("|")[0] for field in fields] == ["north"]
        finally:
            await replica.close()

    asyncio.run(scenario())


async def running_and_watched(replica: Replica, game_id: str) -> tuple[Presence, str]:
    """A running Game of War stored under `game_id`, a presence of this replica's own to
    watch it with, and the key of the game's presence hash."""
    store = replica.store
    created = await store.commit_change(
        None, running_war_game(game_id), await store.time_ms(), mm.WatchGameResponse()
    )
    assert created.outcome == CommitOutcome.OK
    return Presence(store, replica.scripts, replica.settings), keys.game_presence(game_id)


def test_a_watcher_stream_that_ends_takes_its_field_out_of_the_presence_hash_at_once(
    redis_url: str,
) -> None:
    """Leaving removes the watcher's own field then and there (not when its lifetime runs
    out), and only that field: a player watching on two streams is still there."""

    async def scenario() -> None:
        replica = await Replica.connect(fast_settings(redis_url, abandon_after=60.0))
        try:
            presence, hash_key = await running_and_watched(replica, "g-watcher-leaves")
            first = await presence.arrive("g-watcher-leaves", "north")
            second = await presence.arrive("g-watcher-leaves", "north")
            redis: Any = replica.store.redis
            assert {f.decode() for f in await redis.hkeys(hash_key)} == {first, second}
            await presence.leave("g-watcher-leaves", first)
            assert {f.decode() for f in await redis.hkeys(hash_key)} == {second}
        finally:
            await replica.close()

    asyncio.run(scenario())


def test_the_watcher_fields_outlive_any_outage_of_the_matchmakers(redis_url: str) -> None:
    """A restarted replica keeps the lapsed fields of its predecessors' streams for a
    lifetime: they must still be there however long the matchmakers were down, so the hash
    of fields is kept as long as the game's keys, whether a field was added or renewed."""

    async def scenario() -> None:
        settings = fast_settings(redis_url, presence_ttl=2.0, running_game_ttl=3600.0)
        replica = await Replica.connect(settings)
        try:
            presence, hash_key = await running_and_watched(replica, "g-outage")
            redis: Any = replica.store.redis
            await presence.arrive("g-outage", "north")
            assert 3_590_000 < await redis.pttl(hash_key) <= 3_600_000
            await redis.pexpire(hash_key, 1_000)
            await presence.renew()
            assert 3_590_000 < await redis.pttl(hash_key) <= 3_600_000
        finally:
            await replica.close()

    asyncio.run(scenario())


def test_a_lapsed_watcher_is_kept_by_a_young_replica_and_taken_out_by_an_old_one(
    redis_url: str,
) -> None:
    """A watcher field past its lifetime may be a client on its way back from a replica
    that stopped: a replica younger than a lifetime keeps it, an older one takes it out."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        presence = keys.game_presence("g1")
        script_keys = [keys.game("g1"), presence, keys.game_stream("g1")]
        for young, kept in (("1", True), ("", False)):
            await store.redis.hset(presence, "south|w1", 1)  # lapsed long ago
            await store.scripts.run(
                "presence",
                script_keys,
                ["1", 60_000, "", "", 10_000, 100, "south", "", young, "", KEPT],
            )
            assert await store.redis.hexists(presence, "south|w1") == kept, young
        # A watcher added lives its lifetime; the hash as long as it is told to be kept.
        await store.scripts.run(
            "presence",
            script_keys,
            ["1", 60_000, "north|w2", "", 10_000, 100, "south", "", "", "", KEPT],
        )
        assert KEPT - 10_000 < await store.redis.pttl(presence) <= KEPT
        # Once the game is over, its presence goes (a watcher of it or the sweeper calling).
        await store.commit(change(1, status="finished"))
        reply = await store.scripts.run(
            "presence",
            script_keys,
            ["2", 60_000, "north|w3", "", 10_000, 100, "south", "", "", "", KEPT],
        )
        assert reply == [b"closed"] and not await store.redis.exists(presence)
        await store.redis.aclose()

    run(scenario())


def test_every_seated_side_is_there_while_its_first_stream_opens_not_only_the_one_to_act(
    redis_url: str,
) -> None:
    """For a presence lifetime from the game's start, each seated side with no watcher
    field yet counts as there: the side not to act is no more announced as gone than the
    one to act is warned."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        script_keys = [keys.game("g1"), keys.game_presence("g1"), keys.game_stream("g1")]
        until = await store.time_ms() + 60_000
        args = ["1", 60_000, "", "", 10_000, 100, "south,north", "south", "", until, KEPT]
        reply = await store.scripts.run("presence", script_keys, args)
        assert [json.loads(part) for part in reply[1:]] == [{}, {}], reply
        assert await store.redis.xlen(keys.game_stream("g1")) == 1  # the commit's update alone
        await store.redis.aclose()

    run(scenario())


# Lua run in one transaction around the presence script: a watcher field stamped with the
# Redis time in ms (returned), and the Redis time in ms read after the script.
STAMP_NOW = """
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call("HSET", KEYS[1], ARGV[1], now)
return now
"""
READ_NOW = """
local t = redis.call("TIME")
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""


def test_a_watcher_field_that_lapses_in_the_very_millisecond_of_the_script_is_gone(
    redis_url: str,
) -> None:
    """A watcher field lives until its time, not one millisecond more: the presence script
    run in the millisecond its field's time names takes it out. The field is stamped with
    Redis's time in one transaction with the script and a read of the time after it; when
    both reads name the same millisecond, so did the script (else it is tried again)."""

    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        await store.scripts.load()
        presence = keys.game_presence("g1")
        script_keys = [keys.game("g1"), presence, keys.game_stream("g1")]
        args = ["1", "60000", "", "", "10000", "100", "south", "", "", "", str(KEPT)]
        for _ in range(200):
            pipe = store.redis.pipeline(transaction=True)
            pipe.eval(STAMP_NOW, 1, presence, "south|w1")
            pipe.evalsha(store.scripts.sha("presence"), 3, *script_keys, *args)
            pipe.eval(READ_NOW, 0)
            stamped, answer, after = await pipe.execute()
            assert answer[0] == b"ok"
            if stamped == after:
                break
        else:
            pytest.fail("no try ran in one millisecond")
        assert not await store.redis.hexists(presence, "south|w1")
        await store.redis.aclose()

    run(scenario())


def test_a_side_with_a_lapsed_stream_has_no_grace_as_the_game_starts(redis_url: str) -> None:
    # Within the start's grace (ARGV[10]) a side without any stream counts as there; one
    # whose stream is in the hash, lapsed, has opened its first stream and left: it is gone.
    async def scenario() -> None:
        store = await make_store(redis_url)
        await store.commit(change(0, status="running"))
        presence = keys.game_presence("g1")
        script_keys = [keys.game("g1"), presence, keys.game_stream("g1")]
        seconds, micros = await store.redis.time()
        now = seconds * 1000 + micros // 1000
        await store.redis.hset(presence, "north|w1", now + 600_000)  # there
        await store.redis.hset(presence, "south|w1", 1)  # lapsed long ago
        grace = str(now + 600_000)
        reply = await store.scripts.run(
            "presence",
            script_keys,
            ["1", 60_000, "", "", 10_000, 100, "south,north", "", "", grace],
        )
        assert reply[0] == b"ok" and set(json.loads(reply[1])) == {"south"}
        await store.redis.aclose()

    run(scenario())
