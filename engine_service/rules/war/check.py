"""Is this one action legal? Decided by the action's own rule path, without listing all.

`legal.py` lists every legal action of a position; validating one action by looking it up
there costs the whole list. `is_legal` follows only the rules the action itself invokes:
the moves of the one man that moves (section 6, 7), the jump chains of that Troop (7.4-7.9),
whether any Troop of the side could jump (J, for the compulsory capture of 7.1), the
placement's square and reserve (8), a pass (4) and a huff (A13). It answers exactly what
`action in legal_in(state)[1]` answers, for any tuple of integers: the generator stays the
reference, and `tests/engine_service/rules/war/test_check.py` compares the two on every
position the conformance playouts reach.

Why an action is refused stays `explain.py`'s business (only refusals pay for it).
"""

from __future__ import annotations

from engine_service.rules.war.actions import HUFF, PASS, PLACE, Action
from engine_service.rules.war.board import BEHIND, CELLS
from engine_service.rules.war.compulsion import allowed_victims, exposed, victim_of
from engine_service.rules.war.flying_machines import may_place, with_machine
from engine_service.rules.war.legal import has_move, is_finished
from engine_service.rules.war.men import man_moves
from engine_service.rules.war.pieces import FLYING_MACHINE, KING, SIDE_SPAN, TROOP_MOVED
from engine_service.rules.war.state import Turn, WarState
from engine_service.rules.war.troops import has_jump, jump_chains, troop_cells, troop_moves


def is_legal(state: WarState, action: Action) -> bool:
    """Whether `action` is one of the legal actions of `state` (none once the game is over)."""
    return (
        bool(action)
        and all(type(c) is int for c in action)
        and not is_finished(state)
        and allowed(state, action)
    )


def allowed(state: WarState, action: Action) -> bool:
    """Whether the rules of movement allow `action`, ignoring whether the game has ended
    (`action in all_actions(state)`); `action` is a non-empty tuple of integers."""
    rules, board, side, ep = state.rules, state.board, state.side, state.ep
    if action[0] == HUFF:
        # compulsion = huff: remove an offender first, then act in the position left.
        if len(action) < 3 or action[1] not in state.huffable:
            return False
        cell = action[1]
        board = board[:cell] + b"\x00" + board[cell + 1 :]
        if ep >= 0 and BEHIND[side][ep] == cell:
            ep = -1
        action = action[2:]
    return _in_turn(Turn(rules, board, side, ep), state.reserves, state.move, action)


def _in_turn(turn: Turn, reserves: tuple[int, int], move: int, action: Action) -> bool:
    """`action in turn_actions(turn, reserves, move)`."""
    rules, board, side, ep = turn
    head = action[0]
    if head == PASS:
        return len(action) == 1 and rules.passing and (rules.huff or not _may_jump(turn))
    if head == PLACE:
        if len(action) < 2 or not may_place(rules, reserves, side, move):
            return False
        cell = action[1]
        if not 0 <= cell < CELLS or cell in rules.citadels or board[cell]:
            return False  # 8.2: an empty square that is not a Citadel
        if not rules.huff and _may_jump(turn):
            return False  # 7.1: while J is not empty, no placement
        if rules.placement_uses_turn:
            return len(action) == 2
        after = Turn(rules, with_machine(board, side, cell), side, ep)
        if len(action) == 2:  # the placement alone: no move follows, or passing allowed
            return rules.passing or not has_move(after)
        return _in_moves(after, action[2:], compulsory=False)
    return _in_moves(turn, action, compulsory=not rules.huff)


def _may_jump(turn: Turn) -> bool:
    """Whether a Troop of the side to move can make a first jump (J is not empty)."""
    rules, board, side, _ = turn
    return any(has_jump(rules, board, side, cell) for cell in troop_cells(board, side))


def _in_moves(turn: Turn, move: Action, *, compulsory: bool) -> bool:
    """Whether `move` is one of the side's moves or jump chains (`piece_moves`, after A14),
    and, when `compulsory` (7.1 as legality), one the obligation to capture allows."""
    rules, board, side, ep = turn
    origin = move[0]
    if len(move) < 2 or not 0 <= origin < CELLS:
        return False
    piece = board[origin]
    kind = piece - 1 - SIDE_SPAN * side
    if kind < 0 or kind >= FLYING_MACHINE:
        return False  # empty, enemy, or a placed Flying Machine (never moves, 8.3)
    moves: list[Action] = []
    if kind <= TROOP_MOVED:
        if has_jump(rules, board, side, origin) and move in jump_chains(rules, board, side, origin):
            return not rules.longest_jump or len(move) == _longest_chain(turn)
        troop_moves(turn, origin, moves)
    else:
        man_moves(turn, origin, kind, moves)
    if move not in moves:
        return False
    if move[1] == rules.no_landing[side] and kind != KING:
        return False  # A22 = false: only the King may end a move on his own Citadel
    if compulsory and _may_jump(turn):  # 7.1: the first capture must take a member of J
        men = {man for victims in exposed(rules, board, side).values() for man in victims}
        return victim_of(board, side, ep, move) in allowed_victims(rules, board, side, men)
    return True


def _longest_chain(turn: Turn) -> int:
    """The length of the side's longest jump chain (A14), landings and origin counted."""
    rules, board, side, _ = turn
    return max(
        len(chain)
        for cell in troop_cells(board, side)
        if has_jump(rules, board, side, cell)
        for chain in jump_chains(rules, board, side, cell)
    )
