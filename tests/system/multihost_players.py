"""The players of the multi-host system test, run on the test's client host.

    python -m tests.system.multihost_players --matchmakers A,B --engine TARGET \\
        --tls-ca-file CA --tls-cert-file CERT --tls-key-file KEY --engine-tls-name NAME \\
        --games N --bot-games M --plies K --watched W --out DIR [--hold FILE]

People (two per game, scripted: random legal actions from the engine) and people against
the bot play N + M Game of War games at once through whichever matchmaker answers: a call
that meets UNAVAILABLE, a deadline or a refusal to connect is sent again, with the same
idempotency key, to the other matchmaker. A person's move refused because the bot's move
it answered was lost in a failover (a read shows what no replica confirmed yet) is made
again on the game as it now stands. After K actions (bot games: K of the person's), and
not while FILE (`--hold`) exists, one side resigns: the test holds the games in play until
what it waits for has happened, however fast they go (a game the rules end meanwhile is
followed by a new one at its table, so the play never runs dry). W games are watched; a
watcher whose stream breaks, or stays silent while its game goes on, resumes from the last
version it saw, on the other matchmaker.

Every connection is TLS, as in production: the matchmakers' certificates are checked
against the CA, and the engines (mutual TLS) are shown the client certificate, their own
checked for NAME (the engine target lists addresses, which name no certificate).

Writes DIR/events.jsonl as it plays (one line per new version a client saw: time, game,
version), DIR/refusals.jsonl (one line per call refused for a reason that passes: time,
method, status code, message), DIR/status.txt every few seconds (what each game and watcher
is waiting for now: a stalled run says where it stalls) and DIR/result.json at the end: every
acknowledged commit
checked against the game's final record (its moves must be a prefix of the final moves),
every watcher's versions, the games' final states. `--wait-healthy` only waits until
every matchmaker and every engine answers health checks.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from wargame.runtime.tls import ClientTLS, aio_channel
from wargame.v1 import engine_pb2, engine_pb2_grpc, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

CALL_TIMEOUT = 3.0  # a call that takes longer is sent again, to the other matchmaker
GIVE_UP = 120.0  # a call that fails for this long fails the game
STALL = 6.0  # a watcher that hears nothing this long while its game goes on resumes
STATUS_EVERY = 2.0  # seconds between two writes of DIR/status.txt
WATCH_END = 60.0  # once the games are over, a watcher that hears no end in this long fails
RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.CANCELLED,
}
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
# The engine channel as the matchmaker's: round robin, and a vanished host noticed by
# keepalive within seconds (calls then go to the engine that answers).
ENGINE_OPTIONS = [
    ("grpc.service_config", ROUND_ROBIN),
    ("grpc.keepalive_time_ms", 5_000),
    ("grpc.keepalive_timeout_ms", 2_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
]


@dataclass(frozen=True)
class Transport:
    """The TLS of the clients: what the matchmakers are trusted by, what the engines."""

    matchmakers: ClientTLS
    engine: ClientTLS

    @classmethod
    def of(cls, args: argparse.Namespace) -> Transport:
        return cls(
            ClientTLS(ca_file=args.tls_ca_file),
            ClientTLS(
                args.tls_ca_file, args.tls_cert_file, args.tls_key_file, args.engine_tls_name
            ),
        )


class Events:
    """The versions clients saw, appended as they come (the test reads them live)."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("a", buffering=1)
        self.seen: dict[str, int] = {}

    def saw(self, game_id: str, version: int) -> None:
        if version > self.seen.get(game_id, 0):
            self.seen[game_id] = version
            self._write({"game": game_id, "v": version})

    def ended(self, game_id: str) -> None:
        self._write({"game": game_id, "end": True})

    def _write(self, event: dict[str, Any]) -> None:
        self.file.write(json.dumps({"t": time.time(), **event}) + "\n")


