"""The `wargame.v1.Matchmaker` servicer (grpc.aio): every RPC, nothing kept in memory.

Calls acting for a player carry `authorization: Bearer <token>`; GetGame, WatchGame,
BrowseGames, GetRecord, GetLeaderboard, GetPlayer (with an id) and Echo also serve
callers without a token (spectators), who see what a spectator may see. The long-lived
streams (JoinQueue, WatchGame) end cleanly when the server shuts down.
"""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import structlog

from matchmaker.abort import abort
from matchmaker.chat import chat_lines, chat_message, is_chat, say
from matchmaker.engine import Engine, EngineError, duration, refusal_status
from matchmaker.errors import game_not_found, quoted
from matchmaker.handling import bind_player, stream, unary
from matchmaker.keys import plausible_id
from matchmaker.limits import Limits, caller_address
from matchmaker.metrics import WATCH_DELIVERY
from matchmaker.play import Play, resignation
from matchmaker.players import Players, rating_message
from matchmaker.presence import Presence
from matchmaker.queue import Queues, Ticket
from matchmaker.ratings import MULTIPLAYER
from matchmaker.record import (
    GameRecord,
    GameStatus,
    SeatKind,
    Visibility,
)
from matchmaker.seating import GameSpec, Seating, TimeControl
from matchmaker.settings import Settings
from matchmaker.states import for_viewer, hidden_pending
from matchmaker.store import Store, StreamEntry
from matchmaker.takeback import take_back
from matchmaker.tokens import Identity, Tokens, check_display_name
from matchmaker.views import (
    game_view,
    notice_message,
    public_record,
    timestamp,
    watch_message,
)
from matchmaker.watch import Batch, Caller, Hub, finished_at
from wargame.runtime.refusal import Code, Reason, Refusal, malformed, missing, unavailable
from wargame.v1 import game_pb2, matchmaker_pb2, matchmaker_pb2_grpc

SERVICE_NAME = matchmaker_pb2.DESCRIPTOR.services_by_name["Matchmaker"].full_name
VISIBILITIES = {
    matchmaker_pb2.VISIBILITY_UNSPECIFIED: Visibility.PUBLIC,
    matchmaker_pb2.VISIBILITY_PUBLIC: Visibility.PUBLIC,
    matchmaker_pb2.VISIBILITY_PRIVATE: Visibility.PRIVATE,
}
OPPONENTS = (
    matchmaker_pb2.SEAT_KIND_UNSPECIFIED,
    matchmaker_pb2.SEAT_KIND_HUMAN,
    matchmaker_pb2.SEAT_KIND_BOT,
)
HEARTBEAT = 5.0  # a waiting JoinQueue stream reports at least this often
CATCH_UP = 500  # stream entries a watcher catching up reads at once
REMATCH_NOTICE = matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED

log = structlog.get_logger(component="matchmaker")


