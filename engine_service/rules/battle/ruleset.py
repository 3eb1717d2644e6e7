"""The Game of Battle behind the shared `Ruleset` interface."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from engine_service.memo import memo
from engine_service.rules.base import (
    BoardDescription,
    Event,
    EventKind,
    Outcome,
    PieceView,
    Ruleset,
)
from engine_service.rules.battle.artillery import BLOCKS, batteries, battery_range, exposed
from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.describe import SIDES, describe_board
from engine_service.rules.battle.endings import decided, no_move_outcome
from engine_service.rules.battle.explain import explain
from engine_service.rules.battle.legal import CITADEL_BYTE, Analysis, analyse
from engine_service.rules.battle.movement import Move
from engine_service.rules.battle.notation import format_move, parse_move
from engine_service.rules.battle.options import OPTION_SPECS, PRESETS, rules_of
from engine_service.rules.battle.pieces import (
    ATTACKER,
    CITADEL,
    DEFENDER,
    KIND_IDS,
    KIND_NAMES,
    SIDE_IDS,
    describe_piece,
    kind_of,
    side_of,
)
from engine_service.rules.battle.play import play_as_method, play_move
from engine_service.rules.battle.setup import (
    INITIAL_BOARD,
    composition_problems,
    format_setup,
    parse_setup,
)
from engine_service.rules.battle.state import BattleState
from engine_service.rules.battle.zobrist import position_key
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options


def analysis_of(state: BattleState) -> Analysis:
    """The legal moves of a state, computed once and kept on it."""
    found = state._analysis
    if found is None:
        found = state._analysis = analyse(state.board, state.side, state.rules)
    return found


@memo(1)
def _description() -> BoardDescription:
    return describe_board()


def _commanders(board: bytes, square: int, side: int, state: BattleState) -> list[int]:
    blocks = BLOCKS[state.rules.citadel_and_wagon_block]
    return [g for g in batteries(board, side) if square in battery_range(board, g, blocks)]


class BattleRuleset(Ruleset[BattleState, Move]):
    """War-Chess, or the Game of Battle (Richardson, 1866): rules of `game_of_battle.md`."""

    id: ClassVar[str] = "battle"
    title: ClassVar[str] = "War-Chess, or the Game of Battle (Col. Charles Richardson, 1866)"
    sides = SIDES
    option_specs = OPTION_SPECS
    presets = PRESETS

    # -- options and set-up --------------------------------------------------------------

    def new_game(self, options: Options, setup: str | None = None) -> BattleState:
        """Plate 1's position with `first_player` to move, or the position of a set-up text."""
        first = rules_of(options).first_player
        if setup is None:
            return BattleState(INITIAL_BOARD, first, options)
        state = parse_setup(setup, options, first)
        problems = composition_problems(state.board)
        if problems:
            raise RuleError(Reason.INVALID_SETUP, "; ".join(problems), field="setup")
        return state

    def options_of(self, state: BattleState) -> Options:
        """The options the state carries."""
        return state.options

    def setup_text(self, state: BattleState) -> str:
        """The position as set-up text (see `setup`)."""
        return format_setup(state)

    # -- play ----------------------------------------------------------------------------

    def to_act(self, state: BattleState) -> tuple[str, ...]:
        """The side to move, or nobody once the game is over."""
        return () if self.outcome(state) else (SIDE_IDS[state.side],)

    def legal_actions(self, state: BattleState) -> list[Move]:
        """The legal moves (section 10); none once the game is over."""
        if decided(state) is not None:
            return []
        return list(analysis_of(state).legal)

    def apply(self, state: BattleState, action: Move) -> tuple[BattleState, list[Event]]:
        """Check a move, make it and say what happened; RuleError naming the broken rule."""
        self.require_ongoing(state)
        if not isinstance(action, Move):
            raise RuleError(Reason.ILLEGAL_ACTION, f"{action!r} is not a Game of Battle move")
        analysis = analysis_of(state)
        if action not in analysis.legal_set:
            raise explain(state.board, state.side, state.rules, action, analysis)
        after = play_move(state, action)
        return after, self._events(state, action, after)

    # The position after a legal move (no checks, no events): the hot path, bound directly.
    play = play_as_method

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
        if not analysis_of(state).legal:
            return no_move_outcome(state)
        return None

    # -- notation ------------------------------------------------------------------------

    def format_action(self, state: BattleState, action: Move) -> str:
        """`36-51` or `36x51`."""
        return format_move(state.board, action)

    def parse_action(self, state: BattleState, text: str, side: str | None = None) -> Move:
        """The move of `text` for `side` (default: the side to move)."""
        if side is None:
            mover = state.side
        elif side in SIDE_IDS:
            mover = SIDE_IDS.index(side)
        else:
            raise RuleError(
                Reason.ILLEGAL_ACTION, f"unknown side {side!r}; sides: {', '.join(SIDE_IDS)}"
            )
        legal = self.legal_actions(state) if mover == state.side else []
        return parse_move(state.board, mover, legal, text)

    # -- inspection ----------------------------------------------------------------------

    def check_state(self, state: BattleState) -> list[str]:
        """Every inconsistency of the state (composition, key, history, counters)."""
        problems = []
        if len(state.board) != SQUARES:
            return [f"the board has {len(state.board)} squares, not {SQUARES}"]
        problems += composition_problems(state.board)
        if state.side not in (ATTACKER, DEFENDER):
            problems.append(f"side to move {state.side} is neither attacker nor defender")
            return problems
        if not state.history:
            problems.append("the position history is empty (it ends with the current position)")
        elif state.history[-1] != position_key(state.board, state.side):
            problems.append("the last key of the position history is not the current position's")
        if len(state.history) > state.quiet + 1:
            problems.append(
                f"the position history holds {len(state.history)} positions but only "
                f"{state.quiet} moves were made since the last capture"
            )
        rules = state.rules
        if rules.no_capture_limit and state.quiet > 2 * rules.no_capture_limit:
            problems.append(
                f"{state.quiet} moves without capture: the game ended at "
                f"{2 * rules.no_capture_limit} (no_capture_limit)"
            )
        if rules.repetition_draw:
            seen: Counter[int] = Counter()
            for key in state.history[:-1]:
                seen[key] += 1
                if seen[key] >= rules.repetition_draw:
                    problems.append(
                        "a position occurred repetition_draw times before the current one: "
                        "the game ended then"
                    )
                    break
        return problems

    def pieces(self, state: BattleState) -> list[PieceView]:
        """Every piece, the Citadel and the Wagon included; tags "exposed" and "commanded"."""
        board = state.board
        flagged = exposed(board, ATTACKER, state.rules) | exposed(board, DEFENDER, state.rules)
        citadel = board.find(CITADEL_BYTE)
        if citadel >= 0 and _commanders(board, citadel, ATTACKER, state):
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
        return _description()

    # -- events --------------------------------------------------------------------------

    def _events(self, before: BattleState, move: Move, after: BattleState) -> list[Event]:
        board, now = before.board, after.board
        origin, destination = move
        side = SIDE_IDS[before.side]
        piece, target = board[origin], board[destination]
        mover = describe_piece(piece)
        mover = mover[0].upper() + mover[1:]
        cells = (NAMES[origin], NAMES[destination])
        events = []
        if target:
            events.append(
                Event(
                    EventKind.CAPTURED,
                    f"{mover} {NAMES[origin]}x{NAMES[destination]} takes "
                    f"{describe_piece(target, 'the')} on {NAMES[destination]}.",
                    side=side,
                    cells=cells,
                    piece=KIND_IDS[kind_of(target)],
                )
            )
        else:
            events.append(
                Event(
                    EventKind.MOVED,
                    f"{mover} moves from {NAMES[origin]} to {NAMES[destination]}.",
                    side=side,
                    cells=cells,
                    piece=KIND_IDS[kind_of(piece)],
                )
            )
        for cell in range(SQUARES):
            if board[cell] and not now[cell] and cell != origin:
                lost = board[cell]
                events.append(
                    Event(
                        EventKind.CAPTURED,
                        f"The {SIDE_IDS[side_of(lost)]}'s {KIND_NAMES[kind_of(lost)]} on "
                        f"{NAMES[cell]}, left exposed to enemy Artillery, is lost "
                        f"(forced_reply=lose_figure).",
                        side=side,
                        cells=(NAMES[cell],),
                        piece=KIND_IDS[kind_of(lost)],
                    )
                )
        rules = before.rules
        for owner in (ATTACKER, DEFENDER):
            was = exposed(board, owner, rules)
            if owner == before.side and origin in was:
                was = (was - {origin}) | {destination}
            for cell in sorted(exposed(now, owner, rules) - was):
                guns = _commanders(now, cell, 1 - owner, before)
                events.append(
                    Event(
                        EventKind.EXPOSED,
                        f"The {SIDE_IDS[owner]}'s {KIND_NAMES[kind_of(now[cell])]} on "
                        f"{NAMES[cell]} is exposed to the {SIDE_IDS[1 - owner]}'s Artillery on "
                        f"{', '.join(NAMES[g] for g in guns)}.",
                        side=SIDE_IDS[owner],
                        cells=(NAMES[cell], *(NAMES[g] for g in guns)),
                        piece=KIND_IDS[kind_of(now[cell])],
                    )
                )
        citadel = now.find(CITADEL_BYTE)
        if citadel >= 0:
            guns = _commanders(now, citadel, ATTACKER, before)
            if guns and not _commanders(board, citadel, ATTACKER, before):
                events.append(
                    Event(
                        EventKind.CITADEL_COMMANDED,
                        f"Attacking Artillery on {', '.join(NAMES[g] for g in guns)} commands the "
                        f"Citadel on {NAMES[citadel]}: the defender must take or drive it off "
                        f"before moving otherwise.",
                        side="attacker",
                        cells=(NAMES[citadel], *(NAMES[g] for g in guns)),
                        piece="citadel",
                    )
                )
        ended = self.outcome(after)
        if ended is not None:
            events.append(Event(EventKind.GAME_OVER, ended.message, side=ended.winner))
        return events
