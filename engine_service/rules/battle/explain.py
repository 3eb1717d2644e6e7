"""Why a move is not legal: the first rule it breaks, as a `RuleError` with a sentence.

The checks run in the order a player thinks of them: whose piece, its move pattern
(section 5), the river (2.3, 2.4), the path (2.2), what it may take (5, 7, 8), then the
artillery rules of section 6 and the duties of the turn (A.3, 7, 8). The sentence says the
rule in words; its section goes with the error as `rule`.
"""

from __future__ import annotations

from itertools import pairwise

from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.artillery import batteries, commanders, next_to
from engine_service.rules.battle.board import (
    AT,
    COORDS,
    CROSSINGS,
    DELTAS,
    NAMES,
    RIVER_CELLS,
    SQUARES,
    STEP,
)
from engine_service.rules.battle.legal import Analysis, Context, Duty, Verdict
from engine_service.rules.battle.movement import CAN_CAPTURE, line_between, reach
from engine_service.rules.battle.options import Rules
from engine_service.rules.battle.pieces import (
    ARTILLERY,
    CITADEL,
    KIND_NAMES,
    SIDE_IDS,
    WAGON,
    describe_piece,
    kind_of,
    side_of,
)
from engine_service.rules.errors import Reason, RuleError

PATTERNS = {
    1: "1-3 squares forward or forward-oblique, 1-2 squares in the other five directions",
    2: "1-2 squares in any of the eight directions",
    3: "1-3 squares in any of the eight directions",
    4: "1-3 squares obliquely",
    5: "1-2 squares obliquely",
}


def _sq(cell: int) -> str:
    return NAMES[cell]


def _list(cells: list[int]) -> str:
    names = [_sq(c) for c in cells]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def explain(board: bytes, side: int, rules: Rules, move: Move, analysis: Analysis) -> RuleError:
    """The error naming the rule that forbids `move` (which is not in `analysis.legal`)."""
    origin, destination = move
    for cell in (origin, destination):
        if not 0 <= cell < SQUARES:
            return RuleError(Reason.UNKNOWN_CELL, f"there is no square {cell + 1} (1..{SQUARES})")
    piece = board[origin]
    if not piece:
        return RuleError(Reason.NO_PIECE, f"there is no piece on {_sq(origin)}")
    if side_of(piece) != side:
        return RuleError(
            Reason.NOT_YOUR_TURN,
            f"the {KIND_NAMES[kind_of(piece)]} on {_sq(origin)} belongs to the "
            f"{SIDE_IDS[side_of(piece)]}; the {SIDE_IDS[side]} is to move",
        )
    kind = kind_of(piece)
    name = KIND_NAMES[kind]
    if kind == CITADEL:
        return RuleError(Reason.ILLEGAL_MOVE_GEOMETRY, "the Citadel never moves", rule="7")
    if origin == destination:
        return RuleError(Reason.ILLEGAL_MOVE_GEOMETRY, f"{name} on {_sq(origin)} must move")
    line = line_between(piece, origin, destination)
    if line is None:
        return _geometry_error(piece, origin, destination)
    for square in line[:-1]:
        if board[square]:
            blocker = describe_piece(board[square], "the")
            return RuleError(
                Reason.PATH_BLOCKED,
                f"{name} {_sq(origin)}-{_sq(destination)}: {blocker} on {_sq(square)} "
                f"intervenes, and nothing jumps",
                rule="2.2",
            )
    target = board[destination]
    if target:
        if side_of(target) == side:
            return RuleError(
                Reason.DESTINATION_OCCUPIED,
                f"{_sq(destination)} holds the {SIDE_IDS[side]}'s own "
                f"{KIND_NAMES[kind_of(target)]}",
            )
        if not CAN_CAPTURE[piece][target]:
            why, rule = _capture_rule(piece, target)
            return RuleError(Reason.CAPTURE_NOT_ALLOWED, why, rule=rule)
    ctx = Context(board, side, rules)
    verdict, _ = (Verdict.LEGAL, set()) if ctx.is_quiet(move) else ctx.evaluate(move)
    if verdict is Verdict.WAGON_UNDER_COVER:
        after = ctx.after(move)
        guns = commanders(after, destination, 1 - side, rules)
        return RuleError(
            Reason.WAGON_UNDER_COVER,
            f"the Wagon on {_sq(destination)} cannot be taken while under cover of attacking "
            f"Artillery on {_list(guns)}: after the capture its square is in range",
            rule="8",
        )
    if verdict is Verdict.EXPOSED:
        why, rule = _exposed_sentence(ctx, move, name)
        return RuleError(Reason.EXPOSED_TO_ARTILLERY, why, rule=rule)
    if verdict is Verdict.UNCOVERS:
        after = ctx.after(move)
        now = ctx.evaluate(move)[1]
        newly = sorted(s for s in now if s not in ctx.exposed and s not in (origin, destination))
        shown = newly[0]
        guns = commanders(after, shown, 1 - side, rules)
        return RuleError(
            Reason.UNCOVERS_FIGURE,
            f"{name} {_sq(origin)}-{_sq(destination)} would leave the "
            f"{KIND_NAMES[kind_of(after[shown])]} on {_sq(shown)} exposed to enemy Artillery on "
            f"{_list(guns)}: no move may uncover a figure",
            rule="A.2",
        )
    return _duty_error(board, side, rules, analysis)


