"""The matchmaker's client of the rules engine (gRPC, asyncio): deadlines and retries.

The engine is stateless, so every call can be retried: a call that finds it UNAVAILABLE
is tried again with a short backoff, a few times. What still fails becomes the
matchmaker's UNAVAILABLE (ENGINE_UNAVAILABLE, with a retry hint); a refusal by the rules
comes back as `EngineError` carrying the engine's reason and message, which the caller
maps to its own status (`refusal_status`). Every call carries the request id of the call
(or sweep) it serves as `x-request-id`, so both services log one story under one id; an
engine failure (not a refusal by the rules) is relayed as an `EngineFailure`, which the
matchmaker logs at error. With a caller key (`Settings.engine_caller_key`) every call carries
it, so the engine admits the bots' searches to the share of its pool kept for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import grpc
import structlog
from google.protobuf import duration_pb2

from matchmaker.errors import quoted
from matchmaker.settings import Settings
from wargame.runtime.config import CALLER_KEY_HEADER, ConfigError
from wargame.runtime.refusal import Code, Reason, Refusal, unavailable
from wargame.runtime.status import ErrorDetails, error_details
from wargame.runtime.tls import aio_channel
from wargame.v1 import board_pb2, engine_pb2, engine_pb2_grpc, game_pb2

log = structlog.get_logger(component="matchmaker")

# Refusals that say the request itself is malformed, whatever the stored state.
MALFORMED = frozenset(
    {
        Reason.MISSING_FIELD,
        Reason.MALFORMED_REQUEST,
        Reason.NOTATION_INVALID,
        Reason.NOTATION_AMBIGUOUS,
        Reason.UNKNOWN_CELL,
        Reason.UNKNOWN_UNIT,
        Reason.REQUEST_TOO_LARGE,
        Reason.DEPLOYMENT_INVALID,
    }
)

# Refusals whose message may name squares of the sender's hidden array (a refused commit,
# seal or reveal): the sender reads it, the logs do not.
SECRET_REFUSALS = frozenset({Reason.DEPLOYMENT_INVALID})


class EngineError(Exception):
    """The engine answered with an error status other than UNAVAILABLE."""

    def __init__(self, details: ErrorDetails) -> None:
        super().__init__(details.message)
        self.details = details


class EngineFailure(Refusal):
    """A refusal that relays a failure of the engine, or of its use by the matchmaker (the
    engine unreachable, its bug, a stored state it refuses): logged at error."""

    def __init__(
        self, code: grpc.StatusCode, reason: Reason, message: str, *, engine: str, **more: Any
    ) -> None:
        super().__init__(code, reason, message, **more)
        self.engine = engine  # what the engine answered: code, reason and message


def request_id() -> str:
    """The request id the current call or sweep is logged under ("" outside one)."""
    return str(structlog.contextvars.get_contextvars().get("request_id", ""))


def refusal_status(refusal: EngineError, *, stored_session: bool) -> Refusal:
    """The matchmaker's status for an engine refusal, passing its reason and message on.

    Against a stored session an illegal action is FAILED_PRECONDITION (the caller's state
    is not the one that was judged); malformed requests stay INVALID_ARGUMENT; a stored
    state the engine calls invalid is our bug (INTERNAL).
    """
    details = refusal.details
    said = f"{details.code.name} {details.reason or '-'}: {details.message}"
    try:
        reason = Reason(details.reason or Reason.INTERNAL_ERROR)
    except ValueError:  # a reason this matchmaker's contract does not know: a bug
        return _bug("the rules engine answered with an unknown reason", said)
    code = details.code
    if code in (Code.INVALID_ARGUMENT, Code.FAILED_PRECONDITION) and stored_session:
        if reason == Reason.INVALID_STATE:
            return _bug("the stored game was refused by the engine", said)
        code = Code.INVALID_ARGUMENT if reason in MALFORMED else Code.FAILED_PRECONDITION
    elif code not in (
        Code.INVALID_ARGUMENT,
        Code.NOT_FOUND,
        Code.FAILED_PRECONDITION,
        Code.RESOURCE_EXHAUSTED,
    ):
        return _bug(f"the rules engine failed (request id {request_id()})", said)
    return Refusal(
        code,
        reason,
        details.message,
        fields=tuple(details.fields),
        metadata=details.metadata,
        # A refused array is told to its sender square by square: the log names none.
        logged=f"{reason}: told to its sender" if reason in SECRET_REFUSALS else None,
    )


def _bug(message: str, engine: str) -> EngineFailure:
    return EngineFailure(Code.INTERNAL, Reason.INTERNAL_ERROR, message, engine=engine)


def duration(seconds: float) -> duration_pb2.Duration:
    """A protobuf Duration."""
    value = duration_pb2.Duration()
    value.FromMilliseconds(round(seconds * 1000))
    return value


# Per-call balancing: every channel connects to every address its target resolves to and
# sends each call to the next ready one.
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})

MAX_RECONNECT_MS = 1000  # the longest a channel waits between two tries to reconnect
RECONNECT_JITTER = 0.2  # gRPC's: a wait is stretched by up to this much
CHANNEL_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
    # An engine host that vanishes (no reset, packets lost) is noticed within about 7 s: a
    # ping every 5 s, busy or idle, unanswered for 2 s closes the connection, and round robin
    # sends the next calls to the replicas that answer (the engine permits these pings,
    # `serving.server_options`).
    ("grpc.keepalive_time_ms", 5_000),
    ("grpc.keepalive_timeout_ms", 2_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.service_config", ROUND_ROBIN),
    # A connection the engine recycles (its maximum connection age) or loses makes the
    # channel resolve the name again: at most this often, so new replicas are found soon.
    ("grpc.dns_min_time_between_resolutions_ms", 5_000),
    # Reconnect quickly after an engine restart instead of backing off for long: a channel
    # tries again within MAX_RECONNECT_MS (and gRPC's jitter) of the engine's return.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_MS),
    # Each channel its own connections (gRPC would otherwise share them between channels
    # with the same target and options).
    ("grpc.use_local_subchannel_pool", 1),
]

# How often the client looks whether its TLS files were renewed (new channels then).
TLS_LOOK_INTERVAL = 60.0
VIEWS_KEPT = 512  # views for drawing kept (`Engine.drawn`)
DESCRIPTIONS_KEPT = 64  # games described under options kept (`Engine.describe`)


def backoff(attempt: int, jitter: float) -> float:
    """Seconds to wait after failed attempt `attempt` (0 the first) before the next: 50 ms
    doubled on every attempt, stretched by `jitter` (0 to 1) so that the replicas retrying
    after one engine restart do not all come back at the same moment."""
    return 0.05 * 2.0**attempt * (1 + jitter)


def sent(state: game_pb2.GameState) -> game_pb2.GameState:
    """A state as the engine reads it: with a position, the game, the position and its tag
    alone (the engine ignores the rest; the tag spares it re-checking a text it wrote); a
    state of the structured form as it is."""
    if not state.position:
        return state
    return game_pb2.GameState(
        game=state.game,
        format_version=state.format_version,
        position=state.position,
        position_tag=state.position_tag,
    )


class Engine:
    """An asyncio client of wargame.v1.RulesEngine with deadlines and retries.

    The shape of the connections: `settings.engine_connections` channels, used in turn, each
    balancing per call (round robin) over every address of `target`. With a name that
    resolves to every engine replica (`dns:///wargame-engine:50051`, a headless Service on
    Kubernetes) calls spread over all replicas, and each replica holds that many connections
    from this matchmaker, which its worker processes share out (SO_REUSEPORT spreads
    connections, not calls). The engine recycles connections after its maximum connection
    age; the channel then resolves the name again and so reaches replicas added since.

    With `settings.engine_tls` the channels speak TLS (mutual with a client certificate); a
    renewed certificate or CA file is picked up within `TLS_LOOK_INTERVAL` by new channels,
    the old ones closed once their calls have had time to finish.
    """

    def __init__(self, target: str, settings: Settings) -> None:
        self.target = target
        self.settings = settings
        key = settings.engine_caller_key
        self._caller: tuple[tuple[str, str], ...] = ((CALLER_KEY_HEADER, key),) if key else ()
        self._retiring: set[asyncio.Task[None]] = set()
        self._open()
        self._games: dict[str, board_pb2.GameInfo] = {}
        # Games described under options (ruleset, options): the seats of a scenario, the
        # deployment squares of each side; few distinct keys, bounded anyway.
        self._described: OrderedDict[str, engine_pb2.DescribeGameResponse] = OrderedDict()
        # The views for drawing of the positions last drawn (`drawn`): the watchers of a
        # game share one engine call per position.
        self._views: OrderedDict[str, asyncio.Future[game_pb2.GameState]] = OrderedDict()

    def _open(self) -> None:
        """Open the channels (TLS files read now; nothing changes if they cannot be)."""
        tls = self.settings.engine_tls
        signature = tls.signature() if tls else ()
        channels = [
            aio_channel(self.target, tls, CHANNEL_OPTIONS)
            for _ in range(max(1, self.settings.engine_connections))
        ]
        self.channels = channels
        self._tls_signature = signature
        self._tls_look = time.monotonic() + TLS_LOOK_INTERVAL
        self._stubs = itertools.cycle(
            [engine_pb2_grpc.RulesEngineStub(channel) for channel in self.channels]
        )

    def _stub(self) -> engine_pb2_grpc.RulesEngineStub:
        """The next stub, on new channels once the TLS files have been renewed."""
        tls = self.settings.engine_tls
        if tls is not None and time.monotonic() >= self._tls_look:
            self._tls_look = time.monotonic() + TLS_LOOK_INTERVAL
            if tls.signature() != self._tls_signature:
                old = self.channels
                try:
                    self._open()
                except ConfigError as error:  # a half-written renewal: keep the old channels
                    log.warning("engine TLS files not reloaded", problem=str(error))
                else:
                    log.info("engine TLS files reloaded")
                    task = asyncio.create_task(self._retire(old))
                    self._retiring.add(task)
                    task.add_done_callback(self._retiring.discard)
        return next(self._stubs)

    async def _retire(self, channels: list[grpc.aio.Channel]) -> None:
        try:  # the longest call a channel may carry: a bot's search and its deadline margin
            await asyncio.sleep(self.settings.bot_max_time + self.settings.engine_timeout)
        finally:
            for channel in channels:
                await channel.close()

    async def close(self) -> None:
        """Close the channels."""
        for task in list(self._retiring):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for channel in self.channels:
            await channel.close()

    async def _call(self, method: str, request: Any, timeout: float | None = None) -> Any:
        deadline = timeout or self.settings.engine_timeout
        attempts = max(1, self.settings.engine_retries)
        rid = request_id()
        metadata = self._caller + ((("x-request-id", rid),) if rid else ())
        for attempt in range(attempts):
            try:
                return await getattr(self._stub(), method)(
                    request, timeout=deadline, metadata=metadata
                )
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code == grpc.StatusCode.UNAVAILABLE and attempt + 1 < attempts:
                    await asyncio.sleep(backoff(attempt, random.random()))
                    continue
                if code in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.CANCELLED,
                ):
                    hint = unavailable(
                        Reason.ENGINE_UNAVAILABLE,
                        "the rules engine cannot be reached",
                        self.settings.retry_hint,
                    )
                    raise EngineFailure(
                        hint.code,
                        hint.reason,
                        hint.message,
                        engine=f"{method}: {code.name} {error.details() or ''}".strip(),
                        metadata=hint.metadata,
                        retry_after=hint.retry_after,
                    ) from None
                raise EngineError(error_details(error)) from None
        raise AssertionError("unreachable")

    async def games(self) -> Mapping[str, board_pb2.GameInfo]:
        """The rulesets the engine serves (asked once, then kept)."""
        if not self._games:
            reply = await self._call("ListGames", engine_pb2.ListGamesRequest())
            self._games = {info.id: info for info in reply.games}
        return self._games

    async def sides(self, ruleset: str, options: Mapping[str, str] | None = None) -> list[str]:
        """The side ids of a ruleset, in the game's order: the seats of a game. With
        options, the sides DescribeGame lists under them (a Napoleonic Chess scenario of
        N players); invalid options are refused as the engine refuses them."""
        games = await self.games()
        if ruleset not in games:
            raise Refusal(
                Code.NOT_FOUND,
                Reason.UNKNOWN_GAME,
                f"unknown game {quoted(ruleset)}; games: {', '.join(games)}",
                field="game",
            )
        if not options:
            return [side.id for side in games[ruleset].sides]
        try:
            described = await self.describe(ruleset, options)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=False) from None
        return [side.id for side in described.info.sides]

    async def describe(
        self, ruleset: str, options: Mapping[str, str]
    ) -> engine_pb2.DescribeGameResponse:
        """DescribeGame under options, asked once per ruleset and options (bounded cache)."""
        key = json.dumps([ruleset, dict(sorted(options.items()))])
        described = self._described.get(key)
        if described is None:
            described = await self._call(
                "DescribeGame", engine_pb2.DescribeGameRequest(game=ruleset, options=dict(options))
            )
            self._described[key] = described
            while len(self._described) > DESCRIPTIONS_KEPT:
                self._described.popitem(last=False)
        self._described.move_to_end(key)
        return described

    async def new_game(
        self, ruleset: str, options: Mapping[str, str], preset: str, setup: str
    ) -> game_pb2.GameState:
        """The initial state of a new game."""
        reply = await self._call(
            "NewGame",
            engine_pb2.NewGameRequest(
                game=ruleset, options=dict(options), preset=preset, setup=setup
            ),
        )
        return reply.state  # type: ignore[no-any-return]

    async def apply(
        self, state: game_pb2.GameState, actions: list[game_pb2.Action], *, view: bool = False
    ) -> engine_pb2.ApplyActionsResponse:
        """Apply actions atomically to a state (sent as its game and position alone); the
        new state in its compact form, with the view for drawing too when `view`."""
        request = engine_pb2.ApplyActionsRequest(
            state=sent(state),
            actions=actions,
            view=engine_pb2.STATE_VIEW_FULL if view else engine_pb2.STATE_VIEW_POSITION,
        )
        reply = await self._call("ApplyActions", request)
        return reply  # type: ignore[no-any-return]

    async def drawn(self, state: game_pb2.GameState) -> game_pb2.GameState:
        """A compact state with the view for drawing added: the engine's for its position,
        asked once per position while it is among the last few asked (the watchers of a
        game, who all want it at once, share one call)."""
        if not state.position or state.pieces:
            return state  # a state of the structured form, or one drawn already
        key = f"{state.game}|{state.position}"
        pending = self._views.get(key)
        if pending is None or (
            pending.done() and (pending.cancelled() or pending.exception() is not None)
        ):  # asked for the first time, or the last call failed: ask (again)
            pending = asyncio.ensure_future(self._view_of(state.game, state.position))
            self._views[key] = pending
            while len(self._views) > VIEWS_KEPT:
                self._views.popitem(last=False)
        self._views.move_to_end(key)
        view = await asyncio.shield(pending)
        out = game_pb2.GameState()
        out.CopyFrom(state)
        out.MergeFrom(view)
        return out

    async def _view_of(self, game: str, position: str) -> game_pb2.GameState:
        """The view for drawing (options, pieces, detail) of a position."""
        try:
            reply = await self._call(
                "NewGame", engine_pb2.NewGameRequest(game=game, position=position)
            )
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        view = game_pb2.GameState(options=reply.state.options, pieces=reply.state.pieces)
        detail = reply.state.WhichOneof("detail")
        if detail:
            getattr(view, detail).CopyFrom(getattr(reply.state, detail))
        return view

    async def suggest(
        self, state: game_pb2.GameState, side: str, seconds: float, seed: int, level: int = 0
    ) -> engine_pb2.SuggestActionResponse:
        """The engine's choice of action for `side` at `level` (1-5; 0: the engine's
        default), searched for `seconds`."""
        request = engine_pb2.SuggestActionRequest(
            state=state, side=side, time_budget=duration(seconds), seed=seed, level=level
        )
        reply = await self._call(
            "SuggestAction", request, timeout=seconds + self.settings.engine_timeout
        )
        return reply  # type: ignore[no-any-return]

    async def deployment_squares(self, state: game_pb2.GameState, side: str) -> tuple[str, ...]:
        """The squares `side` deploys on in this game (DescribeGame's `deployment:<side>`
        cell tags)."""
        try:
            reply = await self.describe(state.game, state.options)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        tag = f"deployment:{side}"
        return tuple(cell.name for cell in reply.board.cells if tag in cell.tags)

    async def write_record(
        self, initial: game_pb2.GameState, actions: list[game_pb2.Action], tags: Mapping[str, str]
    ) -> engine_pb2.WriteRecordResponse:
        """The record text of a game played from `initial`."""
        reply = await self._call(
            "WriteRecord",
            engine_pb2.WriteRecordRequest(initial_state=initial, actions=actions, tags=dict(tags)),
        )
        return reply  # type: ignore[no-any-return]