def bearer_token(context: grpc.aio.ServicerContext) -> str | None:
    """The token of `authorization: Bearer <token>` metadata, if any."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else str(value)
            scheme, _, token = text.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Refusal(
                    Code.UNAUTHENTICATED,
                    Reason.TOKEN_INVALID,
                    "authorization must be 'Bearer <token>'",
                )
            return token.strip()
    return None


class MatchmakerService(matchmaker_pb2_grpc.MatchmakerServicer):
    """Players, games, queues, live play, records and ratings over Redis."""

    def __init__(
        self,
        *,
        settings: Settings,
        store: Store,
        engine: Engine,
        tokens: Tokens,
        players: Players,
        seating: Seating,
        play: Play,
        queues: Queues,
        hub: Hub,
        limits: Limits,
        presence: Presence,
    ) -> None:
        self.settings = settings
        self.limits = limits
        self.presence = presence
        self.store = store
        self.engine = engine
        self.tokens = tokens
        self.players = players
        self.seating = seating
        self.play = play
        self.queues = queues
        self.hub = hub
        self.traffic = hub.traffic  # unary calls counted (`handling.unary`): openings give way
        self.shutdown = asyncio.Event()  # set when the server stops: streams end
        self.poke_pairer: Callable[[], None] = lambda: None

    # -- callers ---------------------------------------------------------------------------

    async def _caller(self, context: grpc.aio.ServicerContext) -> Identity:
        token = bearer_token(context)
        if token is None:
            raise _token_missing()
        identity = await self.tokens.authenticate(token)
        bind_player(identity.player_id)
        return identity

    async def _viewer(self, context: grpc.aio.ServicerContext) -> str:
        """The caller's player id, or "" for a caller without a token."""
        if bearer_token(context) is None:
            return ""
        return (await self._caller(context)).player_id

    def _address(self, context: grpc.aio.ServicerContext) -> str:
        """The caller's address, as limits count it."""
        return caller_address(context, self.limits.trusted)

    async def _name(self, player_id: str) -> str:
        profile = await self.players.profile(player_id) if plausible_id(player_id) else None
        if profile is None:
            raise Refusal(Code.NOT_FOUND, Reason.PLAYER_NOT_FOUND, "the player has expired")
        return profile.name

    # -- players -----------------------------------------------------------------------------

    @unary("RegisterPlayer")
    async def RegisterPlayer(
        self, request: matchmaker_pb2.RegisterPlayerRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.RegisterPlayerResponse:
        """A new guest player and its secret token (limited per address and in all)."""
        check_display_name(request.display_name)
        await self.limits.take(self.limits.registration(self._address(context)))
        now = await self.store.time_ms()
        player_id, name, token, token_id = await self.tokens.register(request.display_name, now)
        bind_player(player_id)
        return matchmaker_pb2.RegisterPlayerResponse(
            player=matchmaker_pb2.Player(id=player_id, display_name=name),
            token=token,
            token_id=token_id,
        )

    @unary("CreateToken")
    async def CreateToken(
        self, request: matchmaker_pb2.CreateTokenRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.CreateTokenResponse:
        """Another token for the calling player."""
        caller = await self._caller(context)
        token, token_id = await self.tokens.issue(caller.player_id)
        return matchmaker_pb2.CreateTokenResponse(token=token, token_id=token_id)

    @unary("RevokeToken")
    async def RevokeToken(
        self, request: matchmaker_pb2.RevokeTokenRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.RevokeTokenResponse:
        """Revoke the calling token, or another of the player's by id."""
        caller = await self._caller(context)
        await self.tokens.revoke(caller, request.token_id)
        return matchmaker_pb2.RevokeTokenResponse()

    @unary("GetPlayer")
    async def GetPlayer(
        self, request: matchmaker_pb2.GetPlayerRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.GetPlayerResponse:
        """A player's public profile and ratings (the caller's without an id)."""
        player_id = request.player_id or (await self._caller(context)).player_id
        if request.player_id:
            await self._viewer(context)  # a token, if given, must be valid
        profile = await self.players.profile(player_id)
        if profile is None:
            raise Refusal(
                Code.NOT_FOUND,
                Reason.PLAYER_NOT_FOUND,
                f"no player {quoted(player_id)}",
                field="player_id",
            )
        return matchmaker_pb2.GetPlayerResponse(player=profile.message())

    # -- games -------------------------------------------------------------------------------

    @unary("CreateGame")
    async def CreateGame(
        self, request: matchmaker_pb2.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.CreateGameResponse:
        """Create a game and seat the caller: the other seats open, or the bot's (all of
        them with opponent BOT, those of bot_sides)."""
        caller = await self._caller(context)
        if not request.game:
            raise missing("game")
        if request.opponent not in OPPONENTS:
            raise malformed("opponent", "opponent is HUMAN or BOT")
        if request.visibility not in VISIBILITIES:
            raise malformed("visibility", "visibility is PUBLIC or PRIVATE")
        spec = GameSpec(
            ruleset=request.game,
            options=dict(request.options),
            preset=request.preset,
            setup=request.setup,
            time_control=TimeControl.of(
                request.time_control if request.HasField("time_control") else None
            ),
            rated=request.rated,
            visibility=VISIBILITIES[request.visibility],
            bot_level=request.bot_level,
        )
        game, now = await self.seating.open_game(
            caller.player_id,
            await self._name(caller.player_id),
            spec,
            side=request.side,
            bot_sides=request.bot_sides,
            bot_levels=dict(request.bot_levels),
            against_bot=request.opponent == matchmaker_pb2.SEAT_KIND_BOT,
            bot_seconds=request.bot_time.ToMilliseconds() / 1000
            if request.HasField("bot_time")
            else None,
        )
        return matchmaker_pb2.CreateGameResponse(
            game=await self._view(game, caller.player_id, now), invite_code=game.invite
        )

    @unary("JoinGame")
    async def JoinGame(
        self, request: matchmaker_pb2.JoinGameRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.JoinGameResponse:
        """Take the open seat of a game, by id or invite code."""
        caller = await self._caller(context)
        target = request.WhichOneof("target")
        if target is None:
            raise missing("game_id")
        name = await self._name(caller.player_id)
        game, now = await self.seating.join(
            caller.player_id,
            name,
            game_id=request.game_id if target == "game_id" else "",
            code=request.invite_code if target == "invite_code" else "",
            side=request.side,
            address=self._address(context),
        )
        return matchmaker_pb2.JoinGameResponse(game=await self._view(game, caller.player_id, now))

    @unary("Rematch")
    async def Rematch(
        self, request: matchmaker_pb2.RematchRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.RematchResponse:
        """Play a finished game again with sides swapped, or accept the opponent's offer."""
        caller = await self._caller(context)
        name = await self._name(caller.player_id)
        game, now = await self.seating.rematch(caller.player_id, name, request.game_id)
        return matchmaker_pb2.RematchResponse(game=await self._view(game, caller.player_id, now))

    @unary("GetGame")
    async def GetGame(
        self, request: matchmaker_pb2.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.GetGameResponse:
        """A game as the caller may see it."""
        viewer = await self._viewer(context)
        game, now = await self.store.get(request.game_id)
        return matchmaker_pb2.GetGameResponse(game=await self._view(game, viewer, now))

    @unary("BrowseGames")
    async def BrowseGames(
        self, request: matchmaker_pb2.BrowseGamesRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.BrowseGamesResponse:
        """Public open and running games, newest first, a page at a time."""
        viewer = await self._viewer(context)
        wanted = {
            matchmaker_pb2.GAME_STATUS_UNSPECIFIED: [GameStatus.OPEN, GameStatus.RUNNING],
            matchmaker_pb2.GAME_STATUS_OPEN: [GameStatus.OPEN],
            matchmaker_pb2.GAME_STATUS_RUNNING: [GameStatus.RUNNING],
        }.get(request.status)
        if wanted is None:
            raise malformed("status", "only OPEN and RUNNING games are listed")
        rulesets = [request.game] if request.game else list(await self.engine.games())
        if request.game:
            await self.engine.sides(request.game)
        size = request.page_size or self.settings.default_page_size
        if size > self.settings.max_page_size:
            raise malformed("page_size", f"page_size is at most {self.settings.max_page_size}")
        offset = _page_offset(request.page_token, self.settings.browse_size)
        rows = await self.store.list_page(wanted, rulesets, offset, size)
        page = rows[:size]
        records = await self.store.brief([row[2] for row in page])
        now = await self.store.time_ms()
        response = matchmaker_pb2.BrowseGamesResponse()
        for (status, ruleset, game_id, _), game in zip(page, records, strict=True):
            if game is None or game.status != status:
                await self.store.list_remove(status, ruleset, game_id)  # stale entry
                continue
            response.games.append(game_view(game, viewer, now, with_state=False, with_moves=False))
        if len(rows) > size:
            response.next_page_token = base64.urlsafe_b64encode(
                str(offset + size).encode()
            ).decode()
        return response

    # -- quick match -----------------------------------------------------------------------

    @stream("JoinQueue")
    async def JoinQueue(
        self, request: matchmaker_pb2.JoinQueueRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[matchmaker_pb2.JoinQueueResponse]:
        """Wait in a quick-match queue, reporting the wait, until matched or left."""
        caller = await self._caller(context)
        name = await self._name(caller.player_id)
        await self.players.require_room(caller.player_id)
        time_control = TimeControl.of(
            request.time_control if request.HasField("time_control") else None
        )
        spec = await self.queues.spec(
            request.game, dict(request.options), request.preset, time_control, request.rated
        )
        ticket = await self.queues.join(caller.player_id, name, spec)
        self.poke_pairer()
        delivered = False
        try:
            async for message in self._wait_in_queue(caller.player_id, ticket):
                if message.HasField("game"):
                    delivered = True
                yield message
        finally:
            if not delivered:
                await _after_stream("queue leave", self.queues.leave(caller.player_id, ticket))

    async def _wait_in_queue(
        self, player_id: str, ticket: Ticket
    ) -> AsyncIterator[matchmaker_pb2.JoinQueueResponse]:
        loop = asyncio.get_running_loop()
        last: tuple[int, int, int] | None = None
        last_sent = 0.0
        matched_since: float | None = None
        while True:
            paired = self.queues.matched  # (set by a pairing of this replica after the look)
            status = await self.queues.status(player_id, ticket)
            if status.kind == "gone":
                return
            if status.kind == "matched":
                if matched_since is None:
                    matched_since = loop.time()
                late = loop.time() - matched_since > self.settings.match_create_grace
                game = await self.queues.game_for(ticket.queue_id, status.match, create=late)
                if game is not None:
                    now = await self.store.time_ms()
                    yield matchmaker_pb2.JoinQueueResponse(
                        ticket=ticket.text, game=await self._view(game, player_id, now)
                    )
                    await self.queues.claim(player_id, ticket)
                    return
                await asyncio.sleep(0.1)
                continue
            if self.shutdown.is_set():
                return  # the finally of JoinQueue takes the ticket out
            waited = max(0, status.now_ms - status.joined_ms)
            window = self.queues.window(waited)
            key = (status.position, status.waiting, round(window))
            if key != last or loop.time() - last_sent >= HEARTBEAT:
                last, last_sent = key, loop.time()
                yield matchmaker_pb2.JoinQueueResponse(
                    position=status.position,
                    waiting=status.waiting,
                    waited=duration(waited / 1000),
                    rating_window=window,
                    ticket=ticket.text,
                )
            await _wait_any((paired, self.shutdown), self.settings.queue_status_interval)

    @unary("LeaveQueue")
    async def LeaveQueue(
        self, request: matchmaker_pb2.LeaveQueueRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.LeaveQueueResponse:
        """Leave the caller's queue (by ticket, or whichever it waits in)."""
        caller = await self._caller(context)
        ticket = Ticket.parse(request.ticket) if request.ticket else None
        await self.queues.leave(caller.player_id, ticket)
        return matchmaker_pb2.LeaveQueueResponse()

    # -- playing -----------------------------------------------------------------------------

    @unary("SubmitActions")
    async def SubmitActions(
        self, request: matchmaker_pb2.SubmitActionsRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.SubmitActionsResponse:
        """Commit actions if the game is still at the version the caller saw."""
        token = bearer_token(context)
        if token is None:
            raise _token_missing()
        caller, played = await self.play.submit(
            self.tokens.prepare(token),
            request.game_id,
            request.expected_version,
            request.idempotency_key,
            list(request.actions),
        )
        bind_player(caller.player_id)
        return matchmaker_pb2.SubmitActionsResponse(
            game=await self._view(played.game, caller.player_id, played.now_ms, drawn=played.drawn),
            events=played.events,
            notations=played.notations,
            replayed=played.replayed,
        )

    async def _act(
        self, player_id: str, game_id: str, make: Callable[[str], game_pb2.Action]
    ) -> matchmaker_pb2.GameView:
        """Commit a server-built action for the caller's side; the game as it sees it."""
        played = await self.play.act(player_id, game_id, make)
        return await self._view(played.game, player_id, played.now_ms)

    @unary("Resign")
    async def Resign(
        self, request: matchmaker_pb2.ResignRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.ResignResponse:
        """Resign a game (withdraw an open one)."""
        caller = await self._caller(context)
        withdrawn = await self.seating.withdraw(caller.player_id, request.game_id)
        if withdrawn is not None:  # an open game: closed, nobody wins
            game, now = withdrawn
            return matchmaker_pb2.ResignResponse(game=await self._view(game, caller.player_id, now))
        return matchmaker_pb2.ResignResponse(
            game=await self._act(caller.player_id, request.game_id, resignation)
        )

    @unary("OfferDraw")
    async def OfferDraw(
        self, request: matchmaker_pb2.OfferDrawRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.OfferDrawResponse:
        """Offer a draw."""
        caller = await self._caller(context)
        return matchmaker_pb2.OfferDrawResponse(
            game=await self._act(
                caller.player_id,
                request.game_id,
                lambda side: game_pb2.Action(side=side, offer_draw=game_pb2.OfferDraw()),
            )
        )

    @unary("AnswerDraw")
    async def AnswerDraw(
        self, request: matchmaker_pb2.AnswerDrawRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.AnswerDrawResponse:
        """Accept or decline the opponent's draw offer."""
        caller = await self._caller(context)

        def answer(side: str) -> game_pb2.Action:
            if request.accept:
                return game_pb2.Action(side=side, accept_draw=game_pb2.AcceptDraw())
            return game_pb2.Action(side=side, decline_draw=game_pb2.DeclineDraw())

        return matchmaker_pb2.AnswerDrawResponse(
            game=await self._act(caller.player_id, request.game_id, answer)
        )

    @unary("Abort")
    async def Abort(
        self, request: matchmaker_pb2.AbortRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.AbortResponse:
        """Abort a game before any side's second turn: no result, no rating (`abort.py`)."""
        caller = await self._caller(context)
        played = await abort(self.play, caller.player_id, request.game_id)
        return matchmaker_pb2.AbortResponse(
            game=await self._view(played.game, caller.player_id, played.now_ms)
        )

    @unary("TakeBack")
    async def TakeBack(
        self, request: matchmaker_pb2.TakeBackRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.TakeBackResponse:
        """Take back the caller's last action and the bot's answers (`takeback.py`)."""
        caller = await self._caller(context)
        played, undone = await take_back(
            self.play, caller.player_id, request.game_id, request.expected_version
        )
        return matchmaker_pb2.TakeBackResponse(
            game=await self._view(played.game, caller.player_id, played.now_ms),
            taken_back=undone,
        )

    @unary("SendChat")
    async def SendChat(
        self, request: matchmaker_pb2.SendChatRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.SendChatResponse:
        """Say a line to a game's players and watchers (`chat.py`)."""
        caller = await self._caller(context)
        line = await say(
            self.store,
            self.limits,
            self.settings,
            player_id=caller.player_id,
            game_id=request.game_id,
            text=request.text,
        )
        return matchmaker_pb2.SendChatResponse(line=line)

    # -- live updates ------------------------------------------------------------------------

    @stream("WatchGame")
    async def WatchGame(  # type: ignore[override]  # live updates go as bytes (see below)
        self, request: matchmaker_pb2.WatchGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[matchmaker_pb2.WatchGameResponse | bytes]:
        """Every update of a game after a version, and the notices between them, then live
        until it ends (following a rematch: until one is offered). A seated player's stream
        keeps it present while it lasts. The hub admits streams and serves their reads
        over its own Redis connections (`watch.py`); a seated player refused a stream is
        present all the same (`Presence.knock`): being refused never costs it its game.
        A live update is built and serialized once per side that watches, and its bytes
        are written to each stream (`register_service` passes bytes through)."""
        token = bearer_token(context)
        address = self._address(context)
        game_id = request.game_id
        viewer = ""
        async with self.hub.arriving(address, queued=token is None):
            if token is None:  # a spectator: one read of the game for those opening at once
                first = await self._opened_on(game_id)
            else:
                async with self.hub.reading():
                    identity = await self.hub.tokens.authenticate(token)
                    first, _ = await self.hub.store.get(game_id)
                bind_player(identity.player_id)
                viewer = identity.player_id
        seat = first.seat_of(viewer)
        side = seat.side if seat else ""
        seated = (
            seat is not None and seat.kind == SeatKind.HUMAN and first.status != GameStatus.FINISHED
        )
        caller = Caller(address, viewer, seated)
        watcher = ""
        try:
            self.hub.admit(caller)  # a stream refused here never counts as a presence
            if seated:
                watcher = await self.presence.arrive(game_id, side)
            async for message in self._watch(request, caller, side):  # admitted again
                yield message
        except Refusal as refusal:
            if seated and refusal.reason == Reason.TOO_MANY_WATCHERS:
                await self.presence.knock(game_id, side)
            raise
        finally:
            # A stream the server ends as it shuts down is left to lapse: its player
            # reconnects to another replica meanwhile and never seems to have gone.
            if watcher and not self.shutdown.is_set():
                await _after_stream("presence update", self.presence.leave(game_id, watcher))

    async def _watch(
        self, request: matchmaker_pb2.WatchGameRequest, caller: Caller, side: str
    ) -> AsyncIterator[matchmaker_pb2.WatchGameResponse | bytes]:
        game_id = request.game_id
        viewer = caller.player
        store = self.hub.store
        sent = (request.after_version, 0)  # the stream position last sent: (version, seq)
        async with self.hub.subscribe(game_id, caller) as watcher:
            while True:
                while True:  # catch up from the stream (at first, and after falling behind)
                    # Read and built under a read permit, once for the streams of this game
                    # and viewer at this position, sent after it: a burst of openings works a
                    # few reads at a time, and a client that does not read holds no permit.
                    # A spectators' one is kept by the feed for those opening after it.
                    caught = await self.hub.shared(
                        ("catch-up", game_id, sent, viewer, side),
                        functools.partial(self._catch_up, game_id, sent, viewer, side),
                        game_id if not viewer else "",
                    )
                    if caught is None:
                        return
                    game, now, messages, more = caught
                    for position, message in messages:
                        yield message
                        sent = position
                        if message.HasField("notice") and message.notice.kind == REMATCH_NOTICE:
                            return
                    if not more:
                        break
                while not self.shutdown.is_set():  # live
                    wait = self._rematch_wait(request, game, sent[0], now)
                    if wait is not None and wait <= 0:
                        return
                    batch = await watcher.next(self.shutdown, wait)
                    if batch is None:
                        if wait is not None:  # waited for a rematch long enough
                            async with self.hub.reading():
                                now = await store.time_ms()
                            continue
                        return
                    if batch.behind:
                        break  # batches were dropped for this stream: catch up
                    if batch.error is not None:
                        raise unavailable(
                            Reason.STORE_UNAVAILABLE,
                            "the session store cannot be reached",
                            self.settings.retry_hint,
                        )
                    if batch.game is None:
                        return  # the game expired
                    game, now = batch.game, batch.now_ms
                    if batch.entries and batch.entries[-1].position <= sent:
                        continue  # sent already (caught up): nothing to build
                    shared = await batch.messages(side, self._messages(batch, viewer, side))
                    for entry, serialized in shared:
                        if entry.position <= sent:
                            continue
                        yield serialized
                        sent = entry.position
                        delivery = batch.delivery(entry)
                        if delivery is not None:
                            WATCH_DELIVERY.observe(delivery)
                        if _rematch_offered(entry):
                            return
                if self.shutdown.is_set():
                    return

    def _rematch_wait(
        self, request: matchmaker_pb2.WatchGameRequest, game: GameRecord, version: int, now: int
    ) -> float | None:
        """How long a stream that sent `version` waits on for a rematch, in seconds (≤ 0: it
        ends now); None while the game goes on."""
        if not finished_at(game, version):
            return None
        if not request.follow_rematch or game.rematch:
            return 0.0
        # A finished game's last commit is its end.
        return (game.updated_ms + self.settings.rematch_follow * 1000 - now) / 1000

    async def _opened_on(self, game_id: str) -> GameRecord:
        """The game a spectator's stream opens on, read once for the streams opening on it
        at once, and kept by its feed for those opening after them (`Hub.shared`);
        MISSING_FIELD without an id, SESSION_NOT_FOUND if unknown."""
        if not game_id:
            raise missing("game_id")
        if not plausible_id(game_id):
            raise game_not_found(game_id)
        store = self.hub.store
        game, _, _ = await self.hub.shared(("game", game_id), lambda: store.load(game_id), game_id)
        if game is None:
            raise game_not_found(game_id)
        return game

    async def _catch_up(
        self, game_id: str, sent: tuple[int, int], viewer: str, side: str
    ) -> (
        tuple[GameRecord, int, list[tuple[tuple[int, int], matchmaker_pb2.WatchGameResponse]], bool]
        | None
    ):
        """The game, Redis's time, the messages after `sent` (each with its stream position;
        a resync when updates were trimmed) and whether more may follow; None: the game is
        gone."""
        store = self.hub.store
        while True:
            entries = await store.updates_after(game_id, sent, CATCH_UP)
            game, now, _ = await store.load(game_id)
            if game is None:
                return None
            if (
                not entries
                and game.version > sent[0]
                and await self._committed_since(game_id, sent)
            ):
                continue  # committed between the two reads: read both again
            break
        # A resync, the game as it stands, when the updates since `sent` are trimmed, and
        # when the watcher is ahead of the store: it saw changes a failover then lost
        # (their commits were refused, no replica having confirmed them).
        if (
            (entries and entries[0].version > sent[0] + 1)
            or (not entries and game.version > sent[0])
            or game.version < sent[0]
        ):
            resync = matchmaker_pb2.WatchGameResponse(
                version=game.version,
                game=await self._view(game, viewer, now),
                resync=True,
                at=timestamp(game.updated_ms),
            )
            return game, now, [((game.version, 0), resync)], False
        messages = []
        for entry in entries:
            messages.append((entry.position, await self._message(entry, game, viewer, side, now)))
            if _rematch_offered(entry):
                return game, now, messages, False
        return game, now, messages, len(entries) == CATCH_UP

    def _messages(
        self, batch: Batch, viewer: str, side: str
    ) -> Callable[[], Awaitable[list[tuple[StreamEntry, bytes]]]]:
        """What builds a batch's messages for the watchers on `side` (`viewer` is one),
        serialized: the bytes every stream of the side is sent."""

        async def build() -> list[tuple[StreamEntry, bytes]]:
            game = batch.game
            assert game is not None
            return [
                (
                    entry,
                    (
                        await self._message(entry, game, viewer, side, batch.now_ms)
                    ).SerializeToString(),
                )
                for entry in batch.entries
            ]

        return build

    async def _committed_since(self, game_id: str, sent: tuple[int, int]) -> bool:
        """Whether the stream holds the update right after `sent` (so none was trimmed)."""
        following = await self.hub.store.updates_after(game_id, sent, 1)
        return bool(following) and following[0].version == sent[0] + 1

    async def _message(
        self, entry: StreamEntry, game: GameRecord, viewer: str, side: str, now: int
    ) -> matchmaker_pb2.WatchGameResponse:
        """One stream entry as this viewer sees it; the game attached to the newest."""
        if is_chat(entry):
            return chat_message(entry)
        view = await self._view(game, viewer, now) if entry.version == game.version else None
        if entry.notice:
            return notice_message(entry, view)
        pending = hidden_pending(game.state) if game.state_bytes else False
        return watch_message(entry, side, pending, view)

    async def _view(
        self,
        game: GameRecord,
        viewer: str,
        now: int,
        *,
        drawn: game_pb2.GameState | None = None,
    ) -> matchmaker_pb2.GameView:
        """The game as `viewer` may see it, its state with the view for drawing (`drawn`
        when the caller has it, else the engine's for the copy the viewer may see)."""
        if drawn is None and game.state_bytes:
            seat = game.seat_of(viewer)
            drawn = await self.engine.drawn(for_viewer(game.state, seat.side if seat else ""))
        return game_view(game, viewer, now, drawn=drawn)

    # -- records, ratings ----------------------------------------------------------------------

    @unary("GetRecord")
    async def GetRecord(
        self, request: matchmaker_pb2.GetRecordRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.GetRecordResponse:
        """The engine's record of a running or finished game."""
        await self._viewer(context)
        game, _ = await self.store.get(request.game_id, full=True)
        if game.status == GameStatus.OPEN or (game.status == GameStatus.FINISHED and game.closed):
            raise Refusal(
                Code.FAILED_PRECONDITION,
                Reason.GAME_NOT_STARTED,
                f"game {game.id} was never played",
            )
        entries, tags = public_record(game)
        # Commits after the read only add at the end: the game's own moves are a prefix.
        actions = (await self.store.actions(game.id))[: len(entries)]
        try:
            reply = await self.engine.write_record(game.initial, actions, tags)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        return matchmaker_pb2.GetRecordResponse(
            record=reply.record, chat=await chat_lines(self.store, game.id)
        )

    @unary("GetLeaderboard")
    async def GetLeaderboard(
        self, request: matchmaker_pb2.GetLeaderboardRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.GetLeaderboardResponse:
        """The best-rated players of a ruleset."""
        await self._viewer(context)
        if not request.game:
            raise missing("game")
        # A ruleset, or its pool of multiplayer ratings ("napoleonic.multiplayer").
        await self.engine.sides(request.game.removesuffix(f".{MULTIPLAYER}"))
        limit = request.limit or self.settings.default_page_size
        if limit > self.settings.max_page_size:
            raise malformed("limit", f"limit is at most {self.settings.max_page_size}")
        response = matchmaker_pb2.GetLeaderboardResponse()
        for rank, (player_id, name, rating) in enumerate(
            await self.players.leaderboard(request.game, limit), 1
        ):
            response.entries.add(
                rank=rank,
                player=matchmaker_pb2.Player(id=player_id, display_name=name),
                rating=rating_message(request.game, rating),
            )
        return response

    @unary("Echo")
    async def Echo(
        self, request: matchmaker_pb2.EchoRequest, context: grpc.aio.ServicerContext
    ) -> matchmaker_pb2.EchoResponse:
        """Return the payload (benchmarks' reference, liveness probe)."""
        return matchmaker_pb2.EchoResponse(payload=request.payload)


def _token_missing() -> Refusal:
    return Refusal(
        Code.UNAUTHENTICATED,
        Reason.TOKEN_MISSING,
        "this call needs a player token: authorization: Bearer <token>",
    )


def _page_offset(token: str, most: int) -> int:
    """The offset a page token names (tokens name offsets within the browse lists)."""
    if not token:
        return 0
    if len(token) > 32:
        raise malformed("page_token", "the page token is malformed")
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise malformed("page_token", "the page token is malformed") from None
    if not text.isdigit() or not 0 <= int(text) <= most:
        raise malformed("page_token", "the page token is malformed")
    return int(text)


async def _after_stream(what: str, work: Awaitable[object]) -> None:
    """A stream's cleanup, run to its end even while the call is cancelled; a failure is
    logged, not raised (what it would have removed expires by itself)."""
    try:
        await asyncio.shield(work)
    except Exception as error:
        log.warning(f"{what} failed; left to expire", error=str(error) or type(error).__name__)


async def _wait_any(events: tuple[asyncio.Event, ...], timeout: float) -> None:
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _rematch_offered(entry: StreamEntry) -> bool:
    return entry.notice.get("n") == "REMATCH_OFFERED"
