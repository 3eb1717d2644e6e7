"""`check_state`: every way a position could not have arisen in play, all reported at once.

Like python-chess's `Board.status()`, the checks do not stop at the first problem. They
cover the armies (section 1), the Flying Machines (8), the Troops' "has moved" flags and
ranks (7, 11), the Citadels (9), and the bookkeeping of the options (huff, en passant,
repetition, no progress). A King may be missing: he is not royal and can be captured (5).
"""

from __future__ import annotations

from collections import Counter

from engine_service.rules.war.board import BEHIND, CELLS, NAMES, relative_rank
from engine_service.rules.war.pieces import (
    ARMY,
    FLYING_MACHINE,
    FLYING_MACHINES_PER_SIDE,
    KIND_IDS,
    KING,
    SIDE_NAMES,
    SIDE_SPAN,
    TROOP,
    TROOP_MOVED,
    cells_holding,
    kind_of,
    side_of,
)
from engine_service.rules.war.state import WarState, position_key


def check_state(state: WarState, *, keyed: bool = False) -> list[str]:
    """Every inconsistency of `state`; empty when it could arise in play.

    `keyed`: the caller made the history end with the key of the state's own board, side,
    reserves and huff rights (reading a setup string), so it is not worked out again.
    """
    problems: list[str] = []
    board = state.board
    if not isinstance(board, bytes) or len(board) != CELLS:
        return [f"the board must be {CELLS} bytes"]
    if max(board) > 2 * SIDE_SPAN:
        bad = [NAMES[c] for c, piece in enumerate(board) if piece > 2 * SIDE_SPAN]
        return [f"unknown piece codes on {', '.join(bad)}"]
    if state.side not in (0, 1):
        problems.append(f"side to move {state.side!r} is neither 0 (South) nor 1 (North)")
        return problems
    rules = state.rules
    _check_armies(state, problems)
    _check_troops(state, problems)
    _check_citadels(state, problems)
    _check_huff(state, problems)
    _check_en_passant(state, problems)
    if state.quiet < 0:
        problems.append("the no-progress count is negative")
    if state.move < 1:
        problems.append("the turn number counts from 1")
    if rules.quiet_limit and state.quiet > rules.quiet_limit:
        problems.append(
            f"{state.quiet} plies without progress: the game ended at {rules.quiet_limit}"
        )
    _check_history(state, problems, keyed)
    return problems


_LIMITS = tuple((kind, ARMY[KIND_IDS[kind]]) for kind in range(SIDE_SPAN) if KIND_IDS[kind] in ARMY)


def _check_armies(state: WarState, problems: list[str]) -> None:
    counts = Counter(state.board)
    for side in (0, 1):
        name = SIDE_NAMES[side]
        base = 1 + SIDE_SPAN * side
        troops = counts[base + TROOP] + counts[base + TROOP_MOVED]
        if troops > ARMY["troop"]:
            problems.append(f"{name} has {troops} troops; an army has {ARMY['troop']}")
        for kind, most in _LIMITS:
            count = counts[base + kind]
            if kind > TROOP_MOVED and count > most:
                problems.append(f"{name} has {count} {KIND_IDS[kind]}s; an army has {most}")
        reserve = state.reserves[side] if len(state.reserves) == 2 else -1
        if not 0 <= reserve <= FLYING_MACHINES_PER_SIDE:
            problems.append(f"{name}'s reserve of {reserve} Flying Machines is outside 0..2")
            continue
        machines = counts[base + FLYING_MACHINE] + reserve
        if machines > FLYING_MACHINES_PER_SIDE:
            problems.append(
                f"{name} has {machines} Flying Machines (placed and in reserve); "
                f"a side has {FLYING_MACHINES_PER_SIDE}"
            )


# Cells of each side's Troop ranks (relative ranks 2 and 3) and back rank, as slices.
_TROOP_ROWS = (slice(10, 30), slice(70, 90))
_BACK_ROW = (slice(0, 10), slice(90, 100))


