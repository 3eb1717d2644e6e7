"""Movement (spec 4): one move per unit per turn, applied in order, never onto a unit.

One-square movers step in their move directions. Two-square movers (Cavalry, Cuirassiers,
Horse Artillery, Dragoons) reach squares two steps away through an intermediate square
that is on the board, empty (own units too, unless `pass_through_friendly`), not a Hill
or Redoubt (10.4, "on and off in one turn") and, with `obstacles_block_movement`, not
behind an obstacle; `multi_step_mode` says whether the two steps are king steps or one
straight line (ruling 5). `check_move` and `destinations` apply the same rules: the first
to explain a refusal, the second to list the legal moves quickly.
"""

from __future__ import annotations

from dataclasses import replace

from engine_service.rules.base import Event, EventKind
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import Move
from engine_service.rules.napoleonic.events import unit_event
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.state import NapoleonicState, Turn, Unit
from engine_service.rules.napoleonic.terrain import step_blocked
from engine_service.rules.napoleonic.words import dirs_words, kind_title, unit_title


def _allowance(stats: UnitStats, straight: bool) -> str:
    if stats.move_steps == 1:
        return f"moves one square {dirs_words(stats.move_dirs_key)}"
    how = "exactly two squares" if stats.exactly_two else "one or two squares"
    line = " in a straight line" if straight else ""
    return f"moves {how} {dirs_words(stats.move_dirs_key)}{line}"


def continuation_origin(state: NapoleonicState, unit: Unit) -> int | None:
    """With split_two_square_moves: where a unit that may still take its second step began."""
    for unit_id, origin in state.turn.origins:
        if unit_id == unit.id:
            return origin
    return None


def _passable(state: NapoleonicState, unit: Unit, mid: int, dest: int) -> str:
    """Why `mid` cannot be the intermediate square of a two-step move, or '' if it can."""
    terrain = state.terrain
    names = state.geo.names
    if mid in terrain.elevated:
        kind = "redoubt" if mid in terrain.redoubt_owner else "hill"
        return f"{names[mid]} is a {kind} (no unit moves on and off one in a turn)"
    occupant = state.at()[mid]
    if occupant is not None and not (
        occupant.side == unit.side and state.rules.pass_through_friendly
    ):
        return f"{names[mid]} is occupied"
    if state.rules.obstacles_block_movement and (
        step_blocked(state, unit.cell, mid) or step_blocked(state, mid, dest)
    ):
        return f"an obstacle bars the way through {names[mid]}"
    return ""


def own_unit(state: NapoleonicState, unit_id: str, side: str, verb: str) -> Unit:
    """The unit `side` names to move or advance (`verb`); UNKNOWN_UNIT when there is none,
    NOT_OWN_UNIT when it is another player's."""
    unit = state.unit(unit_id)
    if unit is None:
        raise RuleError(Reason.UNKNOWN_UNIT, f"there is no unit {unit_id} on the board")
    if unit.side != side:
        raise RuleError(Reason.NOT_OWN_UNIT, f"{unit_title(state, unit)} is not {side}'s to {verb}")
    return unit


def check_not_leaving_height(state: NapoleonicState, unit: Unit, title: str) -> None:
    """HILL_ON_AND_OFF when `unit` (`title` at the start of the sentence) entered a hill or
    redoubt this turn: it may not leave it the same turn, by a move or an advance (10.4)."""
    if unit.id in state.turn.entered_elevation:
        raise RuleError(
            Reason.HILL_ON_AND_OFF,
            f"{title} entered that hill or redoubt this turn and may not leave it the same turn",
            rule="10.4",
        )


def check_hill_to_hill(state: NapoleonicState, unit: Unit, start: int, dest: int) -> None:
    """HILL_ON_AND_OFF when `unit` would go from a hill or redoubt (`start`) straight onto
    another (`dest`), by a move or an advance, unless `hill_to_hill_moves` (10.4)."""
    elevated = state.terrain.elevated
    if not state.rules.hill_to_hill and start in elevated and dest in elevated:
        raise RuleError(
            Reason.HILL_ON_AND_OFF,
            f"{kind_title(unit.kind)} on {state.geo.names[unit.cell]} may not move from one "
            "hill or redoubt onto another (hill_to_hill_moves is off)",
        )


