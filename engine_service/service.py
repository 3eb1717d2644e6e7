"""The `wargame.v1.RulesEngine` servicer: every RPC, for every game, and nothing kept.

Each call reads the request's state (its position text, checking it), asks the game's
ruleset, and writes the answer back: always the position, the view for drawing only when
the request does not ask STATE_VIEW_POSITION. The servicer holds only read-only things: the
rulesets, the conversions, the limits and the pool for expensive calls.

Expensive calls (SuggestAction, ResolveBattle, and ReplayRecord or WriteRecord of records
longer than one ApplyActions may be) are checked cheaply here, then admitted to the
worker's `Pool` and run in one of its processes (`work`); without a pool (tests in one
process) they run in the calling thread. A call that carries the caller key
(`CALLER_KEY_HEADER`, compared in constant time with the engine's `--caller-key-file`) is
the matchmaker's own: it is admitted to the pool's reserved share, so strangers' searches
never hold up a bot's move.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf import duration_pb2, message_factory
from google.protobuf.message import Message

from engine_service import convert
from engine_service.ai import suggest, summary
from engine_service.ai.levels import LEVELS
from engine_service.ai.napoleonic.strategic import resolve_battle
from engine_service.convert import describe
from engine_service.convert.base import Conversions
from engine_service.convert.tags import tag_key
from engine_service.handling import CUT_SHORT, Limits, beyond_limit, log, request_id, rpc
from engine_service.memo import memo
from engine_service.pool import Job, Pool, Work, within_deadline
from engine_service.rules import games
from engine_service.rules import rulesets as load_rulesets
from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import META_TYPES, Game
from engine_service.rules.options import Options
from engine_service.rules.record import parse_record, replay_steps, write_record
from wargame.runtime.config import CALLER_KEY_HEADER
from wargame.runtime.refusal import Code, Refusal, bounded, malformed, missing
from wargame.runtime.refusal import Reason as ServiceReason
from wargame.v1 import engine_pb2, engine_pb2_grpc, errors_pb2, game_pb2

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"].full_name
DEFAULT_SUGGEST_SECONDS = 1.0
# A search is stopped this long after its budget (it keeps a margin and stops by itself).
SEARCH_OVERRUN = 2.0

DEFAULT_BATTLE_SECONDS = 10.0
DEFAULT_BATTLE_LEVEL = 3
MAX_BATTLE_TURNS = 10_000


def search_limit(seconds: float) -> float:
    """When the pool stops a search of `seconds` of CPU time (`_search`): once it overruns
    by half its budget and the time a search takes to stop."""
    return seconds * 1.5 + SEARCH_OVERRUN


def search_wall_cap(seconds: float) -> float:
    """The wall-clock cap of a search of `seconds` of CPU time: a second before the pool
    would stop it, so that it answers, cut short, instead."""
    return search_limit(seconds) - SEARCH_OVERRUN / 2


class RulesEngine(engine_pb2_grpc.RulesEngineServicer):
    """Stateless rules engine over the registered rulesets."""

    def __init__(
        self,
        rulesets: Mapping[str, AnyRuleset],
        limits: Limits | None = None,
        pool: Pool | None = None,
        caller_key: str = "",
        tag_key: bytes | None = None,
    ) -> None:
        """`tag_key` tags the position texts the engine writes (`convert.tags.tag_key`; None:
        this process's own key)."""
        self.rulesets = dict(rulesets)
        # Only a digest is kept and compared: equal lengths, compared in constant time.
        self._caller_digest = _digest(caller_key) if caller_key else b""
        self.conversions: Conversions = convert.conversions(self.rulesets, tag_key)
        self.limits = limits or Limits()
        self.pool = pool
        self._infos = engine_pb2.ListGamesResponse(
            games=[describe.game_info(ruleset) for ruleset in self.rulesets.values()]
        )

    # -- helpers -------------------------------------------------------------------------

    def _ruleset(self, game_id: str) -> AnyRuleset:
        if not game_id:
            raise missing("game")
        return self.conversions.converter(game_id).ruleset

    def _game(self, state: game_pb2.GameState, field: str = "state") -> Game[Any]:
        _check_present(state, field)
        if state.ply > self.limits.max_ply:
            raise malformed(f"{field}.ply", f"ply {state.ply} is beyond {self.limits.max_ply}")
        return self.conversions.game_from_proto(state, field)

    def _action(
        self,
        game: Game[Any],
        request: engine_pb2.ValidateActionRequest | engine_pb2.FormatActionRequest,
    ) -> Any:
        """The one action a request names, in `game`'s terms (MISSING_FIELD when it names none)."""
        if not request.HasField("action"):
            raise missing("action")
        return self.conversions.action_from_proto(game, request.action)

    def _state(self, game: Game[Any], view: engine_pb2.StateView.ValueType) -> game_pb2.GameState:
        return self.conversions.game_to_proto(game, view=view != engine_pb2.STATE_VIEW_POSITION)

    def _write_state(
        self, game: Game[Any], out: game_pb2.GameState, view: engine_pb2.StateView.ValueType
    ) -> None:
        """`_state` written into a response's own (empty) field."""
        self.conversions.write_state(game, out, view=view != engine_pb2.STATE_VIEW_POSITION)

    def _applied(self, game: Game[Any], action: Any, out: engine_pb2.AppliedAction) -> None:
        """Fill `out` (a response's own field) with `action` as played in `game`."""
        notation = game.format(action)
        hidden = (
            None
            if isinstance(action, META_TYPES)
            else game.ruleset.public_notation(game.state, action)
        )
        self.conversions.action_to_proto(game, action, out.action)
        out.notation = notation
        out.public_notation = hidden or notation

    def _expensive(
        self,
        name: str,
        request: Message,
        context: grpc.ServicerContext,
        *,
        seconds: float,
        limit: float,
    ) -> Any:
        """Run the work `name` in the pool (admitted, cancellable), or here without one."""
        if self.pool is None:
            return self.work(name, request, within_deadline(seconds, context))
        priority = self._priority(context)
        self.pool.refuse_when_full(priority)  # before any work for the pool (see there)
        job = Job(name, request.SerializeToString(), seconds, limit)
        answer = self.pool.run(job, context, request_id(), priority=priority)
        return _message_class(_METHODS[name].output_type).FromString(answer)

    def _priority(self, context: grpc.ServicerContext) -> bool:
        """Whether the call carries the caller key (a wrong or missing key: any caller)."""
        if not self._caller_digest:
            return False
        for key, value in context.invocation_metadata() or ():
            # Not a binary header ("-bin"): gRPC gives its value as text.
            if key == CALLER_KEY_HEADER and isinstance(value, str):
                return hmac.compare_digest(_digest(value), self._caller_digest)
        return False

    def _search(
        self,
        name: str,
        request: engine_pb2.SuggestActionRequest | engine_pb2.ResolveBattleRequest,
        context: grpc.ServicerContext,
        budget: float,
    ) -> Any:
        """A search of `budget` seconds on the request's state (refused when it is missing),
        cut off at its `search_limit`."""
        _check_present(request.state)
        return self._expensive(name, request, context, seconds=budget, limit=search_limit(budget))

    def _long_work(self, name: str, request: Message, context: grpc.ServicerContext) -> Any:
        """Work on a long record: the whole of the work time, cut off there too."""
        limit = self.limits.max_work_seconds
        return self._expensive(name, request, context, seconds=limit, limit=limit)

    def work(self, name: str, request: Any, seconds: float) -> Message:
        """The expensive part of an RPC, wherever it runs (a pool process or this thread)."""
        if name == "SuggestAction":
            return self._suggestion(request, seconds)
        if name == "ResolveBattle":
            return self._battle(request, seconds)
        if name == "ReplayRecord":
            return self._replayed(request)
        if name == "WriteRecord":
            return self._written(request)
        raise ValueError(f"{name} is no expensive call")

    def _check_action_count(self, count: int, field: str) -> None:
        if count > self.limits.max_actions:
            raise beyond_limit(
                ServiceReason.TOO_MANY_ACTIONS,
                f"{count} actions in one request; at most {self.limits.max_actions}",
                field,
            )

    # -- RPCs ----------------------------------------------------------------------------

    @rpc("ListGames")
    def ListGames(
        self, request: engine_pb2.ListGamesRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ListGamesResponse:
        return self._infos

    @rpc("DescribeGame")
    def DescribeGame(
        self, request: engine_pb2.DescribeGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.DescribeGameResponse:
        ruleset = self._ruleset(request.game)
        options = ruleset.resolve_options(dict(request.options), request.preset or None)
        initial: Game[Any] = Game(ruleset, ruleset.new_game(options, request.setup or None))
        return engine_pb2.DescribeGameResponse(
            info=describe.game_info_for(
                ruleset, next(i for i in self._infos.games if i.id == ruleset.id), options
            ),
            board=describe.describe(ruleset, options),
            initial_state=self._state(initial, request.view),
        )

    @rpc("NewGame")
    def NewGame(
        self, request: engine_pb2.NewGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.NewGameResponse:
        ruleset = self._ruleset(request.game)
        if request.position:
            given = [name for name in ("options", "preset", "setup") if getattr(request, name)]
            if given:
                raise malformed(given[0], f"a new game from a position takes no {given[0]}")
            game = self.conversions.game_from_proto(
                game_pb2.GameState(game=ruleset.id, position=request.position)
            )
            state = game.state
        else:
            options = ruleset.resolve_options(dict(request.options), request.preset or None)
            state = ruleset.new_game(options, request.setup or None)
        return engine_pb2.NewGameResponse(
            state=self._state(Game(ruleset, state), request.view), setup=ruleset.setup_text(state)
        )

    @rpc("ListLegalActions")
    def ListLegalActions(
        self, request: engine_pb2.ListLegalActionsRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ListLegalActionsResponse:
        game = self._game(request.state)
        response = engine_pb2.ListLegalActionsResponse(to_act=list(game.to_act()))
        cells = cell_names(game.ruleset, game.ruleset.options_of(game.state))
        if request.cell and request.cell not in cells:
            raise RuleError(
                Reason.UNKNOWN_CELL, f"{request.cell!r} is not a cell of this board", field="cell"
            )
        ruleset, state, entries = game.ruleset, game.state, []
        for action in game.legal_actions():  # game actions: the ruleset's own to name
            notation = ruleset.format_action(state, action)
            if request.cell and first_cell(notation, cells) != request.cell:
                continue
            side = ruleset.actor(state, action)
            entries.append(_legal_action(self.conversions, ruleset.id, side, action, notation))
        response.MergeFromString(b"".join(entries))
        return response

    @rpc("ValidateAction")
    def ValidateAction(
        self, request: engine_pb2.ValidateActionRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ValidateActionResponse:
        game = self._game(request.state)
        try:
            action = self._action(game, request)
            notation = game.format(action)
            game.apply(request.action.side or game.actor(action), action)
        except RuleError as error:
            return engine_pb2.ValidateActionResponse(
                legal=False,
                reason=_error_reason(error.reason),
                message=bounded(error.message),
                rule=error.rule,
                alternatives=error.alternatives,
            )
        return engine_pb2.ValidateActionResponse(legal=True, notation=notation)

    @rpc("ApplyActions")
    def ApplyActions(
        self, request: engine_pb2.ApplyActionsRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ApplyActionsResponse:
        game = self._game(request.state)
        if not request.actions:
            raise missing("actions")
        self._check_action_count(len(request.actions), "actions")
        response = engine_pb2.ApplyActionsResponse()
        for index, message in enumerate(request.actions):
            try:
                action = self.conversions.action_from_proto(game, message, f"actions[{index}]")
                self._applied(game, action, response.applied.add())
                game, events = game.apply(message.side or game.actor(action), action)
            except RuleError as error:
                raise error.at(index) from None
            for event in events:
                describe.event(event, response.events.add())
        self._write_state(game, response.state, request.view)
        return response

    @rpc("ParseAction")
    def ParseAction(
        self, request: engine_pb2.ParseActionRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ParseActionResponse:
        game = self._game(request.state)
        if not request.text.strip():
            raise missing("text")
        action = game.parse(request.text, request.side or None)
        return engine_pb2.ParseActionResponse(
            action=self.conversions.action_to_proto(game, action), notation=game.format(action)
        )

    @rpc("FormatAction")
    def FormatAction(
        self, request: engine_pb2.FormatActionRequest, context: grpc.ServicerContext
    ) -> engine_pb2.FormatActionResponse:
        game = self._game(request.state)
        action = self._action(game, request)
        return engine_pb2.FormatActionResponse(notation=game.format(action))

    @rpc("WriteRecord")
    def WriteRecord(
        self, request: engine_pb2.WriteRecordRequest, context: grpc.ServicerContext
    ) -> engine_pb2.WriteRecordResponse:
        if len(request.actions) > self.limits.max_record_actions:
            raise beyond_limit(
                ServiceReason.RECORD_TOO_LONG,
                f"{len(request.actions)} actions in one record; "
                f"at most {self.limits.max_record_actions}",
                "actions",
            )
        if len(request.actions) <= self.limits.max_actions:  # as cheap as one ApplyActions
            return self._written(request)
        answer: engine_pb2.WriteRecordResponse = self._long_work("WriteRecord", request, context)
        return answer

    def _written(self, request: engine_pb2.WriteRecordRequest) -> engine_pb2.WriteRecordResponse:
        initial = self._game(request.initial_state, "initial_state")
        game = initial
        lines: list[tuple[str, str]] = []
        for index, message in enumerate(request.actions):
            try:
                action = self.conversions.action_from_proto(game, message, f"actions[{index}]")
                side = message.side or game.actor(action)
                lines.append((side, game.format(action)))
                game, _ = game.apply(side, action)
            except RuleError as error:
                raise error.at(index) from None
        ruleset = initial.ruleset
        outcome = game.outcome
        text = write_record(
            ruleset.id,
            ruleset.options_of(initial.state).as_text(),
            ruleset.setup_text(initial.state),
            lines,
            result=outcome.message if outcome else "",
            tags=dict(sorted(request.tags.items())),  # map order differs between processes
        )
        return engine_pb2.WriteRecordResponse(
            record=text, final_state=self._state(game, request.view)
        )

    @rpc("ReplayRecord")
    def ReplayRecord(
        self, request: engine_pb2.ReplayRecordRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ReplayRecordResponse:
        if not request.record.strip():
            raise missing("record")
        size = len(request.record.encode())
        if size > self.limits.max_record_bytes:
            raise beyond_limit(
                ServiceReason.RECORD_TOO_LONG,
                f"the record has {size} bytes; at most {self.limits.max_record_bytes}",
                "record",
            )
        if request.record.count("\n") <= self.limits.max_actions:  # one ApplyActions' worth
            return self._replayed(request)
        answer: engine_pb2.ReplayRecordResponse = self._long_work("ReplayRecord", request, context)
        return answer

    def _replayed(self, request: engine_pb2.ReplayRecordRequest) -> engine_pb2.ReplayRecordResponse:
        """The replay, refused as soon as its answer would pass the message limit: first by an
        estimate from the initial state's size, then by the bytes built so far."""
        record = parse_record(request.record)
        ruleset = self._ruleset(record.game)
        steps = replay_steps(ruleset, record)
        initial = next(steps)
        response = engine_pb2.ReplayRecordResponse(initial_state=self._state(initial, request.view))
        budget = _ResponseBudget(self.limits.max_message_bytes, request.include_states)
        budget.expect(len(record.actions), response.initial_state.ByteSize())
        before = initial
        for game, (side, text) in zip(steps, record.actions, strict=True):
            applied = response.actions.add()
            self._applied(before, before.parse(text, side), applied)
            budget.spend(applied.ByteSize())
            if request.include_states:
                state = response.states.add()
                self._write_state(game, state, request.view)
                budget.spend(state.ByteSize())
            before = game
        self._write_state(before, response.final_state, request.view)
        return response

    @rpc("SuggestAction")
    def SuggestAction(
        self, request: engine_pb2.SuggestActionRequest, context: grpc.ServicerContext
    ) -> engine_pb2.SuggestActionResponse:
        budget = _search_budget(request, DEFAULT_SUGGEST_SECONDS, self.limits.max_suggest_seconds)
        _check_level(request.level, max(LEVELS))
        answer: engine_pb2.SuggestActionResponse = self._search(
            "SuggestAction", request, context, budget
        )
        if answer.cut_short:
            CUT_SHORT.labels(request.state.game, str(request.level or max(LEVELS))).inc()
        return answer

    def _suggestion(
        self, request: engine_pb2.SuggestActionRequest, seconds: float
    ) -> engine_pb2.SuggestActionResponse:
        game = self._game(request.state)
        level = request.level or max(LEVELS)
        result = suggest(
            game,
            side=request.side or None,
            seconds=seconds,
            max_depth=request.max_depth,
            seed=request.seed,
            strength=level,
            wall=search_wall_cap(seconds),
        )
        if result.cut_short:
            log.warning(
                "search cut short by the wall-clock cap: played below its level",
                game=game.ruleset.id,
                level=level,
                depth=result.depth,
                nodes=result.nodes,
                budget_s=seconds,
            )
        return engine_pb2.SuggestActionResponse(
            action=self.conversions.action_to_proto(game, result.action),
            notation=game.format(result.action),
            evaluation=result.evaluation,
            depth=result.depth,
            line=result.line,
            nodes=result.nodes,
            wins_in=result.wins_in,
            summary=summary(result),
            cut_short=result.cut_short,
        )

    @rpc("ResolveBattle")
    def ResolveBattle(
        self, request: engine_pb2.ResolveBattleRequest, context: grpc.ServicerContext
    ) -> engine_pb2.ResolveBattleResponse:
        budget = _search_budget(request, DEFAULT_BATTLE_SECONDS, self.limits.max_battle_seconds)
        _check_level(request.level, DEFAULT_BATTLE_LEVEL)
        if request.max_turns > MAX_BATTLE_TURNS:
            raise malformed(
                "max_turns", f"max_turns {request.max_turns} is beyond {MAX_BATTLE_TURNS}"
            )
        answer: engine_pb2.ResolveBattleResponse = self._search(
            "ResolveBattle", request, context, budget
        )
        return answer

    def _battle(
        self, request: engine_pb2.ResolveBattleRequest, seconds: float
    ) -> engine_pb2.ResolveBattleResponse:
        game = self._game(request.state)
        if game.ruleset.id != "napoleonic":
            raise RuleError(
                Reason.ILLEGAL_ACTION,
                f"ResolveBattle resolves Napoleonic Chess battles, not {game.ruleset.id}",
                field="state.game",
            )
        battle = resolve_battle(
            game,
            level=request.level or DEFAULT_BATTLE_LEVEL,
            seconds=seconds,
            max_turns=request.max_turns,
            seed=request.seed,
        )
        final = self._state(battle.game, request.view)
        response = engine_pb2.ResolveBattleResponse(
            final_state=final,
            finished=battle.finished,
            turns=battle.turns,
            actions=battle.actions,
        )
        outcome = battle.outcome
        response.outcome.winner = outcome.winner or ""
        response.outcome.reason = game_pb2.OutcomeReason.Value(f"OUTCOME_REASON_{outcome.reason}")
        response.outcome.message = outcome.message
        response.outcome.winners.extend(outcome.winning_sides)
        response.survivors.extend(
            game_pb2.Piece(kind=p.kind, side=p.side, cell=p.cell, id=p.id, tags=p.tags)
            for p in battle.game.ruleset.pieces(battle.game.state)
        )
        return response

    @rpc("Ping")
    def Ping(
        self, request: engine_pb2.PingRequest, context: grpc.ServicerContext
    ) -> engine_pb2.PingResponse:
        return engine_pb2.PingResponse(payload=request.payload)


@memo(8192)  # a game's legal actions recur from position to position (and game to game)
def _legal_action(
    conversions: Conversions, game_id: str, side: str, action: Any, notation: str
) -> bytes:
    """One legal action on the wire, as a ListLegalActionsResponse holding it alone: merged
    into an answer, it appends the action (protobuf's own encoding, made once per distinct
    action, side and notation)."""
    entry = engine_pb2.LegalAction(notation=notation)
    conversions.write_action(game_id, side, action, entry.action)
    return engine_pb2.ListLegalActionsResponse(actions=[entry]).SerializeToString()


@memo(64)
def cell_names(ruleset: AnyRuleset, options: Options) -> frozenset[str]:
    """Every cell name of a ruleset's board under some options."""
    return frozenset(cell.name for cell in ruleset.describe(options).cells)


@memo(64)
def _cell_pattern(cells: frozenset[str]) -> re.Pattern[str]:
    # Longest names first ("j10" before "j1"); a cell is not part of a longer name or
    # number, but may follow a piece letter or a mark ("Md1xd6", "F@e5", "a3:c5").
    names = "|".join(re.escape(name) for name in sorted(cells, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{names})(?![0-9])")


def first_cell(notation: str, cells: frozenset[str]) -> str | None:
    """The first cell a notation names: the cell an action starts from ("Mj1xj10" -> "j1")."""
    found = _cell_pattern(cells).search(notation)
    return found.group(0) if found else None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "replace")).digest()


def _error_reason(reason: Reason) -> errors_pb2.ErrorReason.ValueType:
    return errors_pb2.ErrorReason.Value(f"ERROR_REASON_{reason.value}")


def _check_present(state: game_pb2.GameState, field: str = "state") -> None:
    """Refuse a request whose state is missing altogether."""
    if not state.game and not state.position and not state.pieces and not state.options:
        raise missing(field)


def _search_budget(
    request: engine_pb2.SuggestActionRequest | engine_pb2.ResolveBattleRequest,
    default: float,
    limit: float,
) -> float:
    """A search's time budget in seconds: the request's `time_budget`, else `default`;
    refused when not positive or beyond `limit`."""
    if not request.HasField("time_budget"):
        return default
    budget = _seconds(request.time_budget, "time_budget")
    if budget <= 0:
        raise malformed("time_budget", "time_budget must be positive")
    if budget > limit:
        raise Refusal(
            Code.INVALID_ARGUMENT,
            ServiceReason.DEADLINE_TOO_LONG,
            f"time_budget {budget:g} s is beyond the limit of {limit:g} s",
            field="time_budget",
        )
    return budget


def _check_level(level: int, default: int) -> None:
    """Refuse a playing strength beyond the levels (0: `default`)."""
    if level not in LEVELS and level != 0:
        raise malformed(
            "level",
            f"level {level} is no playing strength: 1 (a beginner can win) to "
            f"{max(LEVELS)} (the strongest), or 0 for {default}",
        )


def _seconds(duration: duration_pb2.Duration, field: str) -> float:
    """A Duration in seconds, refusing one the Duration's own rules forbid (its range, or
    seconds and nanos of opposite signs)."""
    seconds, nanos = duration.seconds, duration.nanos
    if (
        not -315_576_000_000 <= seconds <= 315_576_000_000
        or not -999_999_999 <= nanos <= 999_999_999
        or (seconds > 0 and nanos < 0)
        or (seconds < 0 and nanos > 0)
    ):
        raise malformed(field, f"{field} is no valid duration")
    return float(seconds + nanos / 1e9)


class _ResponseBudget:
    """The bytes an answer may still take; RESPONSE_TOO_LARGE as soon as it would pass."""

    def __init__(self, limit: int, include_states: bool) -> None:
        self.limit = limit
        self.include_states = include_states
        self.used = 0

    def expect(self, actions: int, state_bytes: int) -> None:
        """Refuse before any work when the answer's estimate is already beyond the limit."""
        states = 2 + (actions if self.include_states else 0)
        estimate = states * state_bytes
        if estimate > self.limit:
            raise self._refusal(f"about {estimate} bytes")
        self.used = 2 * state_bytes

    def spend(self, size: int) -> None:
        """Count `size` more bytes of the answer."""
        self.used += size
        if self.used > self.limit:
            raise self._refusal(f"more than {self.limit} bytes")

    def _refusal(self, size: str) -> Refusal:
        advice = " without include_states, or" if self.include_states else ""
        return beyond_limit(
            ServiceReason.RESPONSE_TOO_LARGE,
            f"the replay would answer with {size}; at most {self.limit} fit in one message: "
            f"ask{advice} for a shorter record",
            "include_states" if self.include_states else "record",
        )


_METHODS = {
    method.name: method for method in engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"].methods
}


def _message_class(descriptor: Any) -> Any:
    return message_factory.GetMessageClass(descriptor)


def pool_preload() -> list[str]:
    """The modules a pool process needs: each game's rules and AI (see `Pool`)."""
    modules = {type(ruleset).__module__ for ruleset in load_rulesets().values()}
    modules |= {entry.ai.partition(":")[0] for entry in games() if entry.ai}
    return sorted(modules)


def pool_work(seal_key: bytes | None, limits: Limits) -> Work:
    """The work a pool process runs (`Pool` calls this in each new process)."""
    engine = RulesEngine(load_rulesets(seal_key), limits, tag_key=tag_key(seal_key))

    def run(job: str, payload: bytes, seconds: float) -> bytes:
        request = _message_class(_METHODS[job].input_type).FromString(payload)
        return engine.work(job, request, seconds).SerializeToString()

    return run
