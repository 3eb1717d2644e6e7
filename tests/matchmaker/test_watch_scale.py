"""Watchers at scale: one matchmaker process holds 5,000 WatchGame streams over a bounded
number of Redis connections, every one of them gets the update, and one watcher more is
refused with RESOURCE_EXHAUSTED and a retry hint."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from matchmaker.redis_client import CLIENT_NAME
from tests.matchmaker.conftest import both_stores, start_matchmaker_process
from tests.matchmaker.helpers import sync_client
from tests.servers import ServiceProcess
from wargame.runtime.status import error_details
from wargame.v1 import matchmaker_pb2 as mm
from wargame.v1 import matchmaker_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("watch-scale")]

GAMES = 250
PER_GAME = 20  # 5,000 watchers
CONNECTIONS = 16  # the replica's --redis-connections
CHANNELS = 10  # client connections the watchers are spread over


@pytest.fixture
def replica(redis_url: str, engine_address: str, tmp_path: Path) -> Iterator[ServiceProcess]:
    process = start_matchmaker_process(
        tmp_path,
        redis_url,
        engine_address,
        "--redis-connections", str(CONNECTIONS),
        "--max-watchers", str(GAMES * PER_GAME),
    )  # fmt: skip
    yield process
    process.stop()
    assert "Traceback" not in process.log(), process.log()[-3000:]


def matchmaker_connections(redis_url: str) -> list[int]:
    """Connections named by the matchmaker, on each Redis node (CLIENT LIST)."""
    client = sync_client(redis_url)
    try:
        lists: Any = client.client_list()
        lists = lists.values() if isinstance(lists, dict) else [lists]  # a cluster: per node
        return [sum(1 for c in clients if c.get("name") == CLIENT_NAME) for clients in lists]
    finally:
        client.close()


async def scenario(address: str, redis_url: str) -> dict[str, float]:
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    stubs = [matchmaker_pb2_grpc.MatchmakerStub(channel) for channel in channels]
    try:
        return await watch_many(stubs, redis_url)
    finally:
        for channel in channels:
            await channel.close()


async def watch_many(stubs: list[Any], redis_url: str) -> dict[str, float]:
    stub = stubs[0]

    async def token(name: str) -> tuple[tuple[str, str], ...]:
        reply = await stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name=name))
        return (("authorization", f"Bearer {reply.token}"),)

    async def new_game(index: int) -> tuple[str, Any]:
        south, north = await token(f"s{index}"), await token(f"n{index}")
        made = await stub.CreateGame(mm.CreateGameRequest(game="war", side="south"), metadata=south)
        await stub.JoinGame(mm.JoinGameRequest(game_id=made.game.id), metadata=north)
        return made.game.id, north

    games: list[tuple[str, Any]] = []
    for start in range(0, GAMES, 50):
        games += await asyncio.gather(*map(new_game, range(start, min(GAMES, start + 50))))

    live = 0  # watchers caught up (they have seen the game as it stands)
    all_live = asyncio.Event()
    finals: dict[int, int] = {}

    async def watch(index: int, game_id: str) -> int:
        call = stubs[index % len(stubs)].WatchGame(mm.WatchGameRequest(game_id=game_id))
        last = 0
        async for message in call:
            last = message.version
            if last == 2:  # created, joined: caught up, now live
                nonlocal live
                live += 1
                if live == len(watchers):
                    all_live.set()
        finals[index] = last
        return last

    started = time.perf_counter()
    watchers = [
        asyncio.create_task(watch(index, game_id))
        for index, (game_id, _) in enumerate(games * PER_GAME)
    ]
    waiting = asyncio.ensure_future(all_live.wait())
    done, _ = await asyncio.wait([waiting, *watchers], timeout=120, return_when="FIRST_COMPLETED")
    assert waiting in done, f"{live} of {len(watchers)} watchers caught up; ended: " + "; ".join(
        repr(task.exception()) for task in done if task is not waiting
    )
    held = time.perf_counter() - started
    connections = matchmaker_connections(redis_url)

    # One watcher more is refused, with a retry hint.
    extra = stub.WatchGame(mm.WatchGameRequest(game_id=games[0][0]))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        async for _ in extra:
            pass
    details = error_details(refused.value)
    assert (details.code, details.reason) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_WATCHERS",
    )
    assert details.retry_after and details.retry_after > 0

    # One update of every game: each watcher gets it, and its stream ends with the game.
    started = time.perf_counter()
    await asyncio.gather(
        *(
            stub.Resign(mm.ResignRequest(game_id=game_id), metadata=north)
            for game_id, north in games
        )
    )
    results = await asyncio.wait_for(asyncio.gather(*watchers), 120)
    delivered = time.perf_counter() - started
    assert results == [3] * len(watchers)
    assert len(finals) == GAMES * PER_GAME
    return {"held_s": held, "delivered_s": delivered, "connections": max(connections)}


@both_stores
def test_five_thousand_watchers_over_a_bounded_number_of_redis_connections(
    replica: ServiceProcess, redis_url: str
) -> None:
    figures = asyncio.run(scenario(replica.address, redis_url))
    # Per Redis node, whatever the number of watchers: the command pool, one listener, and
    # on a cluster the client's connection for reading the slot map.
    assert 1 <= figures["connections"] <= CONNECTIONS + 2, figures
    print(
        f"{GAMES * PER_GAME} watchers held in {figures['held_s']:.1f} s, the update "
        f"delivered to all in {figures['delivered_s']:.1f} s, over at most "
        f"{figures['connections']:.0f} Redis connections per node"
    )