def check_move(state: NapoleonicState, action: Move) -> tuple[Unit, int]:
    """The unit and destination cell of a legal move; RuleError naming the rule otherwise."""
    unit = own_unit(state, action.unit, action.side, "move")
    rules = state.rules
    geo = state.geo
    stats = state.stats(unit)
    origin: int | None = None
    if unit.id in state.turn.moved:
        origin = continuation_origin(state, unit)
        if origin is None:
            raise RuleError(
                Reason.UNIT_ALREADY_MOVED,
                f"{unit_title(state, unit)} has already moved this turn: one move per unit",
                rule="4.3",
            )
    check_not_leaving_height(state, unit, unit_title(state, unit))
    dest = geo.index.get(action.to)
    if dest is None:
        raise RuleError(
            Reason.DESTINATION_OFF_BOARD,
            f"{action.to} is not a square of the {geo.width}x{geo.height} board",
        )
    name = kind_title(unit.kind)
    here = geo.names[unit.cell]
    if dest == unit.cell:
        raise RuleError(
            Reason.ILLEGAL_MOVE_GEOMETRY, f"{name} on {here} must move to another square"
        )
    distance = geo.distance(unit.cell, dest)
    steps = 1 if origin is not None else stats.move_steps
    direct = geo.direction_to[unit.cell].get(dest)
    one_step = direct is not None and direct in stats.move_dirs

    def refuse(more: str = "") -> RuleError:
        """ILLEGAL_MOVE_GEOMETRY with the unit's allowance (built only when refusing)."""
        allowance = _allowance(stats, rules.straight_line)
        return RuleError(
            Reason.ILLEGAL_MOVE_GEOMETRY,
            f"{name} on {here} cannot move to {action.to}: it {allowance}{more}",
        )

    if distance > steps or (steps == 1 and not one_step):
        raise refuse()
    if origin is None and stats.exactly_two and distance != 2:
        raise refuse(" (variant_two_square_move)")
    if origin is not None:
        if dest == origin:
            raise refuse(" and may not return")
        if rules.straight_line and geo.straight[stats.move_dirs_key][origin].get(dest) != unit.cell:
            raise RuleError(
                Reason.ILLEGAL_MOVE_GEOMETRY,
                f"{name} on {here} must continue its move from {geo.names[origin]} in a "
                "straight line",
            )
    routes: tuple[int, ...] = ()
    if not one_step:
        if rules.straight_line:
            mid = geo.straight[stats.move_dirs_key][unit.cell].get(dest)
            routes = () if mid is None else (mid,)
        else:
            routes = geo.two_step[stats.move_dirs_key][unit.cell].get(dest, ())
        if not routes:
            raise refuse()
    occupant = state.at()[dest]
    if occupant is not None:
        raise RuleError(
            Reason.DESTINATION_OCCUPIED,
            f"{name} on {here} cannot move to {action.to}: it is occupied by "
            f"{occupant.side} {occupant.kind.replace('_', ' ')} (moving never captures, 2)",
        )
    if one_step:
        if rules.obstacles_block_movement and step_blocked(state, unit.cell, dest):
            raise RuleError(
                Reason.PATH_BLOCKED,
                f"{name} on {here} cannot cross the obstacle to {action.to} "
                "(obstacles_block_movement)",
            )
    else:
        reasons = [_passable(state, unit, mid, dest) for mid in routes]
        if all(reasons):
            raise RuleError(
                Reason.PATH_BLOCKED,
                f"{name} on {here} cannot reach {action.to}: " + "; ".join(reasons),
            )
    check_hill_to_hill(state, unit, unit.cell if origin is None else origin, dest)
    return unit, dest


