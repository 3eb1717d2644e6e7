"""Channels to the rules engine and the matchmaker, and one typed method per call the client makes.

Every method returns the response message or raises `ClientError` with one readable line
("cannot reach the matchmaker at 127.0.0.1:50052 — start it with `make run`"). Channels
reconnect quickly (short back-off) so a restarted server is found again within a second or
two; streams (`watch`, `queue`) return the raw call so the caller can cancel it. A service
reached over TLS (`Addresses.of`: any host beyond this machine unless --plaintext, --tls,
or a `grpcs://` address) gets a verified channel; `--server HOST` names one host for both
services (`defaults.server_address`: port 443 unless given, as behind a gateway).
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf import duration_pb2
from google.protobuf.message import Message

from cli_client.defaults import DEFAULT_ENGINE, DEFAULT_MATCHMAKER, split_target
from cli_client.errors import ClientError, UnreachableError, explain
from wargame.runtime.config import ConfigError
from wargame.runtime.tls import ClientTLS, is_loopback, target_hosts
from wargame.runtime.tls import channel as open_channel
from wargame.v1 import (
    engine_pb2,
    engine_pb2_grpc,
    game_pb2,
    matchmaker_pb2,
    matchmaker_pb2_grpc,
)

ENGINE = "rules engine"
MATCHMAKER = "matchmaker"
TIMEOUT = 10.0
RETRY_PAUSES = (0.25, 0.5)  # before declaring a service unreachable (reads only)
S = TypeVar("S")  # a service's stub
R = TypeVar("R", bound=Message)  # a call's reply
GameReply = (
    matchmaker_pb2.JoinGameResponse
    | matchmaker_pb2.GetGameResponse
    | matchmaker_pb2.ResignResponse
    | matchmaker_pb2.AbortResponse
    | matchmaker_pb2.OfferDrawResponse
    | matchmaker_pb2.AnswerDrawResponse
    | matchmaker_pb2.RematchResponse
)
G = TypeVar("G", bound=GameReply)  # a matchmaker reply that carries the game

# A lost connection is tried again soon (200 ms, then at most every 1.5 s). Not
# `grpc.min_reconnect_backoff_ms`: gRPC takes it for the shortest time a connection attempt
# is given (default 20 s), and a handshake slower than that (a distant server, a busy one)
# would read as unreachable.
CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1500),
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
)


def duration(seconds: float) -> duration_pb2.Duration:
    """A protobuf Duration of `seconds`."""
    out = duration_pb2.Duration()
    out.FromTimedelta(datetime.timedelta(seconds=seconds))
    return out


@dataclass(frozen=True)
class Addresses:
    """Where the two services listen (host:port), and how each is reached: TLS with these
    settings, or plaintext (None)."""

    engine: str = DEFAULT_ENGINE
    matchmaker: str = DEFAULT_MATCHMAKER
    engine_tls: ClientTLS | None = None
    matchmaker_tls: ClientTLS | None = None

    @classmethod
    def of(
        cls, engine: str, matchmaker: str, *, tls: bool = False, ca_file: str = "",
        server_name: str = "", plaintext: bool = False,
    ) -> Addresses:  # fmt: skip
        """The addresses the command line names. A `grpcs://` (`grpc://`) address is reached
        over TLS (in plaintext); any other in plaintext with `plaintext`, else over TLS with
        `tls`, a CA file or a server name, or when its host is beyond this machine. TLS trusts
        the CA in `ca_file`, or else the system's CA certificates."""
        settings = ClientTLS(ca_file=ca_file, server_name=server_name)
        try:
            if ca_file:
                settings.credentials()  # the CA file is readable and holds certificates
        except ConfigError as error:
            raise ClientError(str(error)) from None
        default = tls or bool(ca_file or server_name)

        def reach(text: str) -> tuple[str, ClientTLS | None]:
            address, scheme_tls = split_target(text)
            if scheme_tls is not None:
                on = scheme_tls
            else:
                distant = not all(is_loopback(host) for host in target_hosts(address))
                on = not plaintext and (default or distant)
            return address, settings if on else None

        engine_address, engine_tls = reach(engine)
        matchmaker_address, matchmaker_tls = reach(matchmaker)
        return cls(engine_address, matchmaker_address, engine_tls, matchmaker_tls)


