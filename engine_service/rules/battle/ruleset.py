"""`BattleRuleset`: the Game of Battle behind the shared `Ruleset` interface."""

from __future__ import annotations

from typing import ClassVar

from engine_service.rules.base import BoardDescription, Event, Outcome, PieceView, Ruleset
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.artillery import commanders, exposed
from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.consistency import check_state
from engine_service.rules.battle.describe import SIDES, TITLE, describe_board
from engine_service.rules.battle.endings import decided, no_move_outcome
from engine_service.rules.battle.events import action_events
from engine_service.rules.battle.explain import explain
from engine_service.rules.battle.legal import (
    analysis_of,
    can_move,
    legal_actions,
    move_is_legal,
)
from engine_service.rules.battle.notation import format_move, parse_action
from engine_service.rules.battle.options import OPTION_SPECS, PRESETS
from engine_service.rules.battle.pieces import (
    ATTACKER,
    CITADEL,
    CITADEL_BYTE,
    DEFENDER,
    KIND_IDS,
    SIDE_IDS,
    kind_of,
    side_of,
)
from engine_service.rules.battle.play import perft, play
from engine_service.rules.battle.setup import setup_text_of
from engine_service.rules.battle.start import new_game
from engine_service.rules.battle.state import BattleState
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options


class BattleRuleset(Ruleset[BattleState, Move]):
    """War-Chess, or the Game of Battle (Richardson, 1866): rules of `game_of_battle.md`."""

    id: ClassVar[str] = "battle"
    title: ClassVar[str] = TITLE
    sides = SIDES
    option_specs = OPTION_SPECS
    presets = PRESETS

    # -- options and set-up --------------------------------------------------------------

    def new_game(
        self, options: Options, setup: str | None = None, *, checked: bool = True
    ) -> BattleState:
        """Plate 1's position with `first_player` to move, or the position of a set-up text."""
        return new_game(options, setup, checked=checked)

    def options_of(self, state: BattleState) -> Options:
        """The options the state carries."""
        return state.options

    def setup_text(self, state: BattleState) -> str:
        """The position as set-up text (see `setup`)."""
        return setup_text_of(state)

    # -- play ----------------------------------------------------------------------------

    def to_act(self, state: BattleState) -> tuple[str, ...]:
        """The side to move, or nobody once the game is over."""
        return () if self.outcome(state) else (SIDE_IDS[state.side],)

    def legal_actions(self, state: BattleState) -> list[Move]:
        """The legal moves (section 10); none once the game is over."""
        return legal_actions(state)

    def apply(self, state: BattleState, action: Move) -> tuple[BattleState, list[Event]]:
        """Check a move, make it and say what happened; RuleError naming the broken rule."""
        self.require_ongoing(state)
        if not isinstance(action, Move):
            raise RuleError(Reason.ILLEGAL_ACTION, f"{action!r} is not a Game of Battle move")
        if not move_is_legal(state, action):
            raise explain(state.board, state.side, state.rules, action, analysis_of(state))
        after = play(state, action)
        return after, action_events(state, action, after, self.outcome(after))

    # The position after a legal move (no checks, no events): the hot path, bound directly
    # (a static method, so that the compiled function, which is no descriptor, binds too).
    play = staticmethod(play)

    def perft(self, state: BattleState, depth: int) -> int:
        """Move sequences of exactly `depth` moves (`play.perft`: the compiled form's own)."""
        return perft(state, depth)

    def actor(self, state: BattleState, action: Move) -> str:
        """The owner of the moving piece (the side to move if its origin is empty)."""
        origin = action.origin
        if 0 <= origin < SQUARES and state.board[origin]:
            return SIDE_IDS[side_of(state.board[origin])]
        return SIDE_IDS[state.side]

    def outcome(self, state: BattleState) -> Outcome | None:
        """Section 9 and rulings 18-20."""
        ended = decided(state)
        if ended is not None:
            return ended
        if not can_move(state):
            return no_move_outcome(state)
        return None

    # -- notation ------------------------------------------------------------------------

    def format_action(self, state: BattleState, action: Move) -> str:
        """`36-51` or `36x51`."""
        return format_move(state.board, action)

    def parse_action(self, state: BattleState, text: str, side: str | None = None) -> Move:
        """The move of `text` for `side` (default: the side to move)."""
        mover = state.side if side is None else self.side_index(side)
        legal = self.legal_actions(state) if mover == state.side else []
        return parse_action(state.board, mover, legal, text)

    # -- inspection ----------------------------------------------------------------------

    def check_state(self, state: BattleState) -> list[str]:
        """Every inconsistency of the state (composition, key, history, counters)."""
        return check_state(state)

    def pieces(self, state: BattleState) -> list[PieceView]:
        """Every piece, the Citadel and the Wagon included; tags "exposed" and "commanded"."""
        board = state.board
        rules = state.rules
        flagged = exposed(board, ATTACKER, rules) | exposed(board, DEFENDER, rules)
        citadel = board.find(CITADEL_BYTE)
        if citadel >= 0 and commanders(board, citadel, ATTACKER, rules):
            flagged.add(citadel)
        views = []
        for cell, piece in enumerate(board):
            if not piece:
                continue
            tags: tuple[str, ...] = ()
            if cell in flagged:
                tags = ("commanded",) if kind_of(piece) == CITADEL else ("exposed",)
            views.append(
                PieceView(
                    kind=KIND_IDS.get(kind_of(piece), "unknown"),
                    side=SIDE_IDS[side_of(piece)] if side_of(piece) < 2 else "unknown",
                    cell=NAMES[cell],
                    tags=tags,
                )
            )
        return views

    def describe(self, options: Options) -> BoardDescription:
        """The board, its river and crossings, the piece kinds and a rules summary."""
        return describe_board()
