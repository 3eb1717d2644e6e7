"""Helpers for the matchmaker suites: expecting errors, playing legal moves, watching."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import grpc
import pytest
import redis
import structlog
from google.protobuf import duration_pb2

from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, Visibility
from matchmaker.redis_client import Client, connect
from wargame.runtime.status import ErrorDetails, error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2
from wargame.v1 import matchmaker_pb2 as mm

R = TypeVar("R")
T = TypeVar("T")
UNCONFIRMED_TRIES = 20  # a replica that cannot confirm for this long is a failure


@contextlib.contextmanager
def captured_logs() -> Iterator[list[dict[str, Any]]]:
    """Every log entry made meanwhile, debug ones too (the tests' logging otherwise lets
    warnings through alone), each with the context bound when it was made."""
    saved = structlog.get_config()
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, structlog.testing.LogCapture()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
    )
    try:
        yield structlog.get_config()["processors"][-1].entries
    finally:
        structlog.configure(**saved)


def seconds(value: float) -> duration_pb2.Duration:
    """A protobuf Duration of `value` seconds."""
    out = duration_pb2.Duration()
    out.FromMilliseconds(round(value * 1000))
    return out


def expect_error(call: Callable[[], Any], code: grpc.StatusCode, reason: str = "") -> ErrorDetails:
    """Run `call`, which must fail with `code` (and ErrorInfo `reason`, if given)."""
    with pytest.raises(grpc.RpcError) as caught:
        call()
    details = error_details(caught.value)
    assert details.code == code, (details.code, details.message)
    if reason:
        assert details.reason == reason, (details.reason, details.message)
    return details


def as_advised(call: Callable[[R], T], request: R, *, saying: str = "confirmed") -> T:
    """`call(request)`'s answer, asked again (the same request: the same idempotency key)
    after the hint each time it is answered UNAVAILABLE `saying` so ("" whatever it says), as
    a client is told to. By default, that no Redis replica has confirmed the change yet: on a
    busy machine a replica's confirmation can be late."""
    for _ in range(UNCONFIRMED_TRIES - 1):
        try:
            return call(request)
        except grpc.RpcError as error:
            details = error_details(error)
            if details.code != grpc.StatusCode.UNAVAILABLE or saying not in details.message:
                raise
            time.sleep(details.retry_after or 0.5)
    return call(request)


def legal_actions(engine: Any, state: game_pb2.GameState) -> list[engine_pb2.LegalAction]:
    """The engine's legal actions in a state."""
    return list(
        engine.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state), timeout=30).actions
    )


def play_moves(
    engine: Any,
    players: Mapping[str, Any],
    game_id: str,
    count: int,
    rng: random.Random,
    *,
    stop_when: Callable[[engine_pb2.LegalAction], bool] | None = None,
) -> mm.GameView:
    """Play up to `count` random legal actions, each by the side to act through its own
    client; stops early when the game ends (or `stop_when` refuses an action)."""
    any_client = next(iter(players.values()))
    game: mm.GameView = any_client.GetGame(mm.GetGameRequest(game_id=game_id)).game
    for _ in range(count):
        if game.status != mm.GAME_STATUS_RUNNING:
            break
        side = game.state.to_act[0]
        player = players[side]
        game = player.GetGame(mm.GetGameRequest(game_id=game_id)).game
        actions = legal_actions(engine, game.state)
        if not actions:
            break
        choice = rng.choice(actions)
        if stop_when is not None and stop_when(choice):
            break
        request = submission(game, choice.action)
        reply = as_advised(player.SubmitActions, request)
        assert list(reply.notations) == [choice.notation]
        game = reply.game
    return game


# Napoleonic Chess with its secret deployment sealed by the engine (Attack at Dawn, 10.1).
SEALED_DAWN = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}


def timed_bot_game(base: float, bot_time: float) -> mm.CreateGameRequest:
    """A Game of War as South against the bot, each side's clock `base` seconds, the bot
    thinking `bot_time` seconds a move."""
    return mm.CreateGameRequest(
        game="war",
        side="south",
        opponent=mm.SEAT_KIND_BOT,
        time_control=mm.TimeControl(base=seconds(base)),
        bot_time=seconds(bot_time),
    )


def start_game(clients: Mapping[str, Any], ruleset: str, **request: Any) -> mm.GameView:
    """Create a game by the first side's client and join it by the second's (each asked
    again while no Redis replica has confirmed it, as the store advises)."""
    (first_side, first), (second_side, second) = list(clients.items())
    create = mm.CreateGameRequest(game=ruleset, side=first_side, **request)
    created = as_advised(first.CreateGame, create).game
    join = mm.JoinGameRequest(game_id=created.id, side=second_side)
    joined: mm.GameView = as_advised(second.JoinGame, join).game
    assert joined.status == mm.GAME_STATUS_RUNNING
    return joined


