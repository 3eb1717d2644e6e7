"""Proto <-> core values, at the edge and nowhere else.

A `wargame.v1.GameState` is its `position` text (`engine_service.rules.position`): the
engine reads it when it is there and always writes it, with the summary (`to_act`, `ply`,
`outcome`, `draw_offer`). The view for drawing (`options`, `pieces`, `detail`) is written
only when the caller wants it, and read only from a state without a position (a client of
the contract before the position existed). The common part of the view is converted here
once; each game's `GameConverter` converts only its `detail` and its actions. Everything a
state from the wire gets wrong becomes a `RuleError` (INVALID_STATE, with the offending
field named), never a repaired state and never an exception of another kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic

from engine_service.convert.tags import PositionTags, tag_key
from engine_service.memo import memo
from engine_service.rules.base import A, Outcome, OutcomeReason, PieceView, Ruleset, S
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import (
    DRAW_ACTIONS,
    AcceptDraw,
    DeclineDraw,
    Game,
    OfferDraw,
    Resign,
)
from engine_service.rules.options import Options
from engine_service.rules.position import MAX_PLY, read_position, write_position
from wargame.v1 import game_pb2

STATE_FORMAT_VERSION = 1
META_REASONS = (
    OutcomeReason.AGREEMENT,
    OutcomeReason.RESIGNATION,
    OutcomeReason.TIME,
    OutcomeReason.ABANDONED,
)


def outcome_reason_name(value: int) -> str:
    """The OutcomeReason name of a wire value ("UNKNOWN_<n>" for numbers the enum lacks)."""
    known = game_pb2.OutcomeReason.DESCRIPTOR.values_by_number.get(value)
    if known is not None:
        return known.name.removeprefix("OUTCOME_REASON_")
    return f"UNKNOWN_{value}"


def invalid_state(message: str, field: str) -> RuleError:
    """The error for a state from the wire that could not arise in play."""
    return RuleError(Reason.INVALID_STATE, message, field=field)


@memo(4096)  # a board's pieces recur from position to position (and from game to game)
def _piece_bytes(piece: PieceView) -> bytes:
    """One piece of the view on the wire, as a GameState holding it alone: merged into a
    state, it appends the piece (protobuf's own encoding, made once per distinct piece)."""
    view = game_pb2.Piece(
        kind=piece.kind,
        side=piece.side,
        cell=piece.cell,
        id=piece.id,
        moved=piece.moved,
        tags=piece.tags,
    )
    return game_pb2.GameState(pieces=[view]).SerializeToString()


class GameConverter(ABC, Generic[S, A]):
    """One game's state detail and actions, to and from the contract's messages."""

    game: ClassVar[str]  # ruleset id; also the name of the GameState/Action oneof member

    def __init__(self, ruleset: Ruleset[S, A]) -> None:
        self.ruleset = ruleset

    @abstractmethod
    def detail_to_proto(self, state: S, out: game_pb2.GameState) -> None:
        """Fill `out.<game>` (the detail oneof) from a core state."""

    @abstractmethod
    def state_from_proto(self, msg: game_pb2.GameState, options: Options) -> S:
        """The core state of `msg.pieces` and `msg.<game>`; `invalid_state(...)` if malformed.

        Structural problems (unknown cells or kinds, two pieces on a cell, missing detail)
        are raised here with the field named from a root called `state` ("state.pieces[3]");
        `Conversions` re-roots it to where the state sits in the request. Rule-level
        consistency is `check_state`'s.
        """

    @abstractmethod
    def action_to_proto(self, action: A, out: game_pb2.Action) -> None:
        """Fill `out.<game>` from a core game action."""

    @abstractmethod
    def action_from_proto(self, msg: game_pb2.Action, state: S) -> A:
        """The core action of `msg.<game>` (its side is `msg.side`); RuleError if malformed."""


class Conversions:
    """Whole states and actions of every game, given each game's converter."""

    def __init__(
        self, converters: dict[str, GameConverter[Any, Any]], tags: PositionTags | None = None
    ) -> None:
        self.converters = converters
        self.tags = tags or PositionTags(tag_key(None))

    def converter(self, game_id: str) -> GameConverter[Any, Any]:
        """The converter of a game id, or UNKNOWN_GAME."""
        try:
            return self.converters[game_id]
        except KeyError:
            known = ", ".join(self.converters)
            raise RuleError(
                Reason.UNKNOWN_GAME, f"unknown game {game_id!r}; games: {known}", field="game"
            ) from None

    # -- states --------------------------------------------------------------------------

    def game_to_proto(self, game: Game[Any], *, view: bool = True) -> game_pb2.GameState:
        """The contract's GameState of a game: its position and summary, and with `view`
        the options, pieces and detail for drawing."""
        out = game_pb2.GameState()
        self.write_state(game, out, view=view)
        return out

    def write_state(self, game: Game[Any], out: game_pb2.GameState, *, view: bool = True) -> None:
        """Fill an empty GameState (a response's own field: nothing built twice or copied)
        as `game_to_proto` describes."""
        ruleset = game.ruleset
        out.game = ruleset.id
        out.format_version = STATE_FORMAT_VERSION
        out.position = position = write_position(game)
        out.position_tag = self.tags.tag(ruleset.id, position)
        out.to_act.extend(game.to_act())
        out.ply = game.ply
        if game.draw_offer:
            out.draw_offer = game.draw_offer
        out.draw_accepted.extend(game.draw_accepted)
        outcome = game.outcome
        if outcome is not None:
            out.outcome.winner = outcome.winner or ""
            out.outcome.reason = game_pb2.OutcomeReason.Value(f"OUTCOME_REASON_{outcome.reason}")
            out.outcome.message = outcome.message
            out.outcome.winners.extend(outcome.winning_sides)
        if view:
            out.options.update(ruleset.options_of(game.state).as_text())
            out.MergeFromString(b"".join(map(_piece_bytes, ruleset.pieces(game.state))))
            self.converter(ruleset.id).detail_to_proto(game.state, out)

    def game_from_proto(self, msg: game_pb2.GameState, field: str = "state") -> Game[Any]:
        """The core game of a GameState (its position when it has one); RuleError naming
        what is wrong."""
        if not msg.game:
            raise invalid_state("the state names no game", f"{field}.game")
        converter = self.converter(msg.game)
        ruleset = converter.ruleset
        if msg.position:
            if msg.format_version not in (0, STATE_FORMAT_VERSION):
                raise invalid_state(
                    f"state format_version {msg.format_version} is not {STATE_FORMAT_VERSION}",
                    f"{field}.format_version",
                )
            # A text this engine wrote (its tag vouches for it) is not checked again.
            checked = not (
                msg.position_tag and self.tags.vouches(msg.game, msg.position, msg.position_tag)
            )
            try:
                return read_position(ruleset, msg.position, checked=checked)
            except RuleError as error:
                raise invalid_state(error.message, f"{field}.position") from None
        return self._structured(converter, msg, field)

    def _structured(
        self, converter: GameConverter[Any, Any], msg: game_pb2.GameState, field: str
    ) -> Game[Any]:
        """The game of a state without a position, read from its view (as before the
        position existed)."""
        ruleset = converter.ruleset
        if msg.format_version != STATE_FORMAT_VERSION:
            raise invalid_state(
                f"state format_version {msg.format_version} is not {STATE_FORMAT_VERSION}",
                f"{field}.format_version",
            )
        if msg.WhichOneof("detail") != ruleset.id:
            raise invalid_state(
                f"a {ruleset.id} state needs its detail in `{ruleset.id}`, "
                f"found {msg.WhichOneof('detail') or 'none'}",
                f"{field}.detail",
            )
        missing = [spec.name for spec in ruleset.option_specs if spec.name not in msg.options]
        if missing:
            raise invalid_state(
                f"the state lacks options {', '.join(missing)} (a state carries every option)",
                f"{field}.options",
            )
        try:
            options = ruleset.resolve_options(dict(msg.options))
        except RuleError as error:
            raise invalid_state(error.message, f"{field}.{error.field or 'options'}") from None
        try:
            state = converter.state_from_proto(msg, options)
        except RuleError as error:
            if error.field and field != "state" and error.field.startswith("state"):
                error.field = field + error.field.removeprefix("state")
            raise
        problems = ruleset.check_state(state)
        if problems:
            raise invalid_state("; ".join(problems), field)
        sides = ruleset.players_of(state)
        if msg.draw_offer and msg.draw_offer not in sides:
            raise invalid_state(f"draw_offer {msg.draw_offer!r} is no side", f"{field}.draw_offer")
        accepted = tuple(msg.draw_accepted)
        if accepted and (
            not msg.draw_offer
            or msg.draw_offer in accepted
            or not set(accepted) <= set(sides)
            or len(set(accepted)) != len(accepted)
        ):
            raise invalid_state(
                f"draw_accepted {list(accepted)} are not sides answering another's offer",
                f"{field}.draw_accepted",
            )
        if msg.ply > MAX_PLY:
            raise invalid_state(f"ply {msg.ply} is beyond {MAX_PLY}", f"{field}.ply")
        ended = self._meta_outcome(ruleset, state, msg, field)
        game: Game[Any] = Game(
            ruleset,
            state,
            ended=ended,
            draw_offer=msg.draw_offer or None,
            draw_accepted=accepted,
            ply=msg.ply,
        )
        if msg.to_act and tuple(msg.to_act) != game.to_act():
            raise invalid_state(
                f"to_act says {', '.join(msg.to_act)} but the state has "
                f"{', '.join(game.to_act()) or 'nobody'} to act",
                f"{field}.to_act",
            )
        return game

    @staticmethod
    def _meta_outcome(
        ruleset: Ruleset[Any, Any], state: Any, msg: game_pb2.GameState, field: str
    ) -> Outcome | None:
        """The ending by the players' hands the message records, checked against the rules."""
        by_rules = ruleset.outcome(state)
        if not msg.HasField("outcome"):
            if by_rules is not None:
                raise invalid_state(
                    f"the game is over ({by_rules.message}) but the state has no outcome",
                    f"{field}.outcome",
                )
            return None
        reason_name = outcome_reason_name(msg.outcome.reason)
        if by_rules is not None:
            if reason_name != by_rules.reason or (msg.outcome.winner or None) != by_rules.winner:
                raise invalid_state(
                    f"the outcome says {reason_name} for {msg.outcome.winner or 'nobody'}, "
                    f"but the rules say: {by_rules.message}",
                    f"{field}.outcome",
                )
            return None
        if reason_name not in META_REASONS:
            raise invalid_state(
                f"the outcome {reason_name} does not follow from the position",
                f"{field}.outcome.reason",
            )
        sides = list(ruleset.players_of(state))
        winner = msg.outcome.winner or None
        if (reason_name == OutcomeReason.AGREEMENT) != (winner is None) or (
            winner is not None and winner not in sides
        ):
            raise invalid_state(
                f"outcome {reason_name} cannot have winner {msg.outcome.winner!r}",
                f"{field}.outcome.winner",
            )
        return Outcome(winner, OutcomeReason(reason_name), msg.outcome.message)

    # -- actions -------------------------------------------------------------------------

    def action_to_proto(
        self, game: Game[Any], action: Any, out: game_pb2.Action | None = None
    ) -> game_pb2.Action:
        """The contract's Action of a core action (game or shared) in a game (written into
        `out` when given: a response's own, empty field)."""
        if out is None:
            out = game_pb2.Action()
        self.write_action(game.ruleset.id, game.actor(action), action, out)
        return out

    def write_action(self, game_id: str, side: str, action: Any, out: game_pb2.Action) -> None:
        """`action_to_proto` of an action of `side` in the game `game_id`, into `out`: what
        the contract's Action says depends on nothing else."""
        out.side = side
        if isinstance(action, Resign):
            out.resign.reason = game_pb2.OutcomeReason.Value(f"OUTCOME_REASON_{action.reason}")
        elif isinstance(action, OfferDraw):
            out.offer_draw.SetInParent()
        elif isinstance(action, AcceptDraw):
            out.accept_draw.SetInParent()
        elif isinstance(action, DeclineDraw):
            out.decline_draw.SetInParent()
        else:
            self.converter(game_id).action_to_proto(action, out)

    def action_from_proto(
        self, game: Game[Any], msg: game_pb2.Action, field: str = "action"
    ) -> Any:
        """The core action of a contract Action, read against `game`."""
        kind = msg.WhichOneof("kind")
        side = msg.side
        if kind is None:
            raise RuleError(Reason.ILLEGAL_ACTION, "the action is empty", field=f"{field}.kind")
        if kind == "notation":
            return game.parse(msg.notation, side or None)
        if not side:
            raise RuleError(
                Reason.ILLEGAL_ACTION, "the action names no side", field=f"{field}.side"
            )
        if kind == "resign":
            name = outcome_reason_name(msg.resign.reason)
            if name == "UNSPECIFIED":
                name = OutcomeReason.RESIGNATION
            if name not in (OutcomeReason.RESIGNATION, OutcomeReason.TIME, OutcomeReason.ABANDONED):
                raise RuleError(
                    Reason.ILLEGAL_ACTION,
                    f"resign reason {name} is none of RESIGNATION, TIME, ABANDONED",
                    field=f"{field}.resign.reason",
                )
            return Resign(side, OutcomeReason(name))
        draw = DRAW_ACTIONS.get(kind.replace("_", " "))  # offer_draw: "offer draw"
        if draw is not None:
            return draw(side)
        if kind != game.ruleset.id:
            raise RuleError(
                Reason.ILLEGAL_ACTION,
                f"a {kind} action cannot be played in a {game.ruleset.id} game",
                field=f"{field}.{kind}",
            )
        return self.converter(kind).action_from_proto(msg, game.state)
