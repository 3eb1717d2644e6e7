"""`WarRuleset`: The Game of War behind the shared `Ruleset` interface."""

from __future__ import annotations

from typing import ClassVar

from engine_service.rules.base import BoardDescription, Event, Outcome, PieceView, Ruleset, SideInfo
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options, OptionSpec
from engine_service.rules.war.actions import Action
from engine_service.rules.war.board import FORWARD, NAMES, relative_rank
from engine_service.rules.war.check import allowed, is_legal
from engine_service.rules.war.compulsion import exposed
from engine_service.rules.war.consistency import check_state
from engine_service.rules.war.describe import SIDES, TITLE, describe_board
from engine_service.rules.war.endings import citadel_holder, decided
from engine_service.rules.war.events import action_events
from engine_service.rules.war.explain import explain, explain_text
from engine_service.rules.war.legal import legal_in
from engine_service.rules.war.notation import format_action_text, parse_action
from engine_service.rules.war.options import OPTION_SPECS, PRESETS
from engine_service.rules.war.pieces import (
    KIND_IDS,
    SIDE_IDS,
    TROOP,
    TROOP_MOVED,
    kind_of,
    side_of,
)
from engine_service.rules.war.play import perft, play
from engine_service.rules.war.start import new_game, setup_text_of
from engine_service.rules.war.state import WarState
from engine_service.rules.war.troops import REAR_RANK

__all__ = ["WarRuleset", "clear_caches"]


def clear_caches() -> None:
    """Forget the remembered legal actions and outcomes (for benchmarks of uncached work)."""
    legal_in.cache_clear()
    decided.cache_clear()


def _is_action(action: object) -> bool:
    return type(action) is tuple and bool(action) and {type(c) for c in action} == {int}


class WarRuleset(Ruleset[WarState, Action]):
    """The Game of War (Hudson Maxim, 1910), per `shared/rules/game_of_war.md`."""

    id: ClassVar[str] = "war"
    title: ClassVar[str] = TITLE
    sides: ClassVar[tuple[SideInfo, ...]] = SIDES
    option_specs: ClassVar[tuple[OptionSpec, ...]] = OPTION_SPECS
    presets = PRESETS

    # -- options and set-up ------------------------------------------------------------

    def new_game(
        self, options: Options, setup: str | None = None, *, checked: bool = True
    ) -> WarState:
        """The initial position of the options, or the position of a setup string (3.2)."""
        return new_game(options, setup, checked=checked)

    def options_of(self, state: WarState) -> Options:
        """The options the game was created with."""
        return state.rules.options

    def setup_text(self, state: WarState) -> str:
        """The position as a setup string that `new_game` reads back to the same position."""
        return setup_text_of(state)

    # -- play --------------------------------------------------------------------------

    def to_act(self, state: WarState) -> tuple[str, ...]:
        """The side to move, or nobody once the game is over."""
        return () if decided(state) is not None else (SIDE_IDS[state.side],)

    def legal_actions(self, state: WarState) -> list[Action]:
        """Every legal action (empty once the game is over)."""
        return list(legal_in(state)[0])

    def apply(self, state: WarState, action: Action) -> tuple[WarState, list[Event]]:
        """Check `action`, then return the new position and the events (RuleError if illegal)."""
        self.require_ongoing(state)
        if not _is_action(action):
            raise RuleError(Reason.ILLEGAL_ACTION, f"{action!r} is not a Game of War action")
        if not allowed(state, action):  # the game goes on: legal is allowed (`check.py`)
            raise explain(state, action)
        after = play(state, action)
        return after, action_events(state, action, after, decided(after))

    def play(self, state: WarState, action: Action) -> WarState:
        """The new position after a legal action (no checks, no events)."""
        return play(state, action)

    def actor(self, state: WarState, action: Action) -> str:
        """The side to move performs every action."""
        return SIDE_IDS[state.side]

    def outcome(self, state: WarState) -> Outcome | None:
        """How the game ended (sections 9 and 10), or None."""
        return decided(state)

    def perft(self, state: WarState, depth: int) -> int:
        """Action sequences of exactly `depth` actions (`play.perft`: the compiled form's own)."""
        return perft(state, depth)

    # -- notation ----------------------------------------------------------------------

    def format_action(self, state: WarState, action: Action) -> str:
        """The notation of an action (section 2); `#C` marks a move after which a Citadel held."""
        # Only an enemy man already on the mover's Citadel can hold it through the move.
        occupier = state.board[state.rules.citadels[state.side]]
        wins = (
            bool(occupier)
            and side_of(occupier) != state.side
            and is_legal(state, action)
            and citadel_holder(play(state, action)) is not None
        )
        return format_action_text(state, action, ends_by_citadel=wins)

    def parse_action(self, state: WarState, text: str, side: str | None = None) -> Action:
        """The action `text` names for `side` (default: the side to move)."""
        side_index = state.side if side is None else self.side_index(side)
        action = parse_action(state, text, side_index)
        if side_index == state.side and not is_legal(state, action):
            raise explain_text(state, text, action)
        return action

    # -- inspection --------------------------------------------------------------------

    def check_state(self, state: WarState) -> list[str]:
        """Every inconsistency of `state` that could not arise in play (all at once)."""
        return check_state(state)

    def pieces(self, state: WarState) -> list[PieceView]:
        """Men and placed Flying Machines, with Troop flags and tags."""
        board = state.board
        mover = state.side
        exposed_men = {m for men in exposed(state.rules, board, mover).values() for m in men}
        views = []
        for cell, piece in enumerate(board):
            if not piece:
                continue
            side = side_of(piece)
            kind = kind_of(piece)
            tags: list[str] = []
            if kind == TROOP:
                tags.append("rear" if relative_rank(side, cell) == REAR_RANK else "van")
            if kind <= TROOP_MOVED and FORWARD[side][cell] < 0:
                tags.append("immobile")
            if cell in exposed_men:
                tags.append("exposed")
            if cell in state.huffable:
                tags.append("huffable")
            views.append(
                PieceView(
                    kind=KIND_IDS[kind],
                    side=SIDE_IDS[side],
                    cell=NAMES[cell],
                    moved=kind == TROOP_MOVED,
                    tags=tuple(tags),
                )
            )
        return views

    def describe(self, options: Options) -> BoardDescription:
        """The board, piece kinds, sides and rules summary for drawing."""
        return describe_board(options)