def war_game_played(engine: Any, players: Mapping[str, Any], plies: int, seed: int) -> mm.GameView:
    """A Game of War started between `players` (see `start_game`), then `plies` random
    legal actions played in it (see `play_moves`), chosen by a generator seeded `seed`."""
    game = start_game(players, "war")
    return play_moves(engine, players, game.id, plies, random.Random(seed))


def sync_client(url: str) -> Any:
    """A synchronous client of the Redis or Redis Cluster at `url` (for checks)."""
    probe = redis.Redis.from_url(url)
    try:
        clustered = bool(probe.info("cluster").get("cluster_enabled"))
    finally:
        probe.close()
    return redis.RedisCluster.from_url(url) if clustered else redis.Redis.from_url(url)


def channel_listeners(url: str, channel: str) -> int:
    """How many connections the Redis serving `channel` has subscribed to it (SSUBSCRIBE):
    a replica's live-update listener once it is subscribed to a watched game."""
    client: Any = sync_client(url)
    try:
        command = ("PUBSUB", "SHARDNUMSUB", channel)
        clustered = isinstance(client, redis.RedisCluster)
        if clustered:
            node = client.get_node_from_key(channel)
            reply = client.execute_command(*command, target_nodes=node)
        else:
            reply = client.execute_command(*command)
    finally:
        client.close()
    return int(reply[1]) if isinstance(reply, list) else int(reply.get(channel.encode(), 0))


STORE_CONNECTIONS = 64  # each `store_client`'s connections (per node of a cluster)


async def store_client(url: str) -> Client:
    """The matchmaker's own client of the Redis or Redis Cluster at `url`. Its timeouts
    are generous: on a busy machine a reply (a cluster's slot map) or a new connection may
    take seconds, and a cluster client that times out closes every connection it holds,
    under the commands of others (at load 35, 300 concurrent joins met that)."""
    return await connect(
        url, socket_timeout=30.0, connections=STORE_CONNECTIONS, connect_timeout=30.0
    )


def sealed_array(side: str) -> str:
    """A legal Attack-at-Dawn array (standard armies on the side's 2nd and 3rd rows)."""
    back, front = ("2", "3") if side == "red" else ("7", "6")
    files = "abcdefgh"
    items = [f"{f}{back}=I" for f in files] + [f"{f}{front}=C" for f in "abcd"]
    items += [f"e{front}=A", f"f{front}=A", f"g{front}=G"]
    return " ".join(items)


def submission(
    game: mm.GameView, *actions: game_pb2.Action, key: str = ""
) -> mm.SubmitActionsRequest:
    """SubmitActions of `actions` at the game's version, under the idempotency `key` (a
    fresh one when empty)."""
    return mm.SubmitActionsRequest(
        game_id=game.id,
        expected_version=game.version,
        idempotency_key=key or uuid.uuid4().hex,
        actions=actions,
    )


def submit_text(client: Any, game_id: str, text: str, side: str = "") -> mm.SubmitActionsResponse:
    """Submit one action in notation, at whatever version the game is (retried when someone
    else acted first)."""
    for _ in range(50):
        game = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
        try:
            reply: mm.SubmitActionsResponse = client.SubmitActions(
                submission(game, game_pb2.Action(side=side, notation=text))
            )
            return reply
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise
    raise AssertionError(f"{text!r} kept meeting newer versions")


# Keys that live without a TTL: single, bounded indexes (trimmed, or cleaned as games end).
UNEXPIRING = (
    "wg:{due:", "wg:due:", "wg:{queues:", "wg:{shards}", "wg:{schema}", "wg:browse:",
    "wg:leaderboard:",
)  # fmt: skip


def assert_everything_expires(redis_url: str) -> None:
    """Every key of the matchmaker but its bounded indexes has a TTL: nothing piles up."""
    client = sync_client(redis_url)
    try:
        for key in client.scan_iter(count=1000):
            name = key.decode()
            if not name.startswith(UNEXPIRING):
                assert client.ttl(key) > 0, f"{name} never expires"
    finally:
        client.close()