def destinations(state: NapoleonicState, unit: Unit) -> list[int]:
    """Every cell `unit` may legally move to now (the same rules as `check_move`)."""
    turn = state.turn
    origin: int | None = None
    if unit.id in turn.moved:
        origin = continuation_origin(state, unit)
        if origin is None:
            return []
    if unit.id in turn.entered_elevation:
        return []
    rules = state.rules
    geo = state.geo
    stats = state.stats(unit)
    at = state.at()
    cell = unit.cell
    step = geo.step
    block = rules.obstacles_block_movement and bool(state.terrain.obstacles)
    elevated = state.terrain.elevated
    result: list[int] = []
    steps = 1 if origin is not None else stats.move_steps
    if origin is not None or not stats.exactly_two:
        for d in stats.move_dirs:
            m = step[d][cell]
            if m < 0 or at[m] is not None or (block and step_blocked(state, cell, m)):
                continue
            if origin is not None and (
                m == origin
                or (
                    rules.straight_line and geo.straight[stats.move_dirs_key][origin].get(m) != cell
                )
            ):
                continue
            result.append(m)
    if steps >= 2:
        # Every passable first step m, then every empty second square b beyond it (the
        # same routes `check_move` accepts), skipping squares one step away.
        dirs = stats.move_dirs
        direct = {n for d in dirs if (n := step[d][cell]) >= 0}
        seen = set(result)
        seen.add(cell)
        side = unit.side
        friends = rules.pass_through_friendly
        for d in dirs:
            m = step[d][cell]
            if m < 0 or m in elevated:
                continue
            occupant = at[m]
            if occupant is not None and not (friends and occupant.side == side):
                continue
            if block and step_blocked(state, cell, m):
                continue
            for d2 in (d,) if rules.straight_line else dirs:
                b = step[d2][m]
                if b < 0 or b in seen or b in direct or at[b] is not None:
                    continue
                if stats.exactly_two and geo.distance(cell, b) != 2:
                    continue
                if block and step_blocked(state, m, b):
                    continue
                seen.add(b)
                result.append(b)
    if not rules.hill_to_hill and (origin if origin is not None else cell) in elevated:
        result = [b for b in result if b not in elevated]
    return result


def apply_move(
    state: NapoleonicState, unit: Unit, dest: int, events: list[Event] | None
) -> NapoleonicState:
    """The state after a legal move (4); appends a MOVED event when `events` is given."""
    turn = state.turn
    rules = state.rules
    origin = continuation_origin(state, unit) if unit.id in turn.moved else None
    origins = turn.origins
    if origin is not None:
        origins = tuple(o for o in origins if o[0] != unit.id)
    else:
        stats = state.stats(unit)
        if (
            rules.split_moves
            and stats.move_steps >= 2
            and not stats.exactly_two
            and state.geo.distance(unit.cell, dest) == 1
        ):
            origins = (*origins, (unit.id, unit.cell))
    new_turn = replace(turn, moved=turn.moved | {unit.id}, origins=origins)
    return step_onto(state, unit, dest, new_turn, events, kind=EventKind.MOVED, words="moves to")


def step_onto(
    state: NapoleonicState,
    unit: Unit,
    dest: int,
    turn: Turn,
    events: list[Event] | None,
    *,
    kind: EventKind,
    words: str,
) -> NapoleonicState:
    """The state with `unit` on `dest` by a move or an advance, under `turn` (the turn's
    other changes made) with the unit among those that entered a hill or redoubt if `dest`
    is one (10.4); a `kind` event "<unit> <words> <square>." when `events` is given."""
    if dest in state.terrain.elevated:
        turn = replace(turn, entered_elevation=turn.entered_elevation | {unit.id})
    if events is not None:
        names = state.geo.names
        events.append(
            unit_event(
                kind,
                f"{unit_title(state, unit)} {words} {names[dest]}.",
                unit,
                (names[unit.cell], names[dest]),
            )
        )
    return state.with_moved_unit(unit, Unit(unit.id, unit.side, unit.kind, dest), turn=turn)
