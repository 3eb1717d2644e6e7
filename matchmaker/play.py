"""The play path: players' submissions and server-made actions, judged by the engine.

Every game action follows one path (`Play.commit`): ask the engine to apply the actions to
the stored state, and commit its result only if the game is still at the version that was
read (`commit.lua`). Endings are actions of the shared contract (Resign with reason
RESIGNATION, TIME or ABANDONED; OfferDraw; AcceptDraw; DeclineDraw), so a record replays
to the same outcome. A rated game's ratings are settled as it ends (`settle_ratings`; the
sweeper settles them later if that fails).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import structlog
from prometheus_client import Counter

from matchmaker import clocks, keys
from matchmaker.engine import Engine, EngineError, refusal_status
from matchmaker.errors import (
    game_not_found,
    kept_changing,
    not_seated,
    out_of_time_in_play,
    version_conflict,
)
from matchmaker.players import Players
from matchmaker.ratings import Rating, Result, score_of, team_update, update
from matchmaker.record import (
    ActionEntry,
    GameRecord,
    GameStatus,
    RatingStatus,
    SeatKind,
    Visibility,
)
from matchmaker.schedule import next_due
from matchmaker.settings import Settings
from matchmaker.states import alliance, compact, hidden_pending
from matchmaker.store import COMMITS, CONFLICTS, CommitOutcome, Store
from matchmaker.tokens import AuthCall, Identity, Tokens, random_id
from matchmaker.views import public_events, public_notation
from wargame.runtime.refusal import Code, Reason, Refusal, malformed, missing
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2

log = structlog.get_logger(component="matchmaker")

ENDINGS = Counter(
    "wargame_matchmaker_games_finished_total", "Finished games by outcome reason", ["reason"]
)

META_KINDS = frozenset({"resign", "offer_draw", "accept_draw", "decline_draw"})


def fingerprint(expected_version: int, actions: Sequence[game_pb2.Action]) -> str:
    """What identifies a submission's content (a retried key must carry the same)."""
    digest = hashlib.sha256(str(expected_version).encode())
    for action in actions:
        digest.update(action.SerializeToString(deterministic=True))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def action_kind(action: game_pb2.Action) -> str:
    """The oneof case of an action ("" when empty)."""
    return action.WhichOneof("kind") or ""


def resignation(
    side: str, reason: game_pb2.OutcomeReason.ValueType = game_pb2.OUTCOME_REASON_RESIGNATION
) -> game_pb2.Action:
    """`side` resigns (with RESIGNATION, or one of the matchmaker's reasons: TIME, ABANDONED)."""
    return game_pb2.Action(side=side, resign=game_pb2.Resign(reason=reason))


@dataclass(frozen=True)
class Played:
    """A committed change: the game after it, and what happened."""

    game: GameRecord
    now_ms: int
    events: Sequence[game_pb2.Event]
    notations: Sequence[str]
    replayed: bool = False
    # The new state with its view for drawing, when the commit asked the engine for it (the
    # record keeps the compact form).
    drawn: game_pb2.GameState | None = None


def require_running(game: GameRecord) -> None:
    """GAME_NOT_STARTED while the game waits for players, GAME_OVER once it has ended."""
    if game.status == GameStatus.OPEN:
        raise Refusal(
            Code.FAILED_PRECONDITION,
            Reason.GAME_NOT_STARTED,
            f"game {game.id} is waiting for players",
        )
    if game.status == GameStatus.FINISHED:
        ended = game.outcome()
        outcome = ended.message if ended is not None else game.closed
        raise Refusal(
            Code.FAILED_PRECONDITION,
            Reason.GAME_OVER,
            f"game {game.id} is over: {outcome or 'finished'}",
        )