def _geometry_error(piece: int, origin: int, destination: int) -> RuleError:
    kind = kind_of(piece)
    name = KIND_NAMES[kind]
    move = f"{_sq(origin)}-{_sq(destination)}"
    (c0, r0), (c1, r1) = COORDS[origin], COORDS[destination]
    for direction, distance in reach(side_of(piece), kind).items():
        dc, dr = DELTAS[direction]
        path = [(c0 + dc * k, r0 + dr * k) for k in range(distance + 1)]
        if (c1, r1) not in path:
            continue
        # Within the pattern by coordinates: find the step the river or a crossing cuts.
        for here, there in pairwise(path[: path.index((c1, r1)) + 1]):
            if there in RIVER_CELLS:
                return RuleError(
                    Reason.RIVER_CROSSING,
                    f"{name} {move}: the river cuts the line; it is crossed only at the fords "
                    f"47 and 83 and the bridge 70",
                    rule="2.3",
                )
            if there not in AT:
                break  # off the board
            a, b = AT[here], AT[there]
            if STEP[direction][a] == b:
                continue
            crossing = a if a in CROSSINGS else b if b in CROSSINGS else -1
            if crossing >= 0:
                kind_name, entrances = CROSSINGS[crossing]
                return RuleError(
                    Reason.RIVER_CROSSING,
                    f"{name} {move}: the {kind_name} {_sq(crossing)} is entered and left only "
                    f"through its marked entrances ({', '.join(sorted(entrances))}); the step "
                    f"between {_sq(a)} and {_sq(b)} crosses the river",
                    rule="2.4",
                )
            return RuleError(
                Reason.RIVER_CROSSING,
                f"{name} {move}: the river runs between {_sq(a)} and {_sq(b)}; it is crossed "
                f"only at the fords 47 and 83 and the bridge 70",
                rule="2.3",
            )
    return RuleError(
        Reason.ILLEGAL_MOVE_GEOMETRY,
        f"{name} moves {PATTERNS[kind]}: {move} is no such move",
        rule="5",
    )


def _capture_rule(piece: int, target: int) -> tuple[str, str]:
    """Who may not take what, in words, and the section."""
    kind, prey = kind_of(piece), kind_of(target)
    if kind == ARTILLERY and prey == CITADEL:
        return (
            "Artillery cannot take the Citadel; only Light Infantry, Infantry of the Line or "
            "Cavalry can",
            "7",
        )
    if kind == ARTILLERY:
        return (
            f"Artillery takes only enemy Artillery, not {describe_piece(target)}; it checks "
            f"figures instead",
            "5, 6",
        )
    if kind == WAGON:
        return "the Wagon takes nothing", "8"
    return f"{KIND_NAMES[kind]} cannot take {describe_piece(target)}", "5"


def _exposed_sentence(ctx: Context, move: Move, name: str) -> tuple[str, str]:
    """Why the mover may not end there, in words, and the section."""
    destination = move.destination
    side, rules = ctx.side, ctx.rules
    after = ctx.after(move)
    square = _sq(destination)
    enemy = commanders(after, destination, 1 - side, rules)
    adjacent = next_to(rules)
    own_next = [g for g in batteries(after, side) if destination in adjacent[g]]
    enemy_next = [g for g in batteries(after, 1 - side) if destination in adjacent[g]]
    if kind_of(after[destination]) == WAGON and rules.wagon_literal:
        if own_next and enemy_next:
            return (
                f"the Wagon may not end on {square}: it is next to its own Artillery on "
                f"{_list(own_next)} and to enemy Artillery on {_list(enemy_next)}",
                "8",
            )
        return (
            f"the Wagon may not end on {square}: the 2nd or 3rd square of its own battery's "
            f"line, in range of enemy Artillery on {_list(enemy)}",
            "8",
        )
    if own_next and enemy_next:
        return (
            f"{name} may not end on {square}: in range of enemy Artillery on {_list(enemy)}; "
            f"next to its own Artillery on {_list(own_next)} but also next to the enemy's on "
            f"{_list(enemy_next)}, so not protected",
            "A.1",
        )
    return (
        f"{name} may not end on {square}: in range of enemy Artillery on {_list(enemy)} and not "
        f"protected",
        "A.1",
    )


def _duty_error(board: bytes, side: int, rules: Rules, analysis: Analysis) -> RuleError:
    exposed = sorted(analysis.exposed)
    figures = ", ".join(f"the {KIND_NAMES[kind_of(board[s])]} on {_sq(s)}" for s in exposed)
    if analysis.duty is Duty.CITADEL or (
        analysis.duty is Duty.RELIEVE and analysis.citadel_commanders and not exposed
    ):
        answer = (
            "take that battery, block its line or threaten to take it"
            if rules.citadel_threat_answers
            else "take that battery or block its line"
        )
        return RuleError(
            Reason.CITADEL_DUTY,
            f"attacking Artillery on {_list(analysis.citadel_commanders)} commands the Citadel: "
            f"{answer} before moving otherwise",
            rule="7",
        )
    if analysis.duty is Duty.WAGON:
        return RuleError(
            Reason.FORCED_REPLY,
            "the Wagon is exposed to defending Artillery: take the checking battery if you "
            "can, otherwise move the Wagon out of danger",
            rule="8, ruling 9",
        )
    if analysis.duty is Duty.RELIEVE:
        also = (
            f"; or answer the Citadel commanded by Artillery on "
            f"{_list(analysis.citadel_commanders)}"
            if analysis.citadel_commanders
            else ""
        )
        return RuleError(
            Reason.FORCED_REPLY,
            f"{figures} {'is' if len(exposed) == 1 else 'are'} exposed to enemy Artillery: the "
            f"move must relieve one without exposing another{also}",
            rule="A.3",
        )
    return RuleError(Reason.ILLEGAL_ACTION, "that move is not legal here")
