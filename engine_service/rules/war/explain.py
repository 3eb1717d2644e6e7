"""Why an action is illegal: a `RuleError` whose message names the rule broken, in words.

Only called for actions that are not among the legal ones, so it can afford to look
closely: it replays the reasoning of the move generator step by step and stops at the
first rule the action breaks. The error carries the rule's section (`rule`) and what the
man concerned may do instead (`legal`) beside the message.
"""

from __future__ import annotations

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.war.actions import Action, ActionParts, split_action
from engine_service.rules.war.board import (
    BEHIND,
    FINAL_RANK,
    FORWARD,
    FORWARD2,
    FORWARD_DIAGONAL_STEPS,
    HORSE_LEAPS,
    HORSE_LEAPS_OVER,
    JUMPED,
    KING_STEPS,
    NAMES,
    rank_of,
    relative_rank,
)
from engine_service.rules.war.compulsion import (
    allowed_victims,
    exposed_by_chains,
    victim_of,
)
from engine_service.rules.war.flying_machines import with_machine
from engine_service.rules.war.legal import legal_in, piece_moves
from engine_service.rules.war.men import SLIDER_RAYS
from engine_service.rules.war.notation import format_action_text
from engine_service.rules.war.options import WarRules
from engine_service.rules.war.pieces import (
    CANNON,
    FLYING_MACHINE,
    GENERAL,
    HORSE,
    KIND_NAMES,
    KING,
    MORTAR,
    SIDE_NAMES,
    TROOP,
    TROOP_MOVED,
    describe_man,
    kind_of,
    side_of,
)
from engine_service.rules.war.state import Turn, WarState
from engine_service.rules.war.troops import REAR_RANK
from wargame.runtime.quoting import quoted

_SLIDER_WAYS = {
    GENERAL: "a General moves any distance along a rank, file or diagonal",
    MORTAR: "a Mortar moves any distance along a rank or file",
    CANNON: "a Cannon moves any distance along a diagonal",
}


def _listing(state: WarState, actions: list[Action]) -> tuple[str, ...]:
    return tuple(format_action_text(state, a) for a in actions)


def _error(
    state: WarState, parts: ActionParts, reason: Reason, message: str, rule: str = ""
) -> RuleError:
    """The refusal, with what is legal instead: the moves of the man concerned, or else
    every action (the message then says that man has none)."""
    legal = list(legal_in(state)[0])
    if parts.origin is not None:
        mine = [a for a in legal if split_action(a).origin == parts.origin]
        if mine:
            return RuleError(reason, message, rule=rule, alternatives=_listing(state, mine))
        piece = state.board[parts.origin]
        if piece:
            what = f"the {describe_man(piece)} on {NAMES[parts.origin]}"
            message += f"; {what} has no legal move"
    return RuleError(reason, message, rule=rule, alternatives=_listing(state, legal))


def _compulsion(state: WarState, board: bytes, chains: list[Action]) -> RuleError:
    side = state.side
    men = sorted(allowed_victims(state.rules, board, side, exposed_by_chains(chains)))
    return RuleError(
        Reason.CAPTURE_COMPULSORY,
        f"{SIDE_NAMES[side]} must capture an exposed {SIDE_NAMES[1 - side]} man "
        f"({', '.join(NAMES[c] for c in men)}) by any piece or method",
        rule="7.1",
        alternatives=_listing(state, list(legal_in(state)[0])),
    )


def explain_text(state: WarState, text: str, action: Action) -> RuleError:
    """The error for `text`, read as `action`, when that is no legal action in `state`."""
    if not legal_in(state)[0]:
        return RuleError(Reason.GAME_OVER, f"{quoted(text)}: the game is over; no action is legal")
    try:
        split_action(action)
    except ValueError as error:
        return RuleError(Reason.NOTATION_INVALID, f"{quoted(text)}: {error}")
    problem = explain(state, action)
    problem.message = f"{quoted(text)}: {problem.message}"
    problem.args = (problem.message,)
    return problem