@dataclass
class Play:
    """Actions on running games: submitted, server-made, forfeited; and their commit."""

    store: Store
    engine: Engine
    players: Players
    settings: Settings

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
        problem: Refusal | None = None
        if not game_id:
            problem = missing("game_id")
        elif not keys.plausible_id(game_id):
            problem = game_not_found(game_id)
        elif not actions:
            problem = missing("actions")
        elif len(actions) > self.settings.max_actions_per_submit:
            problem = Refusal(
                Code.INVALID_ARGUMENT,
                Reason.TOO_MANY_ACTIONS,
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
        if prior is not None:  # a retry: answered as the first, once a replica holds it
            await self.store.confirm_replay(game_id, key)
            return identity, await self._replay(game_id, prior.decode(), print_)
        if game is None:
            raise game_not_found(game_id)
        seat = game.seat_of(player_id)
        if seat is None:
            raise not_seated(game_id)
        require_running(game)
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
                raise Refusal(
                    Code.PERMISSION_DENIED,
                    Reason.NOT_A_PLAYER,
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
                raise Refusal(
                    Code.FAILED_PRECONDITION,
                    Reason.NOT_YOUR_TURN,
                    f"it is not {action.side}'s turn: {' and '.join(to_act) or 'nobody'} to act",
                    field=f"actions[{index}]",
                )
            checked.append(action)
        await self._check_flag(game, now)
        return identity, await self.commit(
            game, now, checked, idempotency_key=key, print_=print_, view=True
        )

    async def act(
        self, player_id: str, game_id: str, make: Callable[[str], game_pb2.Action]
    ) -> Played:
        """Commit one server-built action for a seated player (resign, draws), retrying on
        a version conflict: these do not depend on the position."""
        for _ in range(self.settings.submit_retries):
            game, now = await self.store.get(game_id)
            seat = game.seat_of(player_id)
            if seat is None:
                raise not_seated(game_id)
            require_running(game)
            try:
                await self._check_flag(game, now)
                return await self.commit(game, now, [make(seat.side)])
            except Refusal as error:
                if error.reason != Reason.VERSION_CONFLICT:
                    raise
        raise kept_changing()

    async def _check_flag(self, game: GameRecord, now: int) -> None:
        """A side whose time ran out loses now, whoever calls first (the sweeper or not).

        Refuses the caller's request either way: GAME_OVER once the game ended, or (in a
        game of more than two that goes on) VERSION_CONFLICT, as the state changed."""
        if game.clock is None:
            return
        fallen = clocks.fallen(game.clock, now)
        if not fallen:
            return
        try:
            played = await self.flag(game, now, fallen)
        except Refusal as error:
            # Someone flagged first. A game of two is over; one of more may go on, so the
            # caller looks again.
            if error.reason != Reason.VERSION_CONFLICT or len(game.seats) > 2:
                raise
            message = f"{' and '.join(fallen)} ran out of time"
        else:
            if played.game.status != GameStatus.FINISHED:
                raise out_of_time_in_play(fallen, played.game.version)
            text = played.game.outcome()
            message = text.message if text is not None else "time ran out"
        raise Refusal(
            Code.FAILED_PRECONDITION, Reason.GAME_OVER, f"game {game.id} is over: {message}"
        )

    async def flag(self, game: GameRecord, now: int, fallen: Sequence[str]) -> Played:
        """End a game whose clocks ran out (`clocks.fallen`): the one side out of time
        loses; sides out of time together draw. In a game of more than two players each
        player out of time is out of the game, which goes on while the engine says so
        (players out of time together forfeit one after another, until the game ends)."""
        if len(game.seats) > 2:
            for side in fallen:
                played = await self.forfeit(game, now, side, game_pb2.OUTCOME_REASON_TIME)
                game = played.game
                if game.status == GameStatus.FINISHED:
                    break
            return played
        if len(fallen) == 1:
            return await self.forfeit(game, now, fallen[0], game_pb2.OUTCOME_REASON_TIME)
        return await self.end_by_matchmaker(
            game,
            now,
            game_pb2.Outcome(
                reason=game_pb2.OUTCOME_REASON_TIME,
                message=f"{' and '.join(fallen)} ran out of time together: a draw",
            ),
        )

    async def forfeit(
        self, game: GameRecord, now: int, side: str, reason: game_pb2.OutcomeReason.ValueType
    ) -> Played:
        """`side` loses for a reason of the matchmaker's (TIME, ABANDONED)."""
        return await self.commit(game, now, [resignation(side, reason)])

    async def end_by_matchmaker(
        self, game: GameRecord, now: int, outcome: game_pb2.Outcome
    ) -> Played:
        """End a running game with an outcome the engine's actions cannot express (clocks
        out together, an abort: `abort.py`, which rates nothing): the state stays the
        engine's last, the outcome is the record's."""
        clock = clocks.stop(game.clock, now) if game.clock is not None else None
        after = replace(
            game,
            status=GameStatus.FINISHED,
            version=game.version + 1,
            updated_ms=now,
            ended_ms=now,
            clock=clock,
            ending=outcome.SerializeToString(),
            rating_status=(
                RatingStatus.PENDING
                if game.rated and outcome.reason != game_pb2.OUTCOME_REASON_ABORTED
                else game.rating_status
            ),
            warned={},
        )
        event = game_pb2.Event(
            kind=game_pb2.EVENT_KIND_GAME_OVER, text=outcome.message, side=outcome.winner
        )
        result = await self.store.commit_change(
            game, after, now, matchmaker_pb2.WatchGameResponse(events=[event])
        )
        if result.outcome != CommitOutcome.OK:
            CONFLICTS.inc()
            raise version_conflict(game.version, result.version)
        COMMITS.labels("ending").inc()
        await self._ended(after)
        return Played(after, now, [event], [])

    async def commit(
        self,
        game: GameRecord,
        now: int,
        actions: list[game_pb2.Action],
        *,
        idempotency_key: str = "",
        print_: str = "",
        view: bool = False,
    ) -> Played:
        """Ask the engine, then commit its result if the game is still at its version (the
        state in its compact form; with `view` the engine draws it too, for the caller)."""
        try:
            reply: engine_pb2.ApplyActionsResponse = await self.engine.apply(
                game.state, actions, view=view
            )
        except EngineError as refusal:
            raise refusal_status(refusal, stored_session=True) from None
        state = compact(reply.state)
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
        pending = hidden_pending(state)
        if pending:
            events = public_events(events, {entry.side for entry in entries if entry.hidden})
        finished = state.HasField("outcome")
        clock = game.clock
        if clock is not None:
            clock = (
                clocks.stop(clock, now) if finished else clocks.advance(clock, now, state.to_act)
            )
        moves_raw, moves = self.store.moves_after(game, entries, pending)
        readings = game.readings
        if clock is not None and not finished and game.allows_takebacks():
            readings = {**readings, str(len(game.moves) + len(entries)): dict(clock.remaining)}
        after = replace(
            game,
            status=GameStatus.FINISHED if finished else GameStatus.RUNNING,
            version=game.version + 1,
            updated_ms=now,
            acted_ms=now,
            ended_ms=now if finished else game.ended_ms,
            clock=clock,
            state_bytes=state.SerializeToString(),
            moves_raw=moves_raw,
            readings=readings,
            rating_status=(RatingStatus.PENDING if finished and game.rated else game.rating_status),
            warned={},  # a new position: whoever must act now is warned afresh if away
            _state=state,
            _moves=moves,
        )
        hidden = any(entry.hidden for entry in entries)
        result = await self.store.commit_change(
            game,
            after,
            now,
            matchmaker_pb2.WatchGameResponse(
                side=entries[0].side if entries else actions[0].side,
                notations=[entry.public for entry in entries],
                events=events,
            ),
            full_notations=[entry.notation for entry in entries] if hidden else (),
            actions=entries,
            idempotency_key=idempotency_key,
            fingerprint=print_,
        )
        if result.outcome == CommitOutcome.CONFLICT:
            CONFLICTS.inc()
            raise version_conflict(game.version, result.version)
        if result.outcome == CommitOutcome.DUPLICATE:
            return await self._replay(game.id, f"{result.fingerprint}|{result.version}", print_)
        COMMITS.labels("actions").inc()
        if after.status == GameStatus.FINISHED:
            await self._ended(after)
        return Played(
            after,
            now,
            list(reply.events),
            [entry.notation for entry in entries],
            drawn=reply.state if view else None,
        )

    async def _ended(self, game: GameRecord) -> None:
        """A game that has just ended: counted, delisted, uncounted from its players'
        open games, rated, no longer due."""
        outcome = game.outcome() or game_pb2.Outcome()
        reason = game_pb2.OutcomeReason.Name(outcome.reason)
        ENDINGS.labels(reason.removeprefix("OUTCOME_REASON_")).inc()
        log.info("game finished", game_id=game.id, outcome=outcome.message)
        if game.visibility == Visibility.PUBLIC:
            await self.store.list_remove(GameStatus.RUNNING, game.ruleset, game.id)
        await self.players.uncount_games([seat.player for seat in game.seats], game.id)
        if game.rating_status == RatingStatus.PENDING:  # rated, and not aborted
            try:
                await self.settle_ratings(game)
            except Exception:  # the sweeper settles it later (exactly once)
                log.warning("ratings not settled yet", game_id=game.id, exc_info=True)
                return
        await self.store.unschedule(game.id)

    async def _replay(self, game_id: str, record: str, print_: str) -> Played:
        """The first result of a submission whose idempotency key was seen before."""
        stored_print, _, version_text = record.rpartition("|")
        if stored_print != print_:
            raise Refusal(
                Code.INVALID_ARGUMENT,
                Reason.IDEMPOTENCY_KEY_REUSED,
                "this idempotency key was used for a different submission",
                field="idempotency_key",
            )
        version = int(version_text)
        game, now = await self.store.get(game_id)
        # The first attempt may have failed after its commit, before the due index knew.
        await self.store.schedule(game_id, next_due(game, now, self.settings))
        entry = await self.store.update_at(game_id, version)
        events: list[game_pb2.Event] = []
        notations: list[str] = []
        if entry is not None:
            message = matchmaker_pb2.WatchGameResponse.FromString(entry.message)
            events = list(message.events)
            notations = list(entry.full_notations or message.notations)
        return Played(game, now, events, notations, replayed=True)

    async def settle_ratings(self, game: GameRecord) -> None:
        """Count a finished rated game in every player's rating (each exactly once), and
        keep each seat's rating before and after the result for the game's view: Glicko-2
        for two players, openskill's team model for more (`ratings.team_update`), where the
        winning alliance ranks first and every other alliance second (all first in a draw)."""
        outcome = game.outcome()
        winner = outcome.winner if outcome is not None else ""
        humans = [seat for seat in game.seats if seat.kind == SeatKind.HUMAN and seat.player]
        seats = list(game.seats)
        if len(humans) == len(game.seats) >= 2:
            # The alliances are the view's (the stored state is the compact position).
            drawn = await self.engine.drawn(game.state) if len(game.seats) > 2 else game.state
            for seat in humans:
                result = (
                    _pair_result(game, seat.side, winner)
                    if len(game.seats) == 2
                    else _team_result(game, drawn, seat.side)
                )
                change = await self.players.apply_change(
                    game.id, game.rating_pool, seat.player, result
                )
                if change is not None:
                    before, after = change
                elif seat.rating_after:
                    continue  # counted and kept before (a retried settlement)
                else:  # counted by a settlement that stopped before keeping it
                    before = Rating.parse(seat.rating).text()  # a new player's: the default
                    after = await self.players.rating_text(seat.player, game.rating_pool)
                seats = [
                    replace(s, rating_before=before, rating_after=after)
                    if s.side == seat.side
                    else s
                    for s in seats
                ]
        await self.store.set_unversioned(
            game, replace(game, seats=seats, rating_status=RatingStatus.DONE)
        )


def _pair_result(game: GameRecord, side: str, winner: str) -> Callable[[Rating], Rating]:
    """How a game of two players changes one player's rating (Glicko-2): the opponent as
    it was when the game began."""
    other = game.opponent(side)
    opponent = Rating.parse(other.rating if other is not None else "")
    score = score_of(winner, side)
    return lambda before: update(before, [Result(opponent, score)])


def _team_result(
    game: GameRecord, drawn: game_pb2.GameState, side: str
) -> Callable[[Rating], Rating]:
    """How a game of alliances (those of `drawn`, the state with its view) changes one
    player's rating: the others as they were when the game began, the player's own as it
    is now."""
    outcome = game.outcome()
    winners = set(outcome.winners) if outcome is not None else set()
    teams: dict[str, list[str]] = {}
    for seat in game.seats:
        teams.setdefault(alliance(drawn, seat.side), []).append(seat.side)
    ranks = [1 if not winners or winners & set(members) else 2 for members in teams.values()]

    def result(before: Rating) -> Rating:
        ratings = [
            [before if member == side else Rating.parse(seat_rating(game, member)) for member in m]
            for m in teams.values()
        ]
        after = team_update(ratings, ranks)
        return next(
            new
            for members, team in zip(teams.values(), after, strict=True)
            for member, new in zip(members, team, strict=True)
            if member == side
        )

    return result


def seat_rating(game: GameRecord, side: str) -> str:
    """The rating a side's player had as the game began."""
    seat = game.seat_for(side)
    return seat.rating if seat is not None else ""
