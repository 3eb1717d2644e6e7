"""Legal actions (section 11's `legal_moves`), and the endings that stop them.

The generator lists each man's moves, the Troops' jump chains, then applies the
compulsory capture (7.1), and adds placements and passes where they are allowed. A
finished game has no legal actions (section 11).

A request usually asks several questions about one position (what is legal, is this
action legal, what does this text mean), so `legal_in` remembers the answer for the last
few hundred positions; states are immutable and hashable, which makes them safe keys.
The unremembered `legal_actions` serves perft and search.
"""

from __future__ import annotations

from engine_service.memo import memo
from engine_service.rules.draws import repeated
from engine_service.rules.war.actions import HUFF, PASS_ACTION, PLACE, Action
from engine_service.rules.war.board import BEHIND
from engine_service.rules.war.compulsion import exposed_by_chains, keep_compulsory, longest_only
from engine_service.rules.war.flying_machines import may_place, placements, with_machine
from engine_service.rules.war.men import man_moves
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import FLYING_MACHINE, KING, SIDE_SPAN, TROOP_MOVED
from engine_service.rules.war.state import Turn, WarState
from engine_service.rules.war.troops import has_jump, jump_chains, troop_moves


def piece_moves(turn: Turn) -> tuple[list[Action], list[Action]]:
    """Every move of the side's men, before compulsion: (steps/slides/displacements, chains)."""
    rules, board, side, _ = turn
    moves: list[Action] = []
    chains: list[Action] = []
    base = 1 + SIDE_SPAN * side
    for cell, piece in enumerate(board):
        kind = piece - base
        if kind < 0 or kind >= FLYING_MACHINE:
            continue  # empty, enemy, or a placed Flying Machine (never moves, 8.3)
        if kind <= TROOP_MOVED:
            troop_moves(turn, cell, moves)
            if has_jump(rules, board, side, cell):
                chains += jump_chains(rules, board, side, cell)
        else:
            man_moves(turn, cell, kind, moves)
    no_landing = rules.no_landing[side]
    if no_landing >= 0:
        # A22 = false: no man but the King may end a move on his own Citadel.
        king = base + KING
        moves = [m for m in moves if m[-1] != no_landing or board[m[0]] == king]
    return moves, chains


def turn_actions(turn: Turn, reserves: tuple[int, int], move: int) -> list[Action]:
    """Every legal action of the side on the board, without huffs (section 11)."""
    rules, board, side, ep = turn
    moves, chains = piece_moves(turn)
    if chains:
        exposed_men = exposed_by_chains(chains)
        if rules.longest_jump:
            chains = longest_only(chains)
        if not rules.huff:
            # 7.1 / 8.7: a member of J must be taken; no placement, no pass.
            return keep_compulsory(turn, moves, chains, exposed_men)
    actions = moves + chains
    if rules.passing:
        actions.append(PASS_ACTION)
    if may_place(rules, reserves, side, move):
        if rules.placement_uses_turn:
            actions += placements(rules, board)
        else:
            actions += _place_then_move(rules, board, side, ep)
    return actions


def _place_then_move(rules: WarRules, board: bytes, side: int, ep: int) -> list[Action]:
    """placement_uses_turn = false: each placement followed by each move it leaves."""
    actions: list[Action] = []
    for placement in placements(rules, board):
        cell = placement[1]
        after = with_machine(board, side, cell)
        moves, chains = piece_moves(Turn(rules, after, side, ep))
        if chains and rules.longest_jump:
            chains = longest_only(chains)
        follow = moves + chains
        actions += [(PLACE, cell, *m) for m in follow]
        if not follow or rules.passing:
            actions.append(placement)
    return actions


def is_finished(state: WarState) -> bool:
    """Whether the position ends the game by Citadel, repetition or no progress.

    (A side without a legal action is the other ending; `outcome` decides it.)
    """
    rules = state.rules
    side = state.side
    occupier = state.board[rules.citadels[1 - side]]
    if occupier and (occupier - 1) >> 3 == side:
        return True  # section 9: the side to move held the enemy Citadel through the reply
    if repeated(state.history, rules.repetition):
        return True
    return bool(rules.quiet_limit) and state.quiet >= rules.quiet_limit


def legal_actions(state: WarState) -> list[Action]:
    """Every legal action in `state`; empty once the game is over."""
    if is_finished(state):
        return []
    return all_actions(state)


@memo(512)
def legal_in(state: WarState) -> tuple[tuple[Action, ...], frozenset[Action]]:
    """The legal actions of a position, as a tuple (in order) and as a set (remembered)."""
    actions = tuple(legal_actions(state))
    return actions, frozenset(actions)


def all_actions(state: WarState) -> list[Action]:
    """The actions the rules of movement allow, ignoring whether the game has ended."""
    rules, board, side = state.rules, state.board, state.side
    actions = turn_actions(Turn(rules, board, side, state.ep), state.reserves, state.move)
    for cell in state.huffable:
        # compulsion = huff: remove an offender first, then act in the position left.
        after = board[:cell] + b"\x00" + board[cell + 1 :]
        ep = state.ep if state.ep < 0 or BEHIND[side][state.ep] != cell else -1
        actions += [
            (HUFF, cell, *a)
            for a in turn_actions(Turn(rules, after, side, ep), state.reserves, state.move)
        ]
    return actions


def has_move(turn: Turn) -> bool:
    """Whether `piece_moves(turn)` finds a move or a jump chain, stopping at the first
    (a move onto the side's own Citadel counts only for the King, as A22 filters it)."""
    rules, board, side, _ = turn
    base = 1 + SIDE_SPAN * side
    no_landing = rules.no_landing[side]
    king = base + KING
    found: list[Action] = []
    for cell, piece in enumerate(board):
        kind = piece - base
        if kind < 0 or kind >= FLYING_MACHINE:
            continue
        if kind <= TROOP_MOVED:
            if has_jump(rules, board, side, cell):
                return True
            troop_moves(turn, cell, found)
        else:
            man_moves(turn, cell, kind, found)
        if any(m[-1] != no_landing or piece == king for m in found):
            return True
        found.clear()
    return False


def _side_can_act(turn: Turn, reserves: tuple[int, int], move: int) -> bool:
    """Whether `turn_actions` would list anything, stopping at the first action found."""
    rules, board, side, _ = turn
    if rules.passing:
        return True  # a pass, or (7.1 forbidding it) a compulsory capture
    if may_place(rules, reserves, side, move) and any(
        not board[cell] for cell in rules.placement_cells
    ):
        return True  # a placement, or (7.1 forbidding it) a compulsory capture
    return has_move(turn)


def has_legal_action(state: WarState) -> bool:
    """`bool(all_actions(state))`, without listing every action."""
    rules, board, side = state.rules, state.board, state.side
    if _side_can_act(Turn(rules, board, side, state.ep), state.reserves, state.move):
        return True
    return bool(state.huffable) and bool(all_actions(state))