def explain(state: WarState, action: Action) -> RuleError:
    """The error for an action that is not legal in `state` (which is not over)."""
    rules, side = state.rules, state.side
    try:
        parts = split_action(action)
    except ValueError as error:
        return RuleError(Reason.ILLEGAL_ACTION, f"malformed action {action!r}: {error}")
    board, ep = state.board, state.ep
    if parts.huff is not None:
        if not rules.huff:
            return _error(
                state,
                parts,
                Reason.ILLEGAL_ACTION,
                "huffing belongs to compulsion = huff; this game uses compulsion = legality",
            )
        if parts.huff not in state.huffable:
            may = ", ".join(NAMES[c] for c in state.huffable) or "nothing"
            return _error(
                state,
                parts,
                Reason.ILLEGAL_ACTION,
                f"no Troop on {NAMES[parts.huff]} may be huffed now (huffable: {may})",
            )
        cell = parts.huff
        board = board[:cell] + b"\x00" + board[cell + 1 :]
        if ep >= 0 and BEHIND[side][ep] == cell:
            ep = -1
    moves, chains = piece_moves(Turn(rules, board, side, ep))
    compulsory = bool(chains) and not rules.huff
    if parts.place is not None:
        problem = _placement_problem(state, board, parts)
        if problem is not None:
            return problem
        if compulsory:
            return _compulsion(state, board, chains)
        if rules.placement_uses_turn and (parts.origin is not None or parts.passes):
            return _error(
                state,
                parts,
                Reason.ILLEGAL_ACTION,
                "placing a Flying Machine is the whole turn (placement_uses_turn = true)",
            )
        board = with_machine(board, side, parts.place)
        moves, chains = piece_moves(Turn(rules, board, side, ep))
    if parts.passes:
        if not rules.passing:
            return _error(
                state, parts, Reason.PASSING_NOT_ALLOWED, "passing is not allowed", rule="4"
            )
        if compulsory:
            return _compulsion(state, board, chains)
        return _error(state, parts, Reason.ILLEGAL_ACTION, "this pass is not legal here")
    if parts.origin is None:
        return _error(
            state,
            parts,
            Reason.ILLEGAL_ACTION,
            "after placing a Flying Machine the turn goes on with a move "
            "(placement_uses_turn = false), e.g. F@e5 d2-d4",
        )
    return _explain_move(
        state,
        Turn(rules, board, side, ep),
        parts,
        moves=moves,
        chains=chains,
        compulsory=compulsory,
    )


def _placement_problem(state: WarState, board: bytes, parts: ActionParts) -> RuleError | None:
    rules, side = state.rules, state.side
    cell = parts.place
    assert cell is not None
    if state.reserves[side] == 0:
        return _error(
            state,
            parts,
            Reason.NO_FLYING_MACHINE_LEFT,
            f"{SIDE_NAMES[side]} has no Flying Machine left in reserve",
            rule="8.3",
        )
    if not rules.placement_first_turn and state.move == 1:
        return _error(
            state,
            parts,
            Reason.PLACEMENT_FORBIDDEN,
            "no Flying Machine may be placed on a side's first turn (placement_first_turn = false)",
        )
    if cell in rules.citadels:
        south, north = (NAMES[c] for c in rules.citadels)
        return _error(
            state,
            parts,
            Reason.PLACEMENT_FORBIDDEN,
            f"a Flying Machine is never placed on a Citadel ({south} and {north})",
            rule="8.2",
        )
    if board[cell]:
        return _error(
            state,
            parts,
            Reason.PLACEMENT_FORBIDDEN,
            f"{NAMES[cell]} is occupied by the {describe_man(board[cell])}: a Flying Machine "
            "goes on an empty square",
            rule="8.2",
        )
    return None