def wait_for(check: Callable[[], Any], timeout: float = 90.0) -> Any:
    """Poll until `check()` is truthy; return it. The default bound is generous: a busy
    machine (a paired run beside a CPU hog) may take a minute for what takes a second."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


class StreamReader:
    """A server stream read by a thread into a queue: its messages, its error, its end (and
    when it ended, `ended_at`, wall-clock seconds).

    A cancelled stream ends without an error unless `cancel_is_error` (a test that cancels
    its own call expects CANCELLED to be no failure)."""

    def __init__(self, call: Any, *, cancel_is_error: bool = False) -> None:
        self.messages: queue.Queue[Any] = queue.Queue()
        self.call = call
        self.ended = threading.Event()
        self.ended_at: float | None = None
        self.error: grpc.RpcError | None = None
        self._cancel_is_error = cancel_is_error
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.call:
                self.messages.put(message)
        except grpc.RpcError as error:
            if self._cancel_is_error or error.code() != grpc.StatusCode.CANCELLED:
                self.error = error
        finally:
            self.ended_at = time.time()
            self.ended.set()

    def how(self) -> str:
        """What the stream is doing, for a failure that waited for a message in vain."""
        if not self.ended.is_set():
            return "the stream is open but silent"
        if self.error is None:
            return "the stream ended without an error"
        return f"the stream ended with {self.error.code().name}: {self.error.details()}"


class Watcher(StreamReader):
    """A WatchGame stream read by a thread into a queue."""

    def __init__(
        self, client: Any, game_id: str, after: int = 0, *, follow_rematch: bool = False
    ) -> None:
        super().__init__(
            client.stub.WatchGame(
                mm.WatchGameRequest(
                    game_id=game_id, after_version=after, follow_rematch=follow_rematch
                ),
                metadata=client.metadata,
                timeout=60,
            )
        )

    def until(
        self, version: int, timeout: float = 90, *, notices: bool = False
    ) -> list[mm.WatchGameResponse]:
        """Updates until the one of `version` arrives (with the notices among them if
        `notices`: players without a stream of their own are announced as gone)."""
        out: list[mm.WatchGameResponse] = []
        deadline = time.monotonic() + timeout
        while not out or out[-1].version < version or out[-1].HasField("notice"):
            message = self._next(deadline, f"version {version}", out)
            if notices or not message.HasField("notice"):
                out.append(message)
        return out

    def notice(
        self, kind: mm.NoticeKind.ValueType, side: str = "", timeout: float = 90
    ) -> tuple[mm.WatchGameResponse, list[mm.WatchGameResponse]]:
        """Read until a notice of `kind` (about `side`, if given): it, and what came before."""
        before: list[mm.WatchGameResponse] = []
        deadline = time.monotonic() + timeout
        wanted = f"{mm.NoticeKind.Name(kind)} notice" + (f" about {side}" if side else "")
        while True:
            message = self._next(deadline, wanted, before)
            if message.notice.kind == kind and (not side or message.notice.side == side):
                return message, before
            before.append(message)

    def _next(
        self, deadline: float, wanted: str, seen: list[mm.WatchGameResponse]
    ) -> mm.WatchGameResponse:
        """The next message, or a failure that says what the stream did instead."""
        try:
            return self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            got = [
                f"v{m.version} {mm.NoticeKind.Name(m.notice.kind)} {m.notice.side}"
                if m.HasField("notice")
                else f"v{m.version}"
                for m in seen
            ]
            raise AssertionError(f"no {wanted}: {self.how()}; received {got}") from None

    def close(self) -> None:
        self.call.cancel()


async def until(check: Callable[[], bool]) -> None:
    """Let the event loop run until `check` holds (10 s at most)."""
    deadline = asyncio.get_running_loop().time() + 10
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "the condition never held"
        await asyncio.sleep(0.001)


@contextlib.contextmanager
def serving_engine(servicer: engine_pb2_grpc.RulesEngineServicer) -> Iterator[str]:
    """`servicer` served as the rules engine over real gRPC on a free loopback port (a real
    engine that misbehaves on purpose, or a stand-in for one failure): its address."""
    from wargame.runtime.serving import create_server, register_service

    serving = create_server(
        "127.0.0.1:0",
        lambda server: register_service(
            server, servicer, engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"]
        ),
        ["wargame.v1.RulesEngine"],
    )
    serving.start()
    try:
        yield f"127.0.0.1:{serving.port}"
    finally:
        serving.stop(0)


def game_record(state: game_pb2.GameState, seats: list[Seat], **fields: Any) -> GameRecord:
    """A stored game of `state` between `seats`: running, public, unrated, untimed, at
    version 3 (`fields` replace any of these)."""
    made: dict[str, Any] = {
        "id": "g1",
        "ruleset": state.game,
        "status": GameStatus.RUNNING,
        "version": 3,
        "visibility": Visibility.PUBLIC,
        "rated": False,
        "created_ms": 1,
        "updated_ms": 2,
        "acted_ms": 2,
        "seats": seats,
        "state_bytes": state.SerializeToString(),
        "initial_bytes": b"",
        "clock": None,
        "invite": "",
        "bot_ms": 0,
        "rating_status": RatingStatus.NONE,
    }
    return GameRecord(**(made | fields))
