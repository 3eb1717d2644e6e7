"""A crowd of watchers for one matchmaker: games made through the service, thousands of
WatchGame streams on them, the Redis connections counted while they are held, one update
of every game delivered to all. Used by the watchers-at-scale test and `make bench`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from matchmaker.redis_client import CLIENT_NAME
from tests.matchmaker.helpers import sync_client
from wargame.runtime.status import error_details
from wargame.v1 import matchmaker_pb2 as mm
from wargame.v1 import matchmaker_pb2_grpc

CHANNELS = 10  # client connections the watchers are spread over
RETRIED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
REOPEN_LIMIT = 20  # times one watcher's stream may be opened again
# Bounds on the waits, wide for a busy machine (a second test run beside this one): the
# figures, not these bounds, are what `make bench` reports.
CATCH_UP_S = 600.0
DELIVERY_S = 240.0


@dataclass
class Crowd:
    """What holding the crowd showed."""

    watchers: int  # streams that were caught up at once, then got the update
    held_s: float  # from the first stream opened until all were caught up
    delivered_s: float  # from the updates until every watcher had its one
    connections: int  # the matchmaker's Redis connections on the busiest node, meanwhile
    retries: int  # streams opened again after UNAVAILABLE or CANCELLED (a busy machine)
    refused: int = 0  # streams told to retry after a hint (a burst past the replica's queue)


def local_ports(pid: int) -> set[int]:
    """The local ports of the TCP sockets process `pid` holds (Linux: /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def matchmaker_connections(redis_url: str, pid: int | None = None) -> dict[str, set[str]]:
    """The addresses of the connections named by the matchmaker, by Redis node (CLIENT
    LIST); with `pid`, only those of that process (the session's Redis may also hold the
    idle connections of other replicas and clients of the tests, named alike)."""
    client = sync_client(redis_url)
    try:
        lists: Any = client.client_list()
        ports = local_ports(pid) if pid is not None else None
        nodes = lists if isinstance(lists, dict) else {"redis": lists}  # a cluster: per node
        return {
            node: {
                c["addr"]
                for c in clients
                if c.get("name") == CLIENT_NAME
                and (ports is None or int(c["addr"].rsplit(":", 1)[1]) in ports)
            }
            for node, clients in nodes.items()
        }
    finally:
        client.close()


async def held_connections(redis_url: str, pid: int | None, window: float = 5.0) -> int:
    """The matchmaker's Redis connections (process `pid`'s: `matchmaker_connections`) on
    its busiest node that are there in every look over a `window` of seconds. A connection
    replaced after a command timed out is listed until Redis reads its close, beside its
    successor; on a starved machine (a second test run beside this one) replacements
    follow one another, so every single look may count a few twice. A connection held for
    good is there in every look."""
    held = matchmaker_connections(redis_url, pid)
    deadline = time.perf_counter() + window
    while time.perf_counter() < deadline:
        await asyncio.sleep(0.25)
        now = matchmaker_connections(redis_url, pid)
        held = {node: kept & now.get(node, set()) for node, kept in held.items()}
    return max(len(kept) for kept in held.values())


async def resign(stub: Any, game_id: str, metadata: Any) -> None:
    """Resign as a client does: a call lost in transit (its connection closed by a server too
    busy to answer keepalive pings) is sent again; GAME_OVER then says the first one landed
    (the watchers' last version shows it did)."""
    for attempt in range(REOPEN_LIMIT):
        try:
            await stub.Resign(mm.ResignRequest(game_id=game_id), metadata=metadata)
            return
        except grpc.aio.AioRpcError as error:
            if attempt and error_details(error).reason == "GAME_OVER":
                return
            if error.code() not in RETRIED or attempt == REOPEN_LIMIT - 1:
                raise
            await asyncio.sleep(0.5)


async def hold(
    address: str,
    redis_url: str,
    games: int,
    per_game: int,
    while_held: Callable[[Any, str], Awaitable[None]] | None = None,
    *,
    pid: int | None = None,
) -> Crowd:
    """Hold `games` x `per_game` watchers on the matchmaker at `address` (process `pid`:
    only its Redis connections are counted); `while_held(stub, game id)` runs while all
    are open."""
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
    try:
        return await _hold(stubs, redis_url, games, per_game, while_held, pid=pid)
    finally:
        for channel in channels:
            await channel.close()


async def _hold(
    stubs: list[Any],
    redis_url: str,
    games: int,
    per_game: int,
    while_held: Callable[[Any, str], Awaitable[None]] | None,
    *,
    pid: int | None,
) -> Crowd:
    stub = stubs[0]

    async def token(name: str) -> tuple[tuple[str, str], ...]:
        reply = await stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=name))
        return (("authorization", f"Bearer {reply.token}"),)

    async def new_game(index: int) -> tuple[str, Any]:
        south, north = await token(f"s{index}"), await token(f"n{index}")
        made = await stub.CreateGame(mm.CreateGameRequest(game="war", side="south"), metadata=south)
        await stub.JoinGame(mm.JoinGameRequest(game_id=made.game.id), metadata=north)
        return made.game.id, north

    made: list[tuple[str, Any]] = []
    for start in range(0, games, 50):
        made += await asyncio.gather(*map(new_game, range(start, min(games, start + 50))))

    live = 0  # watchers whose open stream is caught up (it has shown the game as it stands)
    retries = 0  # streams opened again after UNAVAILABLE
    refused = 0  # streams told to retry later (RESOURCE_EXHAUSTED with a retry hint)
    all_live = asyncio.Event()

    async def watch(index: int, game_id: str) -> int:
        nonlocal live, retries, refused
        last = 0
        reopened = 0
        # As clients do: a stream that failed in transit is opened again from the last
        # version seen (UNAVAILABLE; CANCELLED when a connection too busy to answer the
        # server's keepalive ping in time was closed by the server).
        while True:
            request = mm.WatchGameRequest(game_id=game_id, after_version=last)
            caught_up = False
            try:
                async for message in stubs[index % len(stubs)].WatchGame(request):
                    last = message.version
                    # Created, joined: caught up, now live. Counted once per stream, on the
                    # update: the notices after it (players never seen are DISCONNECTED)
                    # carry its version too.
                    if last == 2 and not caught_up:
                        caught_up = True
                        live += 1
                        if live == len(watchers):
                            all_live.set()
                return last
            except grpc.aio.AioRpcError as error:
                if caught_up:
                    live -= 1  # no longer held by the replica
                hint = error_details(error).retry_after
                if error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and hint:
                    refused += 1  # a burst past the replica's queue: told when to retry
                    await asyncio.sleep(hint)
                    continue
                # A server closing a busy connection ends every stream on it at once, so
                # the bound is per watcher: one that keeps failing is a failure.
                if error.code() not in RETRIED or reopened >= REOPEN_LIMIT:
                    raise
                reopened += 1
                retries += 1
                await asyncio.sleep(0.5)

    started = time.perf_counter()
    watchers = [
        asyncio.create_task(watch(index, game_id))
        for index, (game_id, _) in enumerate(made * per_game)
    ]
    waiting = asyncio.ensure_future(all_live.wait())
    done, _ = await asyncio.wait(
        [waiting, *watchers], timeout=CATCH_UP_S, return_when="FIRST_COMPLETED"
    )
    assert waiting in done, f"{live} of {len(watchers)} watchers caught up; ended: " + "; ".join(
        repr(task.exception()) for task in done if task is not waiting
    )
    held = time.perf_counter() - started
    connections = await held_connections(redis_url, pid)
    if while_held is not None:
        await while_held(stub, made[0][0])
    # One update of every game: each watcher gets it, and its stream ends with the game.
    started = time.perf_counter()
    await asyncio.gather(*(resign(stub, game, north) for game, north in made))
    finals = await asyncio.wait_for(asyncio.gather(*watchers), DELIVERY_S)
    delivered = time.perf_counter() - started
    assert finals == [3] * len(watchers), "a watcher missed the update"
    return Crowd(len(watchers), held, delivered, connections, retries, refused)