def _explain_move(
    state: WarState,
    turn: Turn,
    parts: ActionParts,
    *,
    moves: list[Action],
    chains: list[Action],
    compulsory: bool,
) -> RuleError:
    rules, board, side, ep = turn
    origin = parts.origin
    assert origin is not None
    move = (origin, *parts.path)
    at = NAMES[origin]
    piece = board[origin]
    if not piece:
        return _error(state, parts, Reason.NO_PIECE, f"there is no man on {at}")
    if side_of(piece) != side:
        return _error(
            state,
            parts,
            Reason.NO_PIECE,
            f"the {describe_man(piece)} on {at} is not {SIDE_NAMES[side]}'s; "
            f"{SIDE_NAMES[side]} is to move",
        )
    kind = kind_of(piece)
    if kind == FLYING_MACHINE:
        return _error(
            state, parts, Reason.PIECE_IMMOBILE, "a placed Flying Machine never moves", rule="8.3"
        )
    is_troop = kind <= TROOP_MOVED
    if is_troop and FORWARD[side][origin] < 0:
        return _error(
            state,
            parts,
            Reason.PIECE_IMMOBILE,
            f"the Troop on {at} has reached its final rank and stays there for good",
            rule="7.8",
        )
    if move in moves or move in chains:
        if compulsory:
            allowed = allowed_victims(rules, board, side, exposed_by_chains(chains))
            if move in moves and victim_of(board, side, ep, move) not in allowed:
                return _compulsion(state, board, chains)
        if move in chains and rules.longest_jump:
            most = max(len(c) for c in chains) - 1
            return _error(
                state,
                parts,
                Reason.ILLEGAL_ACTION,
                f"a jump chain must capture as many men as the longest available ({most}; "
                "longest_jump_required = true)",
            )
        return _error(state, parts, Reason.ILLEGAL_ACTION, "this move is not legal here")
    longer = [c for c in chains if c[: len(move)] == move and len(c) > len(move)]
    if longer:
        return RuleError(
            Reason.JUMP_CHAIN_INCOMPLETE,
            f"the Troop on {at} must continue its jump chain",
            rule="7.5",
            alternatives=_listing(state, longer),
        )
    if len(move) > 2:
        what = "no jump chain of this Troop goes that way" if is_troop else "only a Troop's "
        if not is_troop:
            what += "jump chain has several landing squares"
        return _error(state, parts, Reason.ILLEGAL_MOVE_GEOMETRY, what)
    to = move[1]
    target = board[to]
    name = describe_man(piece)
    if target and side_of(target) == side:
        return _error(
            state,
            parts,
            Reason.DESTINATION_OCCUPIED,
            f"{NAMES[to]} is occupied by {SIDE_NAMES[side]}'s own {KIND_NAMES[kind_of(target)]}",
        )
    problem = (
        _troop_problem(turn, origin, to)
        if is_troop
        else _man_problem(rules, board, origin, to, kind)
    )
    if problem is not None:
        reason, message, rule = problem
        return _error(
            state, parts, reason, f"the {name} on {at} cannot go to {NAMES[to]}: {message}", rule
        )
    if target and not rules.capture[side][(to << 5) | target]:
        if kind_of(target) == FLYING_MACHINE:
            why, rule = "a placed Flying Machine cannot be captured", "A5"
        else:
            why = (
                f"the {describe_man(target)} on {NAMES[to]} stands on its final rank and "
                "cannot be captured there"
            )
            rule = "7.8"
        return _error(state, parts, Reason.TARGET_NOT_CAPTURABLE, why, rule)
    if to == rules.no_landing[side] and kind != KING:
        return _error(
            state,
            parts,
            Reason.ILLEGAL_ACTION,
            f"only the King may stand on {SIDE_NAMES[side]}'s own Citadel {NAMES[to]} "
            "(own_men_on_own_citadel = false)",
        )
    return _error(state, parts, Reason.ILLEGAL_ACTION, f"{name} {at} cannot go to {NAMES[to]}")


def _is_machine(piece: int) -> bool:
    return piece != 0 and kind_of(piece) == FLYING_MACHINE