class Fleet:
    """The matchmakers (a call goes to the caller's preferred one, then the other) and the
    engines (for legal actions)."""

    def __init__(self, matchmakers: list[str], engine: str, tls: Transport, refusals: Path) -> None:
        self.refusals = refusals.open("a", buffering=1)
        self.stubs = [
            matchmaker_pb2_grpc.MatchmakerStub(aio_channel(address, tls.matchmakers))
            for address in matchmakers
        ]
        self.engine = engine_pb2_grpc.RulesEngineStub(
            aio_channel(engine, tls.engine, ENGINE_OPTIONS)
        )
        self.retries = 0

    async def call(self, player: Player, method: str, request: Any, *, retry: bool = True) -> Any:
        """`method` for `player`; sent again (to the other matchmaker) while it fails for a
        reason that passes."""
        started = time.monotonic()
        while True:
            stub = self.stubs[player.home % len(self.stubs)]
            try:
                return await getattr(stub, method)(
                    request, metadata=player.metadata, timeout=CALL_TIMEOUT
                )
            except grpc.aio.AioRpcError as error:
                if not retry or error.code() not in RETRYABLE:
                    raise
                if time.monotonic() - started > GIVE_UP:
                    raise
                refusal = {"method": method, "code": error.code().name, "message": error.details()}
                self.refusals.write(json.dumps({"t": time.time(), **refusal}) + "\n")
                self.retries += 1
                player.home += 1  # the other matchmaker
                await asyncio.sleep(0.2)

    async def legal(self, state: Any) -> list[Any]:
        """The legal actions in a state (any engine that answers)."""
        started = time.monotonic()
        while True:
            try:
                reply = await self.engine.ListLegalActions(
                    engine_pb2.ListLegalActionsRequest(state=state), timeout=CALL_TIMEOUT
                )
                return list(reply.actions)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE or time.monotonic() - started > GIVE_UP:
                    raise
                await asyncio.sleep(0.2)


@dataclass
class Player:
    """A registered player: its token, and the matchmaker it calls first."""

    home: int
    token: str = ""
    player_id: str = ""

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()


@dataclass
class Ack:
    """A commit a client got OK for: the game's moves as of that version."""

    game_id: str
    version: int
    moves: list[str]


@dataclass
class Play:
    """Everything the players did and saw."""

    fleet: Fleet
    events: Events
    plies: int
    rng: random.Random
    watch_limit: int
    hold: Path | None = None
    acks: list[Ack] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    watched: dict[str, Watch] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    lost_views: int = 0  # moves refused as made on a read that a failover then lost

    async def register(self, name: str, home: int) -> Player:
        player = Player(home)
        reply = await self.fleet.call(
            player, "RegisterPlayer", mm.RegisterPlayerRequest(display_name=name)
        )
        player.token, player.player_id = reply.token, reply.player.id
        return player

    def held(self) -> bool:
        """Whether the test holds the play (its `--hold` file exists)."""
        return self.hold is not None and self.hold.exists()

    def more(self, done: int) -> bool:
        """Whether a game that made `done` actions (a bot game: the person's) goes on."""
        return done < self.plies or self.held()

    async def table(self, index: int, game: Callable[[int], Awaitable[None]]) -> None:
        """`game`s at one table, one after another while the test holds the play: on a
        quiet machine random play ended every game by the rules before the test's events
        (a failover, a replica's return) had happened, and a shard with no moves left shows
        none of them."""
        await game(index)
        while self.held():
            await game(index)

    def acked(self, view: Any) -> None:
        self.acks.append(Ack(view.id, view.version, list(view.moves)))
        self.events.saw(view.id, view.version)

    async def move(self, player: Player, view: Any) -> Any:
        """One random legal action by `player` (the side to act); the game after it."""
        choice = self.rng.choice(await self.fleet.legal(view.state))
        request = mm.SubmitActionsRequest(
            game_id=view.id,
            expected_version=view.version,
            idempotency_key=uuid.uuid4().hex,  # the same for every retry of this action
            actions=[choice.action],
        )
        reply = await self.fleet.call(player, "SubmitActions", request)
        self.acked(reply.game)
        return reply.game

    async def resign(self, player: Player, game_id: str) -> None:
        try:
            reply = await self.fleet.call(player, "Resign", mm.ResignRequest(game_id=game_id))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return  # the bot's move ended the game first
        self.acked(reply.game)

    async def people_game(self, index: int) -> None:
        south = await self.register(f"south{index}", index)
        north = await self.register(f"north{index}", index + 1)
        created = await self.fleet.call(
            south, "CreateGame", mm.CreateGameRequest(game="war", side="south")
        )
        self.games.append(created.game.id)
        view = (
            await self.fleet.call(north, "JoinGame", mm.JoinGameRequest(game_id=created.game.id))
        ).game
        self.acked(view)
        self.watch(view.id, index)
        players = {"south": south, "north": north}
        try:
            done = 0
            while self.more(done) and view.status == mm.GAME_STATUS_RUNNING:
                view = await self.move(players[view.state.to_act[0]], view)
                done += 1
            if view.status == mm.GAME_STATUS_RUNNING:  # not ended by the rules: one resigns
                await self.resign(players[view.state.to_act[0]], view.id)
        finally:
            self.events.ended(view.id)

    async def bot_game(self, index: int) -> None:
        person = await self.register(f"person{index}", index)
        created = await self.fleet.call(
            person,
            "CreateGame",
            mm.CreateGameRequest(game="war", side="north", opponent=mm.SEAT_KIND_BOT),
        )
        game_id = created.game.id
        self.games.append(game_id)
        self.watch(game_id, index)
        try:
            await self.bot_turns(person, game_id)
        finally:
            self.events.ended(game_id)

    async def bot_turns(self, person: Player, game_id: str) -> None:
        done = 0
        while self.more(done):
            done += 1
            waiting = time.monotonic()
            while True:  # the bot's turn: the sweeper of some replica plays it
                view = (
                    await self.fleet.call(person, "GetGame", mm.GetGameRequest(game_id=game_id))
                ).game
                self.events.saw(game_id, view.version)
                if view.status != mm.GAME_STATUS_RUNNING or view.state.to_act[0] == "north":
                    break
                if time.monotonic() - waiting > GIVE_UP / 2:
                    raise TimeoutError(f"the bot never moved in {game_id} at {view.version}")
                await asyncio.sleep(0.05)
            if view.status != mm.GAME_STATUS_RUNNING:
                return
            try:
                view = await self.move(person, view)
            except grpc.aio.AioRpcError:
                if not await self.lost_since(person, view):
                    raise
                self.lost_views += 1  # read before a failover lost it: read the game again
        if view.status == mm.GAME_STATUS_RUNNING:  # not ended by the rules: the person resigns
            await self.resign(person, game_id)

    async def lost_since(self, player: Player, view: Any) -> bool:
        """Whether the game no longer holds what `view` showed: a read shows changes no
        replica has confirmed yet (here, the bot's move), which a failover can lose; a
        move made on them is refused, and the client reads the game again."""
        now = (await self.fleet.call(player, "GetGame", mm.GetGameRequest(game_id=view.id))).game
        return now.version < view.version or list(now.moves)[: len(view.moves)] != list(view.moves)

    def watch(self, game_id: str, index: int) -> None:
        if len(self.watched) < self.watch_limit:
            self.watched[game_id] = Watch(self, game_id, Player(index))