class Connection:
    """Lazily opened channels to both services, with the player's token for the matchmaker."""

    def __init__(self, addresses: Addresses, token: str = "") -> None:
        self.addresses = addresses
        self.token = token
        self._channels: dict[str, grpc.Channel] = {}  # by service, opened on first use
        self._stubs: dict[str, Any] = {}

    # -- plumbing --------------------------------------------------------------------

    def _stub(
        self, service: str, address: str, tls: ClientTLS | None, stub: Callable[[grpc.Channel], S]
    ) -> S:
        """The stub of `service`, its channel opened on first use."""
        if service not in self._stubs:
            self._channels[service] = open_channel(address, tls, CHANNEL_OPTIONS)
            self._stubs[service] = stub(self._channels[service])
        made: S = self._stubs[service]
        return made

    @property
    def engine(self) -> engine_pb2_grpc.RulesEngineStub:
        """The RulesEngine stub (the channel opens on first use)."""
        addresses = self.addresses
        return self._stub(
            ENGINE, addresses.engine, addresses.engine_tls, engine_pb2_grpc.RulesEngineStub
        )

    @property
    def matchmaker(self) -> matchmaker_pb2_grpc.MatchmakerStub:
        """The Matchmaker stub (the channel opens on first use)."""
        addresses = self.addresses
        return self._stub(
            MATCHMAKER,
            addresses.matchmaker,
            addresses.matchmaker_tls,
            matchmaker_pb2_grpc.MatchmakerStub,
        )

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The authorization metadata of the player, if it has a token."""
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def close(self) -> None:
        """Close both channels."""
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()
        self._stubs.clear()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(
        self, stub: Any, request: Message, reply: type[R], *, service: str, address: str,
        timeout: float, metadata: tuple[tuple[str, str], ...] = (), retry: bool = False,
    ) -> R:  # fmt: skip
        """One call of the RPC that takes `request` (`<Method>Request`, as buf lint holds the
        contract to), its reply checked to be a `reply` (the gRPC stubs are untyped); a read
        that found nobody listening is tried again briefly first."""
        method = getattr(stub, type(request).__name__.removesuffix("Request"))
        pauses = list(RETRY_PAUSES) if retry else []
        while True:
            try:
                answer = method(request, timeout=timeout, metadata=metadata)
            except grpc.RpcError as error:
                failure = explain(error, service, address)
                if isinstance(failure, UnreachableError) and pauses:
                    time.sleep(pauses.pop(0))
                    continue
                if os.environ.get("WARGAME_DEBUG"):
                    detail = f"{failure.message} [{error.code().name}: {error.details()}]"
                    failure = type(failure)(detail, reason=failure.reason, code=failure.code)
                raise failure from None
            if not isinstance(answer, reply):
                raise TypeError(
                    f"{service} answered a {type(answer).__name__}, not a {reply.__name__}"
                )
            return answer

    def _engine_call(self, request: Message, reply: type[R], timeout: float = TIMEOUT) -> R:
        # Every engine call is a pure function of its request: always safe to try again.
        return self._call(
            self.engine, request, reply, service=ENGINE, address=self.addresses.engine,
            timeout=timeout, retry=True,
        )  # fmt: skip

    def _matchmaker_call(
        self, request: Message, reply: type[R], timeout: float = TIMEOUT, *, retry: bool = False
    ) -> R:
        return self._call(
            self.matchmaker, request, reply, service=MATCHMAKER, address=self.addresses.matchmaker,
            timeout=timeout, metadata=self.metadata, retry=retry,
        )  # fmt: skip

    def _game_after(
        self, request: Message, reply: type[G], timeout: float = TIMEOUT, *, retry: bool = False
    ) -> matchmaker_pb2.GameView:
        """The game as a matchmaker call leaves it (its reply's `game`)."""
        return self._matchmaker_call(request, reply, timeout, retry=retry).game

    def matchmaker_error(self, error: grpc.RpcError) -> ClientError:
        """The one-line error of a failed matchmaker stream."""
        return explain(error, MATCHMAKER, self.addresses.matchmaker)

    # -- the rules engine -------------------------------------------------------------

    def list_games(self) -> engine_pb2.ListGamesResponse:
        """Every ruleset with its options and presets."""
        return self._engine_call(engine_pb2.ListGamesRequest(), engine_pb2.ListGamesResponse)

    def describe_game(
        self, game: str, options: Mapping[str, str] | None = None, preset: str = ""
    ) -> engine_pb2.DescribeGameResponse:
        """A game's board, pieces and rules summary under some options."""
        request = engine_pb2.DescribeGameRequest(
            game=game, options=dict(options or {}), preset=preset
        )
        return self._engine_call(request, engine_pb2.DescribeGameResponse)

    def new_game_from(self, game: str, position: str) -> engine_pb2.NewGameResponse:
        """A game from a whole position text, with its view (for drawing) and set-up."""
        request = engine_pb2.NewGameRequest(game=game, position=position)
        return self._engine_call(request, engine_pb2.NewGameResponse)

    def position_of(self, state: game_pb2.GameState) -> str:
        """A state's position text; the engine writes it for a state that came without one
        (a copy that withholds a secret deployment, a game stored before positions)."""
        if state.position:
            return state.position
        request = engine_pb2.WriteRecordRequest(
            initial_state=state, view=engine_pb2.STATE_VIEW_POSITION
        )
        reply = self._engine_call(request, engine_pb2.WriteRecordResponse)
        return reply.final_state.position

    def legal_actions(
        self, state: game_pb2.GameState, cell: str = ""
    ) -> engine_pb2.ListLegalActionsResponse:
        """The legal actions in a state, optionally only those from one cell."""
        request = engine_pb2.ListLegalActionsRequest(state=state, cell=cell)
        return self._engine_call(request, engine_pb2.ListLegalActionsResponse)

    def apply_actions(
        self, state: game_pb2.GameState, actions: list[game_pb2.Action]
    ) -> engine_pb2.ApplyActionsResponse:
        """What actions would do to a state (the engine applies them; nothing is stored)."""
        request = engine_pb2.ApplyActionsRequest(state=state, actions=actions)
        return self._engine_call(request, engine_pb2.ApplyActionsResponse)

    def parse_action(
        self, state: game_pb2.GameState, text: str, side: str = ""
    ) -> engine_pb2.ParseActionResponse:
        """The engine's reading of an action text."""
        request = engine_pb2.ParseActionRequest(state=state, text=text, side=side)
        return self._engine_call(request, engine_pb2.ParseActionResponse)

    def suggest(
        self, state: game_pb2.GameState, side: str, seconds: float = 1.0, *, level: int = 0
    ) -> engine_pb2.SuggestActionResponse:
        """A suggested action for `side`, searched for about `seconds` at `level` (1-5; 0:
        the strongest)."""
        request = engine_pb2.SuggestActionRequest(
            state=state, side=side, time_budget=duration(seconds), level=level
        )
        return self._engine_call(
            request, engine_pb2.SuggestActionResponse, timeout=seconds + TIMEOUT
        )

    def replay_record(self, record: str) -> engine_pb2.ReplayRecordResponse:
        """A record replayed, with the state after every action."""
        request = engine_pb2.ReplayRecordRequest(record=record, include_states=True)
        return self._engine_call(request, engine_pb2.ReplayRecordResponse, timeout=60.0)

    # -- the matchmaker ---------------------------------------------------------------

    def register(self, display_name: str) -> matchmaker_pb2.RegisterPlayerResponse:
        """Register a guest player."""
        request = matchmaker_pb2.RegisterPlayerRequest(display_name=display_name)
        return self._matchmaker_call(request, matchmaker_pb2.RegisterPlayerResponse)

    def get_player(self, player_id: str = "") -> matchmaker_pb2.Player:
        """A player's profile (the caller's when no id is given)."""
        request = matchmaker_pb2.GetPlayerRequest(player_id=player_id)
        return self._matchmaker_call(request, matchmaker_pb2.GetPlayerResponse, retry=True).player

    def create_game(
        self, request: matchmaker_pb2.CreateGameRequest
    ) -> matchmaker_pb2.CreateGameResponse:
        """Create a game and take a seat in it."""
        return self._matchmaker_call(request, matchmaker_pb2.CreateGameResponse, timeout=30.0)

    def join_game(
        self, *, game_id: str = "", invite_code: str = "", side: str = ""
    ) -> matchmaker_pb2.GameView:
        """Take the open seat of a game, by id or invite code."""
        if invite_code:
            request = matchmaker_pb2.JoinGameRequest(invite_code=invite_code, side=side)
        else:
            request = matchmaker_pb2.JoinGameRequest(game_id=game_id, side=side)
        return self._game_after(request, matchmaker_pb2.JoinGameResponse, 30.0)

    def get_game(self, game_id: str, timeout: float = TIMEOUT) -> matchmaker_pb2.GameView:
        """A game as the caller may see it."""
        request = matchmaker_pb2.GetGameRequest(game_id=game_id)
        return self._game_after(request, matchmaker_pb2.GetGameResponse, timeout, retry=True)

    def submit(
        self, game_id: str, expected_version: int, key: str, actions: list[game_pb2.Action]
    ) -> matchmaker_pb2.SubmitActionsResponse:
        """Play actions at a version, with an idempotency key (safe to retry)."""
        request = matchmaker_pb2.SubmitActionsRequest(
            game_id=game_id, expected_version=expected_version, idempotency_key=key, actions=actions
        )
        return self._matchmaker_call(request, matchmaker_pb2.SubmitActionsResponse, timeout=30.0)

    def resign(self, game_id: str) -> matchmaker_pb2.GameView:
        """Resign a game."""
        request = matchmaker_pb2.ResignRequest(game_id=game_id)
        return self._game_after(request, matchmaker_pb2.ResignResponse)

    def abort(self, game_id: str) -> matchmaker_pb2.GameView:
        """Abort a game before any side's second turn (no result, no rating)."""
        request = matchmaker_pb2.AbortRequest(game_id=game_id)
        return self._game_after(request, matchmaker_pb2.AbortResponse)

    def take_back(self, game_id: str, version: int) -> matchmaker_pb2.TakeBackResponse:
        """Take back the player's last action and the bot's answers (unrated, vs the bot)."""
        request = matchmaker_pb2.TakeBackRequest(game_id=game_id, expected_version=version)
        return self._matchmaker_call(request, matchmaker_pb2.TakeBackResponse)

    def send_chat(self, game_id: str, text: str) -> matchmaker_pb2.ChatLine:
        """Say a line to a game's chat."""
        request = matchmaker_pb2.SendChatRequest(game_id=game_id, text=text)
        return self._matchmaker_call(request, matchmaker_pb2.SendChatResponse).line

    def offer_draw(self, game_id: str) -> matchmaker_pb2.GameView:
        """Offer a draw."""
        request = matchmaker_pb2.OfferDrawRequest(game_id=game_id)
        return self._game_after(request, matchmaker_pb2.OfferDrawResponse)

    def answer_draw(self, game_id: str, accept: bool) -> matchmaker_pb2.GameView:
        """Accept or decline the opponent's draw offer."""
        request = matchmaker_pb2.AnswerDrawRequest(game_id=game_id, accept=accept)
        return self._game_after(request, matchmaker_pb2.AnswerDrawResponse)

    def rematch(self, game_id: str) -> matchmaker_pb2.GameView:
        """Play a finished game again, sides swapped (or accept the opponent's offer)."""
        request = matchmaker_pb2.RematchRequest(game_id=game_id)
        return self._game_after(request, matchmaker_pb2.RematchResponse, 30.0)

    def get_record(self, game_id: str) -> str:
        """The replayable record of a game."""
        request = matchmaker_pb2.GetRecordRequest(game_id=game_id)
        return self._matchmaker_call(request, matchmaker_pb2.GetRecordResponse, retry=True).record

    def browse_open(self, game: str = "") -> matchmaker_pb2.BrowseGamesResponse:
        """Public games waiting for players (one page, newest first)."""
        request = matchmaker_pb2.BrowseGamesRequest(
            game=game, status=matchmaker_pb2.GAME_STATUS_OPEN, page_size=50
        )
        return self._matchmaker_call(request, matchmaker_pb2.BrowseGamesResponse, retry=True)

    def leaderboard(self, game: str, limit: int) -> matchmaker_pb2.GetLeaderboardResponse:
        """The best-rated players of a game."""
        request = matchmaker_pb2.GetLeaderboardRequest(game=game, limit=limit)
        return self._matchmaker_call(request, matchmaker_pb2.GetLeaderboardResponse, retry=True)

    def leave_queue(self, ticket: str) -> None:
        """Leave the quick-match queue."""
        request = matchmaker_pb2.LeaveQueueRequest(ticket=ticket)
        self._matchmaker_call(request, matchmaker_pb2.LeaveQueueResponse, 5.0)

    # -- streams (the caller iterates, and may cancel) ------------------------------------

    def watch(self, game_id: str, after_version: int, *, follow_rematch: bool = False) -> Any:
        """The WatchGame stream from a version on (iterate it; `.cancel()` ends it); with
        `follow_rematch`, open past the game's end until a rematch is offered."""
        request = matchmaker_pb2.WatchGameRequest(
            game_id=game_id, after_version=after_version, follow_rematch=follow_rematch
        )
        return self.matchmaker.WatchGame(request, metadata=self.metadata)

    def queue(self, request: matchmaker_pb2.JoinQueueRequest) -> Any:
        """The JoinQueue stream (iterate it; `.cancel()` leaves the queue)."""
        return self.matchmaker.JoinQueue(request, metadata=self.metadata)


def iterate(stream: Any) -> Iterator[Any]:
    """The messages of a stream call (typed as an iterator for the callers)."""
    yield from stream
