"""Small helpers for the Game of Battle tests: positions from set-up text, moves by notation.

Positions of the plates often lack the Citadel, the Wagon or a side's figures, so the game
would be over at once (9.1, 9.2); the rules of movement and of the artillery are then
tested on the position itself with `legal.analyse`, which is what `legal_actions` runs.
"""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind
from engine_service.rules.battle import BattleRuleset, BattleState, Move
from engine_service.rules.battle.actions import move_of
from engine_service.rules.battle.artillery import exposed
from engine_service.rules.battle.board import cell_of
from engine_service.rules.battle.legal import Analysis, Context, Verdict, analyse
from engine_service.rules.battle.movement import piece_moves
from engine_service.rules.battle.pieces import SIDE_IDS
from engine_service.rules.battle.play import play as play_move

RULES = BattleRuleset()


def position(text: str, **options: str) -> BattleState:
    """A state from set-up text, with options given as keyword strings."""
    return RULES.new_game(RULES.resolve_options(options), text)


def captured(side: str, move: str, taken: str, text: str) -> Event:
    """The CAPTURED event `side`'s capture `move` ("45x52") reports: its sentence `text`,
    the move's two squares and the kind of piece `taken`."""
    return Event(EventKind.CAPTURED, text, side=side, cells=tuple(move.split("x")), piece=taken)


def sq(number: int) -> int:
    """The cell index of a square number."""
    return cell_of(str(number))


def mv(text: str) -> Move:
    """A Move from 'a-b' or 'axb' (no checks)."""
    a, b = text.replace("x", "-").split("-")
    return move_of(sq(int(a)), sq(int(b)))


def analysis(state: BattleState) -> Analysis:
    """Section 10 on the position, whatever the end-of-game rules say about it."""
    return analyse(state.board, state.side, state.rules)


def legal(state: BattleState) -> set[str]:
    """The legal moves of the side to move, in notation."""
    return {RULES.format_action(state, m) for m in analysis(state).legal}


def is_legal(state: BattleState, text: str) -> bool:
    """Whether the move `text` is legal for the side to move."""
    return mv(text) in analysis(state).legal_set


def passes_artillery_tests(state: BattleState, text: str) -> bool:
    """Whether a geometric move passes the per-move tests of 6 (A.1, A.2, Wagon cover)."""
    move = mv(text)
    ctx = Context(state.board, state.side, state.rules)
    return ctx.is_quiet(move) or ctx.evaluate(move)[0] is Verdict.LEGAL


def is_geometric(state: BattleState, text: str) -> bool:
    """Whether `text` is a move of the piece's pattern with a clear path (before section 6)."""
    move = mv(text)
    return move in piece_moves(state.board, move.origin)


def destinations(state: BattleState, square: int) -> set[int]:
    """The squares the piece on `square` reaches by its pattern (moves and captures)."""
    return {m.destination + 1 for m in piece_moves(state.board, sq(square))}


def play(state: BattleState, *moves: str) -> BattleState:
    """Play legal moves (each checked against section 10) and return the position after."""
    for text in moves:
        assert is_legal(state, text), f"{text} should be legal in {RULES.setup_text(state)}"
        state = play_move(state, mv(text))
    return state


def exposed_squares(state: BattleState, side: str) -> set[int]:
    """Square numbers of `side`'s exposed figures and Wagon."""
    return {cell + 1 for cell in exposed(state.board, SIDE_IDS.index(side), state.rules)}


def moved_pieces(state: BattleState) -> set[int]:
    """The origin squares of the legal moves (which pieces may move)."""
    return {m.origin + 1 for m in analysis(state).legal}
