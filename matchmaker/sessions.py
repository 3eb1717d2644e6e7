"""Game sessions: create, join, play, end, time out, rate, record.

Every change follows one path (`Sessions._play`): read the game, ask the engine to apply
the actions to the stored state, and commit the engine's result only if the game is still
at the version that was read (`commit.lua`). Endings are actions of the shared contract
(Resign with reason RESIGNATION, TIME or ABANDONED; OfferDraw; AcceptDraw; DeclineDraw),
so a record replays to the same outcome. The sweeper (`sweeper.py`) calls `work_on` for
games that are due: clocks that ran out, players who left, bot turns, pending ratings,
open games nobody joined.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import grpc
import structlog
from prometheus_client import Counter

from matchmaker import clocks, keys
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.errors import ServiceError, game_not_found, malformed, missing, version_conflict
from matchmaker.players import Players
from matchmaker.ratings import Rating, score_of
from matchmaker.settings import Settings
from matchmaker.store import (
    BOT,
    FINISHED,
    HUMAN,
    OPEN,
    RUNNING,
    ActionEntry,
    Commit,
    GameRecord,
    Seat,
    Store,
    Update,
    moves_json,
    seats_json,
)
from matchmaker.tokens import AuthCall, Identity, Tokens, random_id
from matchmaker.views import (
    game_view,
    hidden_pending,
    public_events,
    public_notation,
    timestamp,
)
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2

log = structlog.get_logger(component="matchmaker")

COMMITS = Counter("wargame_matchmaker_commits_total", "Committed game changes by kind", ["kind"])
CONFLICTS = Counter(
    "wargame_matchmaker_version_conflicts_total", "Commits refused for a stale version"
)
ENDINGS = Counter(
    "wargame_matchmaker_games_finished_total", "Finished games by outcome reason", ["reason"]
)

META_KINDS = frozenset({"resign", "offer_draw", "accept_draw", "decline_draw"})
RATING_RETRY_MS = 10_000  # a finished game whose ratings are not settled is looked at again
INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def fingerprint(expected_version: int, actions: Sequence[game_pb2.Action]) -> str:
    """What identifies a submission's content (a retried key must carry the same)."""
    digest = hashlib.sha256(str(expected_version).encode())
    for action in actions:
        digest.update(action.SerializeToString(deterministic=True))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def invite_code() -> str:
    """A fresh invite code (8 unambiguous characters)."""
    rng = random.SystemRandom()
    return "".join(rng.choice(INVITE_ALPHABET) for _ in range(8))


def bot_seed(game_id: str, side: str) -> int:
    """A stable search seed per game and side, so the engine can derive a bot's secret
    deployment again when it must reveal it (the engine keeps nothing between calls)."""
    return int.from_bytes(hashlib.sha256(f"{game_id}/{side}".encode()).digest()[:8], "big") or 1


@dataclass(frozen=True)
class TimeControl:
    """Base and increment in ms (base 0: untimed)."""

    base_ms: int = 0
    increment_ms: int = 0

    @classmethod
    def of(
        cls, message: matchmaker_pb2.TimeControl | None, field: str = "time_control"
    ) -> TimeControl:
        """Checked from the contract's message (None or unset: untimed)."""
        if message is None or not (message.HasField("base") or message.HasField("increment")):
            return cls()
        base = message.base.ToMilliseconds()
        increment = message.increment.ToMilliseconds()
        if base <= 0 or base > 7 * 24 * 3600 * 1000:
            raise malformed(f"{field}.base", "the base time must be positive and at most 7 days")
        if increment < 0 or increment > 3600 * 1000:
            raise malformed(f"{field}.increment", "the increment must be 0 to 1 hour")
        return cls(base, increment)

    def text(self) -> str:
        """Canonical text (queue keys, configs)."""
        return f"{self.base_ms}+{self.increment_ms}"


@dataclass(frozen=True)
class GameSpec:
    """What a new game is made of."""

    ruleset: str
    options: Mapping[str, str]
    preset: str = ""
    setup: str = ""
    time_control: TimeControl = TimeControl()
    rated: bool = False
    visibility: str = "public"
    bot_ms: int = 0


@dataclass(frozen=True)
class Played:
    """A committed change: the game after it, and what happened."""

    game: GameRecord
    now_ms: int
    events: Sequence[game_pb2.Event]
    notations: Sequence[str]
    replayed: bool = False


