"""A game in progress: a ruleset's state plus what every game shares.

Resignation and draws by agreement work the same in all three games, so they live here,
once, around the game-specific state: `Game` adds the ending by resignation or agreement
(or by time and abandonment, which the matchmaker records as forfeits), the standing draw
offer and the number of actions played, and applies batches of actions atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from engine_service.rules.base import (
    Event,
    EventKind,
    Outcome,
    OutcomeReason,
    Ruleset,
    S,
    require_ongoing,
)
from engine_service.rules.errors import Reason, RuleError


@dataclass(frozen=True, slots=True)
class Resign:
    """A side gives up; `reason` is TIME or ABANDONED when the matchmaker records a forfeit."""

    side: str
    reason: OutcomeReason = OutcomeReason.RESIGNATION


@dataclass(frozen=True, slots=True)
class OfferDraw:
    """A side offers a draw; the offer stands until answered or the opponent acts."""

    side: str


@dataclass(frozen=True, slots=True)
class AcceptDraw:
    """The opponent of the offering side accepts: the game is drawn."""

    side: str


@dataclass(frozen=True, slots=True)
class DeclineDraw:
    """The opponent of the offering side declines the offer."""

    side: str


MetaAction = Resign | OfferDraw | AcceptDraw | DeclineDraw
META_TYPES = (Resign, OfferDraw, AcceptDraw, DeclineDraw)

_FORFEIT_WORDS = {
    "resign": OutcomeReason.RESIGNATION,
    "surrender": OutcomeReason.RESIGNATION,  # Napoleonic Chess calls it surrender (8)
    "timeout": OutcomeReason.TIME,
    "abandon": OutcomeReason.ABANDONED,
}
FORFEIT_TEXT = {  # the notation of each forfeit, also its word in position texts
    OutcomeReason.RESIGNATION: "resign",
    OutcomeReason.TIME: "timeout",
    OutcomeReason.ABANDONED: "abandon",
}
# The draw actions by their notation, which is also their field of the contract's Action
# with "_" for the space ("offer draw": offer_draw).
DRAW_ACTIONS: dict[str, type[OfferDraw | AcceptDraw | DeclineDraw]] = {
    "offer draw": OfferDraw,
    "accept draw": AcceptDraw,
    "decline draw": DeclineDraw,
}
DRAW_TEXT = {action: words for words, action in DRAW_ACTIONS.items()}
_NOT_YET = object()


@dataclass(frozen=True, slots=True)
class Game(Generic[S]):
    """A ruleset's state with the endings and offers every game shares."""

    ruleset: Ruleset[S, Any]
    state: S
    ended: Outcome | None = None  # by resignation, agreement, time or abandonment
    draw_offer: str | None = None  # the side whose draw offer stands
    ply: int = 0  # actions applied since the initial position (resign and draws included)
    # Games of more than two sides: who has accepted the standing offer so far (the draw is
    # agreed when every side still in the game has).
    draw_accepted: tuple[str, ...] = ()
    # The rules' outcome of `state`, worked out once (a Game never changes).
    _by_rules: Any = field(default=_NOT_YET, init=False, compare=False, repr=False)

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, by the rules or by the players; None while it goes on."""
        if self.ended is not None:
            return self.ended
        if self._by_rules is _NOT_YET:
            object.__setattr__(self, "_by_rules", self.ruleset.outcome(self.state))
        result: Outcome | None = self._by_rules
        return result

    def to_act(self) -> tuple[str, ...]:
        """The sides that may send a game action now."""
        return () if self.outcome else self.ruleset.to_act(self.state)

    def legal_actions(self) -> list[Any]:
        """The legal game actions (resign and draw offers are always open besides)."""
        return [] if self.ended else self.ruleset.legal_actions(self.state)

    # -- applying ----------------------------------------------------------------------

    def apply(self, side: str, action: Any) -> tuple[Game[S], list[Event]]:
        """Check and apply one action by `side`; raise RuleError and change nothing if illegal."""
        self.ruleset.check_side(self.state, side)
        require_ongoing(self.outcome)
        if isinstance(action, META_TYPES):
            if action.side != side:
                raise RuleError(Reason.NOT_YOUR_TURN, f"{side} cannot act for {action.side}")
            game, events = self._apply_meta(action)
            return replace(game, ply=self.ply + 1), events
        self.ruleset.check_turn(self.state, side, action)
        state, events = self.ruleset.apply(self.state, action)
        offer = self.draw_offer if self.draw_offer in (None, side) else None
        accepted = self.draw_accepted if offer else ()
        game = Game(  # `replace`, spelt out: it is the cost of every action applied
            self.ruleset,
            state,
            ended=self.ended,
            draw_offer=offer,
            ply=self.ply + 1,
            draw_accepted=accepted,
        )
        result = game.outcome
        if result is not None and not any(e.kind is EventKind.GAME_OVER for e in events):
            events.append(Event(EventKind.GAME_OVER, result.message, side=result.winner))
        return game, events

    def apply_all(self, actions: Sequence[tuple[str, Any]]) -> tuple[Game[S], list[Event]]:
        """Apply (side, action) pairs in order, all or nothing; an error names its index."""
        game: Game[S] = self
        events: list[Event] = []
        for i, (side, action) in enumerate(actions):
            try:
                game, more = game.apply(side, action)
            except RuleError as error:
                raise error.at(i) from None
            events.extend(more)
        return game, events

    def _apply_meta(self, action: MetaAction) -> tuple[Game[S], list[Event]]:
        side = action.side
        if isinstance(action, Resign):
            alone = self.ruleset.surrender(self.state, side, action.reason)
            if alone is not None:  # its allies play on (Napoleonic 10.6)
                verb = _FORFEIT_VERBS.get(action.reason, "forfeits")
                game = replace(self, state=alone, draw_offer=None, draw_accepted=())
                events = [Event(EventKind.PLAYER_OUT, f"{side} {verb} and is out", side=side)]
                result = game.outcome
                if result is not None:
                    events.append(Event(EventKind.GAME_OVER, result.message, side=result.winner))
                return game, events
            ended = forfeit(self.ruleset, side, action.reason)
            winner = ended.winner
            return replace(self, ended=ended, draw_offer=None), [
                Event(EventKind.GAME_OVER, ended.message, side=winner)
            ]
        if isinstance(action, OfferDraw):
            if not self.ruleset.options_of(self.state).get("draw_by_agreement", True):
                raise RuleError(
                    Reason.DRAW_BY_AGREEMENT_DISABLED, "draws by agreement are off in this game"
                )
            if self.draw_offer == side:
                raise RuleError(Reason.ILLEGAL_ACTION, f"{side} has already offered a draw")
            if side not in self.ruleset.remaining(self.state):
                raise RuleError(Reason.ILLEGAL_ACTION, f"{side} is out of the game")
            if self.draw_offer is not None:
                raise RuleError(
                    Reason.ILLEGAL_ACTION,
                    f"{self.draw_offer} has offered a draw: accept or decline it",
                )
            return replace(self, draw_offer=side), [
                Event(EventKind.DRAW_OFFERED, f"{side} offers a draw", side=side)
            ]
        if self.draw_offer is None or self.draw_offer == side:
            raise RuleError(Reason.DRAW_NOT_OFFERED, f"{side} has no draw offer to answer")
        if side not in self.ruleset.remaining(self.state):
            raise RuleError(Reason.ILLEGAL_ACTION, f"{side} is out of the game")
        if isinstance(action, AcceptDraw):
            accepted = (*self.draw_accepted, side) if side not in self.draw_accepted else None
            if accepted is None:
                raise RuleError(Reason.ILLEGAL_ACTION, f"{side} has already accepted the draw")
            awaited = [
                p
                for p in self.ruleset.remaining(self.state)
                if p != self.draw_offer and p not in accepted
            ]
            if awaited:  # games of more than two sides: every side still in must agree
                return replace(self, draw_accepted=accepted), [
                    Event(
                        EventKind.DRAW_OFFERED,
                        f"{side} accepts the draw; awaiting {', '.join(awaited)}",
                        side=side,
                    )
                ]
            ended = AGREED
            return replace(self, ended=ended, draw_offer=None, draw_accepted=()), [
                Event(EventKind.GAME_OVER, ended.message)
            ]
        return replace(self, draw_offer=None, draw_accepted=()), [
            Event(EventKind.DRAW_DECLINED, f"{side} declines the draw", side=side)
        ]

    # -- notation ----------------------------------------------------------------------

    def parse(self, text: str, side: str | None = None) -> Any:
        """The action `text` names (a game action or resign/draw words) for `side`."""
        words = " ".join(text.lower().split())
        if words in _FORFEIT_WORDS or words in DRAW_ACTIONS:
            actor = side or self._default_side()
            self.ruleset.check_side(self.state, actor)
            if words in DRAW_ACTIONS:
                return DRAW_ACTIONS[words](actor)
            return Resign(actor, _FORFEIT_WORDS[words])
        require_ongoing(self.ended)
        return self.ruleset.parse_action(self.state, text, side)

    def format(self, action: Any) -> str:
        """The notation of an action (game or meta) in this position."""
        if isinstance(action, Resign):
            return FORFEIT_TEXT[action.reason]
        if type(action) in DRAW_TEXT:
            return DRAW_TEXT[type(action)]
        return self.ruleset.format_action(self.state, action)

    def actor(self, action: Any) -> str:
        """The side that performs `action`."""
        if isinstance(action, META_TYPES):
            return action.side
        return self.ruleset.actor(self.state, action)

    # -- helpers -----------------------------------------------------------------------

    def _default_side(self) -> str:
        to_act = self.ruleset.to_act(self.state)
        if len(to_act) != 1:
            raise RuleError(Reason.ILLEGAL_ACTION, "say which side acts: several sides may act now")
        return to_act[0]


AGREED = Outcome(None, OutcomeReason.AGREEMENT, "drawn by agreement")
_FORFEIT_VERBS = {
    OutcomeReason.RESIGNATION: "resigns",
    OutcomeReason.TIME: "loses on time",
    OutcomeReason.ABANDONED: "abandoned the game",
}


def forfeit(ruleset: Ruleset[Any, Any], side: str, reason: OutcomeReason) -> Outcome:
    """The ending when `side` resigns, loses on time or abandons: its opponent wins."""
    winner = next(info.id for info in ruleset.sides if info.id != side)
    verb = _FORFEIT_VERBS.get(reason, "forfeits")
    return Outcome(winner, reason, f"{side} {verb}; {winner} wins")
