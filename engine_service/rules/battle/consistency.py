"""`check_state`: every way a position could not have arisen in play, all at once.

The armies of section 3 (kinds, owners, numbers), the side to move, and the bookkeeping of
the draw rules (ruling 19): the position history and the moves without a capture.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.pieces import (
    ARMY,
    ATTACKER,
    CITADEL,
    DEFENDER,
    KIND_NAMES,
    KINDS,
    SIDE_IDS,
    WAGON,
    code,
    kind_of,
    side_of,
)
from engine_service.rules.battle.state import BattleState, position_key


def check_state(state: BattleState) -> list[str]:
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


# How many of each piece code an army may have (section 3); codes not listed: none.
_MOST: Final = {
    code(owner, kind): most for owner, army in ARMY.items() for kind, most in army.items()
}


def composition_problems(board: bytes) -> list[str]:
    """Every way the pieces break section 3 (kinds, sides, numbers); empty if none."""
    present = Counter(board)
    if all(count <= _MOST.get(piece, 0) for piece, count in present.items() if piece):
        return []  # the common case, decided by counting
    problems = []
    counts: dict[tuple[int, int], list[int]] = {}
    for cell, piece in enumerate(board):
        if not piece:
            continue
        owner, kind = side_of(piece), kind_of(piece)
        if owner > DEFENDER or kind not in KINDS:
            problems.append(f"square {NAMES[cell]} holds an unknown piece code {piece}")
            continue
        counts.setdefault((owner, kind), []).append(cell)
    for (owner, kind), cells in sorted(counts.items()):
        allowed = ARMY[owner].get(kind, 0)
        if kind == CITADEL and owner != DEFENDER:
            problems.append(
                f"the Citadel belongs to the defender, not the attacker (square {NAMES[cells[0]]})"
            )
        elif kind == WAGON and owner != ATTACKER:
            problems.append(
                f"the Wagon belongs to the attacker, not the defender (square {NAMES[cells[0]]})"
            )
        elif len(cells) > allowed:
            where = ", ".join(NAMES[c] for c in cells)
            problems.append(
                f"the {SIDE_IDS[owner]} has {len(cells)} {KIND_NAMES[kind]} ({where}); "
                f"an army has {allowed}"
            )
    return problems