def _kept_changing() -> ServiceError:
    return ServiceError(
        grpc.StatusCode.ABORTED, "VERSION_CONFLICT", "the game kept changing; try again"
    )


def action_kind(action: game_pb2.Action) -> str:
    """The oneof case of an action ("" when empty)."""
    return action.WhichOneof("kind") or ""


class Sessions:
    """Game sessions on Redis, judged by the engine."""

    def __init__(
        self,
        store: Store,
        engine: Engine,
        players: Players,
        settings: Settings,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.engine = engine
        self.players = players
        self.settings = settings
        self.wake = wake  # tells this replica's sweeper that a game is due now (bot turn)

    # -- scheduling ----------------------------------------------------------------------

    def next_due(self, game: GameRecord, now_ms: int) -> int | None:
        """When the sweeper must next look at a game (None: never again)."""
        if game.status == OPEN:
            return game.created_ms + int(self.settings.open_game_ttl * 1000)
        if game.status == FINISHED:
            return now_ms + RATING_RETRY_MS if game.rating_status == "pending" else None
        to_act = game.to_act()
        times: list[int] = []
        if any(seat.kind == BOT and seat.side in to_act for seat in game.seats):
            times.append(now_ms)
        if game.clock is not None:
            flag_at = clocks.deadline(game.clock)
            if flag_at is not None:
                times.append(flag_at)
        if any(seat.kind == HUMAN and seat.side in to_act for seat in game.seats):
            times.append(game.acted_ms + int(self.settings.abandon_after * 1000))
        return min(times) if times else None

    def _ttl(self, status: str) -> float:
        if status == FINISHED:
            return self.settings.finished_game_ttl
        if status == OPEN:
            return self.settings.open_game_ttl + self.settings.finished_game_ttl
        return self.settings.running_game_ttl

    # -- creating and joining -------------------------------------------------------------

    async def create(
        self,
        spec: GameSpec,
        seats: list[Seat],
        *,
        game_id: str = "",
        with_invite: bool = False,
    ) -> tuple[GameRecord, int]:
        """Create a game with its seats (open seats have no player); running at once when
        every seat is filled. `game_id` makes creation idempotent (queue matches)."""
        try:
            state = await self.engine.new_game(spec.ruleset, spec.options, spec.preset, spec.setup)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=False) from None
        game_id = game_id or random_id("g", 14)
        now = await self.store.time_ms()
        code = ""
        if with_invite:
            for _ in range(5):
                code = invite_code()
                if await self.store.set_invite(code, game_id):
                    break
            else:
                raise RuntimeError("no free invite code after 5 tries")
        full = all(seat.player for seat in seats)
        status = RUNNING if full else OPEN
        clock = None
        if spec.time_control.base_ms:
            clock = clocks.start(
                spec.time_control.base_ms,
                spec.time_control.increment_ms,
                [seat.side for seat in seats],
                now,
                state.to_act if full else (),
            )
        game = GameRecord(
            id=game_id,
            ruleset=spec.ruleset,
            status=status,
            version=1,
            visibility=spec.visibility,
            rated=spec.rated,
            created_ms=now,
            updated_ms=now,
            acted_ms=now,
            seats=seats,
            state_bytes=state.SerializeToString(),
            initial_bytes=state.SerializeToString(),
            clock=clock,
            invite=code,
            bot_ms=spec.bot_ms,
            rating_status="",
        )
        fields = {
            "game": spec.ruleset,
            "status": status,
            "visibility": spec.visibility,
            "rated": "1" if spec.rated else "0",
            "created_ms": now,
            "updated_ms": now,
            "acted_ms": now,
            "seats": seats_json(seats),
            "state": game.state_bytes,
            "initial": game.initial_bytes,
            "invite": code,
            "bot_ms": spec.bot_ms,
            "options": json.dumps(dict(spec.options), sort_keys=True),
            "preset": spec.preset,
        }
        if clock is not None:
            fields["clock"] = clock.to_json()
        update = matchmaker_pb2.WatchGameResponse(version=1, at=timestamp(now))
        result = await self.store.commit(
            Commit(
                game_id=game_id,
                expected_version=0,
                fields=fields,
                update=Update(update.SerializeToString()),
                ttl=self._ttl(status),
                due_ms=self.next_due(game, now),
            )
        )
        if result.outcome != "ok":
            existing, now, _ = await self.store.load(game_id)
            if existing is None:
                raise RuntimeError(f"game {game_id} neither created nor found")
            return existing, now
        COMMITS.labels("create").inc()
        if spec.visibility == "public":
            await self.store.list_add(status, spec.ruleset, game_id, now)
        if self.next_due(game, now) == now:
            self.wake()
        return game, now

    async def join(
        self, player_id: str, name: str, *, game_id: str = "", code: str = "", side: str = ""
    ) -> tuple[GameRecord, int]:
        """Take an open seat, by game id or invite code; already seated: the game as is."""
        if code:
            target = await self.store.invite_target(code)
            if target is None:
                raise ServiceError(
                    grpc.StatusCode.NOT_FOUND,
                    "SESSION_NOT_FOUND",
                    "no game has this invite code (unknown or expired)",
                    field="invite_code",
                )
            game_id = target
        if not game_id:
            raise missing("game_id")
        for _ in range(self.settings.submit_retries):
            game, now, _ = await self.store.load(game_id)
            if game is None:
                raise game_not_found(game_id)
            if game.seat_of(player_id) is not None:
                return game, now
            if game.status != OPEN:
                raise ServiceError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "GAME_NOT_OPEN",
                    f"game {game_id} is {game.status}; it takes no more players",
                )
            if game.visibility == "private" and not code:
                raise ServiceError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "GAME_NOT_OPEN",
                    f"game {game_id} is private: join it with its invite code",
                )
            free = [seat for seat in game.seats if not seat.player]
            if side:
                seat = game.seat_for(side)
                if seat is None:
                    raise malformed(
                        "side",
                        f"game {game.ruleset} has no side {side!r}; sides: "
                        + ", ".join(s.side for s in game.seats),
                    )
                if seat.player:
                    raise ServiceError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        "SEAT_TAKEN",
                        f"the {side} seat is taken",
                        field="side",
                    )
            elif free:
                seat = free[0]
            else:
                raise ServiceError(
                    grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN", "no seat is free"
                )
            ratings = {
                other.player: await self.players.rating_text(other.player, game.ruleset)
                for other in game.seats
                if other.player and other.kind == HUMAN
            }
            seats = [
                replace(other, rating=ratings.get(other.player, other.rating))
                if other.player
                else other
                for other in game.seats
            ]
            mine = await self.players.rating_text(player_id, game.ruleset)
            seats = [
                replace(other, player=player_id, name=name, rating=mine)
                if other.side == seat.side
                else other
                for other in seats
            ]
            full = all(other.player for other in seats)
            after = replace(
                game,
                seats=seats,
                status=RUNNING if full else OPEN,
                acted_ms=now,
                version=game.version + 1,
                updated_ms=now,
            )
            fields: dict[str, str | int | bytes] = {
                "seats": seats_json(seats),
                "status": after.status,
                "updated_ms": now,
                "acted_ms": now,
            }
            if full and game.clock is not None:
                after.clock = clocks.start(
                    game.clock.base_ms,
                    game.clock.increment_ms,
                    [s.side for s in seats],
                    now,
                    game.state.to_act,
                )
                fields["clock"] = after.clock.to_json()
            update = matchmaker_pb2.WatchGameResponse(
                version=after.version, side=seat.side, at=timestamp(now)
            )
            result = await self.store.commit(
                Commit(
                    game_id=game_id,
                    expected_version=game.version,
                    fields=fields,
                    update=Update(update.SerializeToString(), side=seat.side),
                    ttl=self._ttl(after.status),
                    due_ms=self.next_due(after, now),
                )
            )
            if result.outcome == "conflict":
                CONFLICTS.inc()
                continue
            COMMITS.labels("join").inc()
            if full and game.visibility == "public":
                await self.store.list_remove(OPEN, game.ruleset, game_id)
                await self.store.list_add(RUNNING, game.ruleset, game_id, game.created_ms)
            return after, now
        raise _kept_changing()

    # -- playing ---------------------------------------------------------------------------

    async def submit(
        self,
        auth: AuthCall,
        game_id: str,
        expected_version: int,
        idempotency_key: str,
        actions: Sequence[game_pb2.Action],
    ) -> tuple[Identity, Played]:
        """Apply a player's actions to the stored game if it is still at `expected_version`.

        The token check (`auth`) travels in the same round trip as the read of the game.
        """
        problem: ServiceError | None = None
        if not game_id:
            problem = missing("game_id")
        elif not actions:
            problem = missing("actions")
        elif len(actions) > self.settings.max_actions_per_submit:
            problem = ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "TOO_MANY_ACTIONS",
                f"{len(actions)} actions; at most {self.settings.max_actions_per_submit}",
                field="actions",
            )
        elif len(idempotency_key) > 200:
            problem = malformed(
                "idempotency_key", "the idempotency key is longer than 200 characters"
            )
        if problem is not None:
            Tokens.identity(
                auth, await self.store.scripts.run("authenticate", auth.keys, auth.args)
            )
            raise problem
        player_id = auth.player_id
        # Without a client key, the request's own key still makes our retries safe.
        key = keys.game_idempotency(game_id, player_id, idempotency_key or random_id("r", 20))
        print_ = fingerprint(expected_version, actions)
        game, now, prior, reply = await self.store.load_with_auth(
            game_id, idempotency_key=key, auth=(auth.keys, auth.args)
        )
        identity = Tokens.identity(auth, reply)
        if prior is not None:
            return identity, await self._replay(game_id, player_id, prior.decode(), print_)
        if game is None:
            raise game_not_found(game_id)
        seat = game.seat_of(player_id)
        if seat is None:
            raise ServiceError(
                grpc.StatusCode.PERMISSION_DENIED,
                "NOT_A_PLAYER",
                f"you hold no seat in game {game_id}",
            )
        self._require_running(game)
        if expected_version != game.version:
            CONFLICTS.inc()
            raise version_conflict(expected_version, game.version)
        checked = []
        to_act = game.to_act()
        for index, given in enumerate(actions):
            action = game_pb2.Action()
            action.CopyFrom(given)
            if not action.side:
                action.side = seat.side
            kind = action_kind(action)
            if not kind:
                raise missing(f"actions[{index}].kind")
            if action.side != seat.side:
                raise ServiceError(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "NOT_A_PLAYER",
                    f"you play {seat.side}, not {action.side}",
                    field=f"actions[{index}].side",
                )
            if kind == "resign":
                if action.resign.reason not in (
                    game_pb2.OUTCOME_REASON_UNSPECIFIED,
                    game_pb2.OUTCOME_REASON_RESIGNATION,
                ):
                    raise malformed(
                        f"actions[{index}].resign.reason",
                        "players resign with RESIGNATION; TIME and ABANDONED are the matchmaker's",
                    )
                action.resign.reason = game_pb2.OUTCOME_REASON_RESIGNATION
            elif kind not in META_KINDS and action.side not in to_act:
                raise ServiceError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "NOT_YOUR_TURN",
                    f"it is not {action.side}'s turn: {' and '.join(to_act) or 'nobody'} to act",
                    field=f"actions[{index}]",
                )
            checked.append(action)
        await self._check_flag(game, now)
        return identity, await self._play(game, now, checked, idempotency_key=key, print_=print_)

    async def act(
        self, player_id: str, game_id: str, make: Callable[[str], game_pb2.Action]
    ) -> Played:
        """Commit one server-built action for a seated player (resign, draws), retrying on
        a version conflict: these do not depend on the position."""
        if not game_id:
            raise missing("game_id")
        for _ in range(self.settings.submit_retries):
            game, now, _ = await self.store.load(game_id)
            if game is None:
                raise game_not_found(game_id)
            seat = game.seat_of(player_id)
            if seat is None:
                raise ServiceError(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "NOT_A_PLAYER",
                    f"you hold no seat in game {game_id}",
                )
            self._require_running(game)
            await self._check_flag(game, now)
            try:
                return await self._play(game, now, [make(seat.side)])
            except ServiceError as error:
                if error.reason != "VERSION_CONFLICT":
                    raise
        raise _kept_changing()

    def _require_running(self, game: GameRecord) -> None:
        if game.status == OPEN:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "GAME_NOT_STARTED",
                f"game {game.id} is waiting for players",
            )
        if game.status == FINISHED:
            outcome = game.state.outcome.message if game.state_bytes else game.closed
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "GAME_OVER",
                f"game {game.id} is over: {outcome or 'finished'}",
            )

    async def _check_flag(self, game: GameRecord, now: int) -> None:
        """A side whose time ran out loses now, whoever calls first (the sweeper or not)."""
        if game.clock is None:
            return
        side = clocks.flagged(game.clock, now)
        if side is None:
            return
        try:
            await self._forfeit(game, now, side, game_pb2.OUTCOME_REASON_TIME)
        except ServiceError as error:
            if error.reason != "VERSION_CONFLICT":
                raise
        raise ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION,
            "GAME_OVER",
            f"game {game.id} is over: {side} ran out of time",
        )

    async def _forfeit(self, game: GameRecord, now: int, side: str, reason: int) -> Played:
        action = game_pb2.Action(side=side, resign=game_pb2.Resign(reason=reason))  # type: ignore[arg-type]
        return await self._play(game, now, [action])

    async def _play(
        self,
        game: GameRecord,
        now: int,
        actions: list[game_pb2.Action],
        *,
        idempotency_key: str = "",
        print_: str = "",
    ) -> Played:
        """Ask the engine, then commit its result if the game is still at its version."""
        try:
            reply: engine_pb2.ApplyActionsResponse = await self.engine.apply(game.state, actions)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        state = reply.state
        entries = []
        for index, applied in enumerate(reply.applied):
            notation = applied.notation
            entries.append(
                ActionEntry(
                    side=applied.action.side or actions[index].side,
                    notation=notation,
                    public=public_notation(
                        applied.action, notation, applied.public_notation or notation
                    ),
                    action=applied.action.SerializeToString(),
                )
            )
        events: list[game_pb2.Event] = list(reply.events)
        if hidden_pending(state):
            events = public_events(events, {entry.side for entry in entries if entry.hidden})
        finished = state.HasField("outcome")
        status = FINISHED if finished else RUNNING
        clock = game.clock
        if clock is not None:
            clock = (
                clocks.stop(clock, now) if finished else clocks.advance(clock, now, state.to_act)
            )
        after = replace(
            game,
            status=status,
            version=game.version + 1,
            updated_ms=now,
            acted_ms=now,
            clock=clock,
            state_bytes=state.SerializeToString(),
            moves_raw=moves_json(game.moves_raw, entries),
            rating_status="pending" if finished and game.rated else game.rating_status,
            _state=state,
        )
        fields: dict[str, str | int | bytes] = {
            "state": after.state_bytes,
            "status": status,
            "updated_ms": now,
            "acted_ms": now,
            "moves": after.moves_raw,
        }
        if clock is not None:
            fields["clock"] = clock.to_json()
        if finished:
            fields["ended_ms"] = now
            if game.rated:
                fields["rating"] = "pending"
        side = entries[0].side if entries else actions[0].side
        message = matchmaker_pb2.WatchGameResponse(
            version=after.version,
            side=side,
            notations=[entry.public for entry in entries],
            events=events,
            at=timestamp(now),
        )
        hidden = any(entry.hidden for entry in entries)
        update = Update(
            message.SerializeToString(),
            tuple(entry.notation for entry in entries) if hidden else (),
            side,
        )
        result = await self.store.commit(
            Commit(
                game_id=game.id,
                expected_version=game.version,
                fields=fields,
                actions=entries,
                update=update,
                ttl=self._ttl(status),
                trim_stream_to=self.settings.finished_stream_keep if finished else 0,
                idempotency_key=idempotency_key,
                fingerprint=print_,
                due_ms=self.next_due(after, now),
            )
        )
        if result.outcome == "conflict":
            CONFLICTS.inc()
            raise version_conflict(game.version, result.version)
        if result.outcome == "duplicate":
            return await self._replay(game.id, "", f"{result.fingerprint}|{result.version}", print_)
        COMMITS.labels("actions").inc()
        await self._after_commit(after, now)
        return Played(after, now, list(reply.events), [entry.notation for entry in entries])

    async def _after_commit(self, after: GameRecord, now: int) -> None:
        if after.status == FINISHED:
            reason = game_pb2.OutcomeReason.Name(after.state.outcome.reason).removeprefix(
                "OUTCOME_REASON_"
            )
            ENDINGS.labels(reason).inc()
            log.info("game finished", game_id=after.id, outcome=after.state.outcome.message)
            if after.visibility == "public":
                await self.store.list_remove(RUNNING, after.ruleset, after.id)
            if after.rated:
                try:
                    await self.settle_ratings(after)
                except Exception:  # the sweeper settles it later (exactly once)
                    log.warning("ratings not settled yet", game_id=after.id, exc_info=True)
                    return
            await self.store.unschedule(after.id)
        elif self.next_due(after, now) == now:
            self.wake()

    async def _replay(self, game_id: str, player_id: str, record: str, print_: str) -> Played:
        """The first result of a submission whose idempotency key was seen before."""
        stored_print, _, version_text = record.rpartition("|")
        if stored_print != print_:
            raise ServiceError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "IDEMPOTENCY_KEY_REUSED",
                "this idempotency key was used for a different submission",
                field="idempotency_key",
            )
        version = int(version_text)
        game, now, _ = await self.store.load(game_id)
        if game is None:
            raise game_not_found(game_id)
        entry = await self.store.update_at(game_id, version)
        events: list[game_pb2.Event] = []
        notations: list[str] = []
        if entry is not None:
            message = matchmaker_pb2.WatchGameResponse.FromString(entry.message)
            events = list(message.events)
            notations = list(entry.full_notations or message.notations)
        return Played(game, now, events, notations, replayed=True)

    # -- ratings ---------------------------------------------------------------------------

    async def settle_ratings(self, game: GameRecord) -> None:
        """Count a finished rated game in both players' ratings (each exactly once)."""
        winner = game.state.outcome.winner
        humans = [seat for seat in game.seats if seat.kind == HUMAN and seat.player]
        if len(humans) == 2:
            for seat in humans:
                other = game.opponent(seat.side)
                assert other is not None
                await self.players.apply_result(
                    game.id,
                    game.ruleset,
                    seat.player,
                    Rating.parse(other.rating),
                    score_of(winner, seat.side),
                )
        await self.store.set_fields(game.id, {"rating": "done"})

    # -- the sweeper's work ----------------------------------------------------------------

    async def work_on(self, game_id: str) -> int | None:
        """Do what is due for a game; returns when it is next due (None: never)."""
        game, now, _ = await self.store.load(game_id)
        if game is None:
            return None
        if game.status == OPEN:
            if now >= game.created_ms + int(self.settings.open_game_ttl * 1000):
                await self._close_open(game, now)
                return None
            return self.next_due(game, now)
        if game.status == FINISHED:
            if game.rating_status == "pending":
                await self.settle_ratings(game)
            return None
        played: Played | None = None
        try:
            played = await self._timeouts(game, now)
            if played is None:
                bot = next(
                    (
                        seat
                        for seat in game.seats
                        if seat.kind == BOT and seat.side in game.to_act()
                    ),
                    None,
                )
                if bot is not None:
                    played = await self._bot_move(game, bot)
        except ServiceError as error:
            if error.reason == "VERSION_CONFLICT":
                return now  # someone moved meanwhile: look again at once
            raise
        if played is None:
            return self.next_due(game, now)
        if played.game.status == FINISHED:
            return (
                None
                if played.game.rating_status != "pending"
                else self.next_due(played.game, played.now_ms)
            )
        return self.next_due(played.game, played.now_ms)

    async def _timeouts(self, game: GameRecord, now: int) -> Played | None:
        if game.clock is not None:
            side = clocks.flagged(game.clock, now)
            if side is not None:
                log.info("lost on time", game_id=game.id, side=side)
                return await self._forfeit(game, now, side, game_pb2.OUTCOME_REASON_TIME)
        abandoned_at = game.acted_ms + int(self.settings.abandon_after * 1000)
        if now >= abandoned_at:
            to_act = game.to_act()
            seat = next((s for s in game.seats if s.kind == HUMAN and s.side in to_act), None)
            if seat is not None:
                log.info("abandoned", game_id=game.id, side=seat.side)
                return await self._forfeit(game, now, seat.side, game_pb2.OUTCOME_REASON_ABANDONED)
        return None

    async def _bot_move(self, game: GameRecord, seat: Seat) -> Played:
        seconds = (game.bot_ms or int(self.settings.bot_time * 1000)) / 1000
        started = time.perf_counter()
        try:
            reply = await self.engine.suggest(
                game.state, seat.side, seconds, bot_seed(game.id, seat.side)
            )
            action = game_pb2.Action()
            action.CopyFrom(reply.action)
            if not action.side:
                action.side = seat.side
        except EngineError as refusal:
            # A bot that cannot find an action would hold the game forever: it resigns.
            log.warning(
                "bot resigns: no suggestion",
                game_id=game.id,
                reason=refusal.details.reason,
                message=refusal.details.message,
            )
            action = game_pb2.Action(
                side=seat.side, resign=game_pb2.Resign(reason=game_pb2.OUTCOME_REASON_RESIGNATION)
            )
        now = await self.store.time_ms()
        try:
            played = await self._play(game, now, [action])
        except ServiceError as error:
            if error.code not in (
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.INVALID_ARGUMENT,
            ):
                raise
            if (
                error.reason in ("VERSION_CONFLICT", "GAME_OVER")
                or action.WhichOneof("kind") == "resign"
            ):
                raise
            # The engine refused its own suggestion: resigning beats holding the game forever.
            log.warning(
                "bot resigns: its action was refused",
                game_id=game.id,
                reason=error.reason,
                message=error.message,
            )
            resign = game_pb2.Action(
                side=seat.side, resign=game_pb2.Resign(reason=game_pb2.OUTCOME_REASON_RESIGNATION)
            )
            played = await self._play(game, now, [resign])
        log.debug(
            "bot moved",
            game_id=game.id,
            side=seat.side,
            notation=list(played.notations),
            think_ms=round((time.perf_counter() - started) * 1000),
        )
        return played

    async def withdraw(self, player_id: str, game_id: str) -> tuple[GameRecord, int] | None:
        """Close an open game its seated player gives up waiting for (None if the game is
        not open: then it is resigned as usual)."""
        if not game_id:
            raise missing("game_id")
        game, now, _ = await self.store.load(game_id)
        if game is None:
            raise game_not_found(game_id)
        seat = game.seat_of(player_id)
        if game.status != OPEN or seat is None:
            return None
        if not await self._close_open(
            game, now, f"{seat.side} withdrew the game before anyone joined"
        ):
            return None  # someone joined meanwhile: a real game now
        closed, now, _ = await self.store.load(game_id)
        assert closed is not None
        await self.store.unschedule(game_id)
        return closed, now

    async def _close_open(self, game: GameRecord, now: int, message: str = "") -> bool:
        """Close an open game (no game was played: no winner); False if it changed meanwhile."""
        message = message or f"nobody joined within {self.settings.open_game_ttl:g} s"
        update = matchmaker_pb2.WatchGameResponse(version=game.version + 1, at=timestamp(now))
        result = await self.store.commit(
            Commit(
                game_id=game.id,
                expected_version=game.version,
                fields={"status": FINISHED, "closed": message, "updated_ms": now, "ended_ms": now},
                update=Update(update.SerializeToString()),
                ttl=self.settings.finished_game_ttl,
                trim_stream_to=self.settings.finished_stream_keep,
            )
        )
        if result.outcome != "ok":
            return False
        COMMITS.labels("close").inc()
        if game.visibility == "public":
            await self.store.list_remove(OPEN, game.ruleset, game.id)
        return True

    # -- views and records -----------------------------------------------------------------

    async def view(self, game_id: str, viewer: str) -> matchmaker_pb2.GameView:
        """A game as `viewer` may see it."""
        if not game_id:
            raise missing("game_id")
        game, now, _ = await self.store.load(game_id)
        if game is None:
            raise game_not_found(game_id)
        return game_view(game, viewer, now)

    async def record(self, game_id: str) -> str:
        """The engine's record of a running or finished game (hidden actions left out
        until the rules reveal them)."""
        if not game_id:
            raise missing("game_id")
        game, _, _ = await self.store.load(game_id, initial=True)
        if game is None:
            raise game_not_found(game_id)
        if game.status == OPEN or (game.status == FINISHED and game.closed):
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                "GAME_NOT_STARTED",
                f"game {game_id} was never played",
            )
        entries = game.moves
        if hidden_pending(game.state):
            cut = next((i for i, entry in enumerate(entries) if entry.hidden), len(entries))
            entries = entries[:cut]
        # Commits after the read only add at the end: the game's own moves are a prefix.
        actions = (await self.store.actions(game_id))[: len(entries)]
        tags = {seat.side.capitalize(): seat.name for seat in game.seats if seat.name}
        tags["Date"] = time.strftime("%Y.%m.%d", time.gmtime(game.created_ms / 1000))
        tags["Session"] = game.id
        try:
            reply = await self.engine.write_record(game.initial, actions, tags)
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        return reply.record