def _check_troops(state: WarState, problems: list[str]) -> None:
    board = state.board
    backward = state.rules.backward_jumps
    for side in (0, 1):
        unmoved = 1 + SIDE_SPAN * side + TROOP
        moved = unmoved + TROOP_MOVED - TROOP
        misplaced = board.count(unmoved) != board[_TROOP_ROWS[side]].count(unmoved)
        back = board[_BACK_ROW[side]]
        homesick = not backward and (back.count(unmoved) or back.count(moved))
        if not misplaced and not homesick:
            continue  # the common case, decided without a loop
        for piece in (unmoved, moved):
            for cell in cells_holding(board, piece):
                rank = relative_rank(side, cell)
                if piece == unmoved and cell not in state.rules.troop_starts[side]:
                    problems.append(
                        f"the {SIDE_NAMES[side]} Troop on {NAMES[cell]} is marked as not moved "
                        "but stands where no Troop of its side starts (its ranks 2 and 3, or "
                        "the squares of initial_position)"
                    )
                if rank == 1 and not backward:
                    problems.append(
                        f"a {SIDE_NAMES[side]} Troop stands on its own back rank "
                        f"({NAMES[cell]}); Troops only move forward"
                    )


def _check_citadels(state: WarState, problems: list[str]) -> None:
    rules = state.rules
    citadels = rules.citadels
    if len(citadels) != 2 or citadels[0] == citadels[1]:
        problems.append("the two Citadels must be two different squares")
        return
    for side, citadel in enumerate(citadels):
        if not 0 <= citadel < CELLS:
            problems.append(f"{SIDE_NAMES[side]}'s Citadel is off the board")
            continue
        piece = state.board[citadel]
        if piece and kind_of(piece) == FLYING_MACHINE:
            problems.append(f"a Flying Machine stands on a Citadel ({NAMES[citadel]})")
        elif (
            piece
            and rules.no_landing[side] >= 0
            and side_of(piece) == side
            and kind_of(piece) != KING
        ):
            problems.append(
                f"a {SIDE_NAMES[side]} man other than the King stands on {SIDE_NAMES[side]}'s "
                f"own Citadel {NAMES[citadel]} (own_men_on_own_citadel = false)"
            )


def _check_huff(state: WarState, problems: list[str]) -> None:
    if not state.huffable:
        return
    if not state.rules.huff:
        problems.append("huffable Troops exist only with compulsion = huff")
        return
    offender_side = 1 - state.side
    for cell in state.huffable:
        piece = state.board[cell] if 0 <= cell < CELLS else 0
        if not piece or kind_of(piece) > TROOP_MOVED or side_of(piece) != offender_side:
            where = NAMES[cell] if 0 <= cell < CELLS else str(cell)
            problems.append(
                f"the huffable square {where} holds no {SIDE_NAMES[offender_side]} Troop"
            )


def _check_en_passant(state: WarState, problems: list[str]) -> None:
    ep = state.ep
    if ep < 0:
        return
    if not state.rules.en_passant:
        problems.append("an en-passant square exists only with en_passant = displacement_only")
        return
    if ep >= CELLS:
        problems.append("the en-passant square is off the board")
        return
    mover = 1 - state.side
    passed = BEHIND[state.side][ep]
    piece = state.board[passed] if passed >= 0 else 0
    if (
        state.board[ep]
        or relative_rank(mover, ep) not in (3, 4)
        or not piece
        or side_of(piece) != mover
        or kind_of(piece) != TROOP_MOVED
    ):
        problems.append(
            f"{NAMES[ep]} is no square a {SIDE_NAMES[mover]} Troop has just passed by a double step"
        )


def _check_history(state: WarState, problems: list[str], keyed: bool) -> None:
    history = state.history
    if not history:
        problems.append("the position history is empty (it ends with the current position)")
        return
    keyable = all(0 <= n <= FLYING_MACHINES_PER_SIDE for n in state.reserves) and all(
        0 <= cell < CELLS for cell in state.huffable
    )
    if (
        not keyed
        and keyable
        and history[-1] != position_key(state.board, state.side, state.reserves, state.huffable)
    ):
        problems.append("the position history does not end with this position's key")
    rules = state.rules
    if not rules.repetition and len(history) != 1:
        problems.append("with repetition_draw off the history holds only the current key")
    if len(history) > state.quiet + 1:
        problems.append(
            f"the history holds {len(history)} positions but only {state.quiet} plies "
            "passed since the last irreversible action"
        )
    if rules.repetition and history.count(history[-1]) > rules.repetition:
        problems.append("the position occurred more often than the repetition draw allows")