Problem = tuple[Reason, str, str]  # the reason, the rule in words, its section


def _man_problem(rules: WarRules, board: bytes, origin: int, to: int, kind: int) -> Problem | None:
    if kind == KING:
        if to not in KING_STEPS[origin]:
            return Reason.ILLEGAL_MOVE_GEOMETRY, "a King steps one square in any direction", "6"
        return None
    if kind == HORSE:
        if to not in HORSE_LEAPS[origin]:
            return Reason.ILLEGAL_MOVE_GEOMETRY, "a Horse leaps like a chess knight", "6"
        if not rules.horse_leaps_fm:
            for landing, over1, over2 in HORSE_LEAPS_OVER[origin]:
                if landing == to and (_is_machine(board[over1]) or _is_machine(board[over2])):
                    return (
                        Reason.PATH_BLOCKED,
                        "a Flying Machine lies under the leap (horse_leaps_flying_machine = false)",
                        "6",
                    )
        return None
    for ray in SLIDER_RAYS[kind][origin]:
        if to in ray:
            for cell in ray[: ray.index(to)]:
                piece = board[cell]
                if piece and not rules.passable[piece]:
                    return Reason.PATH_BLOCKED, f"the way is blocked at {NAMES[cell]}", "6"
            return None
    return Reason.ILLEGAL_MOVE_GEOMETRY, _SLIDER_WAYS[kind], "6"


def _troop_problem(turn: Turn, origin: int, to: int) -> Problem | None:
    rules, board, side, ep = turn
    piece = board[origin]
    ahead = FORWARD[side][origin]
    target = board[to]
    if to == ahead:
        if target:
            return Reason.DESTINATION_OCCUPIED, "a Troop steps forward only to an empty square", "7"
        return None
    if to == FORWARD2[side][origin]:
        if kind_of(piece) != TROOP:
            return (
                Reason.ILLEGAL_MOVE_GEOMETRY,
                "only a Troop that has never moved double-steps",
                "7.2",
            )
        if rules.rear_only_double_step and relative_rank(side, origin) != REAR_RANK:
            return (
                Reason.ILLEGAL_MOVE_GEOMETRY,
                "only Rear Troops double-step (double_step = rear_troops_only)",
                "7.2",
            )
        if target or (board[ahead] and not rules.passable[board[ahead]]):
            return Reason.PATH_BLOCKED, "a double step needs both squares empty", "7.2"
        return None
    if to in FORWARD_DIAGONAL_STEPS[side][origin]:
        if not target and to != ep:
            if rules.en_passant:
                return (
                    Reason.ILLEGAL_MOVE_GEOMETRY,
                    "a Troop moves diagonally only to capture",
                    "7.3",
                )
            return (
                Reason.ILLEGAL_MOVE_GEOMETRY,
                "a Troop moves diagonally only to capture; there is no en passant",
                "7.3, 7.7",
            )
        return None
    over = JUMPED[origin * 100 + to]
    if over >= 0:
        backward = (rank_of(to) - rank_of(origin)) * (1 if FINAL_RANK[side] else -1) < 0
        if backward and not rules.backward_jumps:
            return Reason.ILLEGAL_MOVE_GEOMETRY, "Troops jump only diagonally forward", "7.6"
        if not rules.jumpable[side][(over << 5) | board[over]]:
            return (
                Reason.ILLEGAL_MOVE_GEOMETRY,
                f"a Troop jumps only over an enemy Troop; {NAMES[over]} holds "
                + (f"the {describe_man(board[over])}" if board[over] else "nothing"),
                "7.4",
            )
        if target:
            return Reason.DESTINATION_OCCUPIED, "a jump lands on an empty square", "7.4"
        return None
    return (
        Reason.ILLEGAL_MOVE_GEOMETRY,
        "a Troop steps forward, double-steps on its first move, captures diagonally forward "
        "or jumps an enemy Troop diagonally forward",
        "7",
    )