class Watch:
    """A watcher of one game: the versions it got, how often it resumed, and the versions
    it was handed as a resync (the updates before them were no longer kept)."""

    def __init__(self, play: Play, game_id: str, viewer: Player) -> None:
        self.play = play
        self.game_id = game_id
        self.viewer = viewer
        self.versions: list[int] = []
        self.resumed = 0
        self.resyncs: list[int] = []
        self.kept: list[int] = []  # the versions a client keeps: a resync replaces later ones
        self.task = asyncio.create_task(self.run(), name=f"watcher of {game_id}")

    async def run(self) -> None:
        started = time.monotonic()
        while time.monotonic() - started < GIVE_UP * 3:
            stub = self.play.fleet.stubs[self.viewer.home % len(self.play.fleet.stubs)]
            after = self.versions[-1] if self.versions else 0
            call = stub.WatchGame(mm.WatchGameRequest(game_id=self.game_id, after_version=after))
            try:
                while True:
                    message = await asyncio.wait_for(call.read(), STALL)
                    if message is grpc.aio.EOF:
                        return  # the game is over: the stream ends
                    if message.HasField("notice"):
                        continue  # a player left or came back: no version of its own
                    if message.resync:
                        self.resyncs.append(message.version)
                        # The game as it stands: what was seen past it, a failover lost.
                        self.kept = [v for v in self.kept if v < message.version]
                    self.versions.append(message.version)
                    self.kept.append(message.version)
                    self.play.events.saw(self.game_id, message.version)
            except (grpc.aio.AioRpcError, TimeoutError) as error:
                call.cancel()
                code = error.code() if isinstance(error, grpc.aio.AioRpcError) else None
                if code is not None and code not in RETRYABLE:
                    raise
                self.resumed += 1
                self.viewer.home += 1
                await asyncio.sleep(0.2)


async def play(args: argparse.Namespace) -> dict[str, Any]:
    fleet = Fleet(
        args.matchmakers.split(","), args.engine, Transport.of(args), args.out / "refusals.jsonl"
    )
    events = Events(args.out / "events.jsonl")
    session = Play(fleet, events, args.plies, random.Random(args.seed), args.watched, args.hold)
    jobs = [
        asyncio.create_task(session.table(i, session.people_game), name=f"people game {i}")
        for i in range(args.games)
    ]
    jobs += [
        asyncio.create_task(
            session.table(args.games + i, session.bot_game), name=f"bot game {args.games + i}"
        )
        for i in range(args.bot_games)
    ]
    status = asyncio.create_task(write_status(args.out / "status.txt"), name="status")
    outcomes = await asyncio.gather(*jobs, return_exceptions=True)
    failures = [repr(outcome) for outcome in outcomes if isinstance(outcome, BaseException)]
    # Every game is over (or failed): its watcher hears the end soon, or it never will.
    watches = {watch.task: game_id for game_id, watch in session.watched.items()}
    if watches:
        _, pending = await asyncio.wait(watches, timeout=WATCH_END)
        for task in pending:
            task.cancel()
            failures.append(f"the watcher of {watches[task]} heard no end in {WATCH_END:g} s")
    watch_outcomes = await asyncio.gather(*watches, return_exceptions=True)
    failures += [
        repr(o)
        for o in watch_outcomes
        if isinstance(o, BaseException) and not isinstance(o, asyncio.CancelledError)
    ]
    status.cancel()
    reader = Player(0)
    finals: dict[str, Any] = {}
    for game_id in session.games:
        finals[game_id] = (
            await fleet.call(reader, "GetGame", mm.GetGameRequest(game_id=game_id))
        ).game
    lost = [
        {"game": ack.game_id, "version": ack.version}
        for ack in session.acks
        if finals[ack.game_id].version < ack.version
        or list(finals[ack.game_id].moves)[: len(ack.moves)] != ack.moves
    ]
    watchers = {
        game_id: {
            "versions": watch.versions,
            "resumed": watch.resumed,
            "resyncs": watch.resyncs,
            "final": finals[game_id].version,
            "complete": watch.kept == list(range(1, finals[game_id].version + 1)),
        }
        for game_id, watch in session.watched.items()
    }
    return {
        "games": len(session.games),
        "finished": sum(view.status == mm.GAME_STATUS_FINISHED for view in finals.values()),
        "moves": sum(len(view.moves) for view in finals.values()),
        "acknowledged": len(session.acks),
        "lost": lost,
        "retries": fleet.retries,
        "lost_views": session.lost_views,
        "watchers": watchers,
        "failures": failures,
    }


async def write_status(path: Path) -> None:
    """Every `STATUS_EVERY` seconds, where each task of the run is waiting now (its name and
    the innermost lines of its stack), written whole to `path`."""
    while True:
        text = io.StringIO()
        text.write(f"at {time.time():.1f}\n")
        for task in asyncio.all_tasks():
            if task is asyncio.current_task() or task.done():
                continue
            frames = task.get_stack(limit=None)[-3:]
            where = " < ".join(
                f"{frame.f_code.co_name}:{frame.f_lineno}" for frame in reversed(frames)
            )
            text.write(f"{task.get_name()}: {where}\n")
        partial = path.with_suffix(".partial")
        partial.write_text(text.getvalue())
        partial.replace(path)
        await asyncio.sleep(STATUS_EVERY)


async def wait_healthy(args: argparse.Namespace, timeout: float = 60) -> None:
    """Until every matchmaker and every engine (each address of the target) is SERVING."""
    tls = Transport.of(args)
    engines = args.engine.removeprefix("ipv4:").split(",")
    servers = [(address, tls.matchmakers) for address in args.matchmakers.split(",")]
    servers += [(address, tls.engine) for address in engines]
    deadline = time.monotonic() + timeout
    for address, settings in servers:
        async with aio_channel(address, settings) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while True:
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.aio.AioRpcError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{address} not serving after {timeout} s")
                await asyncio.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait-healthy", action="store_true")
    parser.add_argument("--matchmakers", default="")
    parser.add_argument("--engine", default="")
    parser.add_argument("--tls-ca-file", default="")
    parser.add_argument("--tls-cert-file", default="")
    parser.add_argument("--tls-key-file", default="")
    parser.add_argument("--engine-tls-name", default="")
    parser.add_argument("--games", type=int, default=0)
    parser.add_argument("--bot-games", type=int, default=0)
    parser.add_argument("--plies", type=int, default=16)
    parser.add_argument("--hold", type=Path, default=None)
    parser.add_argument("--watched", type=int, default=0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    if args.wait_healthy:
        asyncio.run(wait_healthy(args))
        return 0
    result = asyncio.run(play(args))
    (args.out / "result.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
