"""What a position is worth to one side: threats, supports, the two Guards' squares.

Every rule question goes to the rules (`combat.may_attack`, `combat.may_support`); the
numbers here are the planner's own judgement of a square (`weights`).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from engine_service.ai.napoleonic.weights import (
    APPROACH,
    APPROACH_DEFAULT,
    BLOCKING,
    COHESION,
    COMMANDER_VALUE,
    CONTACT,
    CONTACT_GUARDS,
    DANGER,
    GUARD_SUPPORT,
    GUARDS_DANGER,
    STANDOFF_TURNS,
    VALUES,
)
from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic.board import geometry
from engine_service.rules.napoleonic.combat import may_attack, may_support
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.state import NapoleonicState, Unit


def unit_value(state: NapoleonicState, unit: Unit) -> float:
    """What a unit is worth to its side: the commander decides the game."""
    if state.stats(unit).is_commander:
        return COMMANDER_VALUE
    return VALUES.get(unit.kind, 1.0)


def enemy_guards(state: NapoleonicState, side: str) -> list[Unit]:
    """The enemy commanders (the Guards by default)."""
    enemies = state.enemies(side)
    return [u for u in state.units if u.side in enemies and state.stats(u).is_commander]


def own_guards(state: NapoleonicState, side: str) -> list[Unit]:
    """The side's own commanders."""
    return [u for u in state.units if u.side == side and state.stats(u).is_commander]


def distance(state: NapoleonicState, a: int, b: int) -> int:
    """King-step distance between two cells."""
    return state.geo.distance(a, b)


def slots(state: NapoleonicState, stats: UnitStats, target: int) -> tuple[int, ...]:
    """The squares from which a unit of `stats` could attack `target`."""
    return _slots(state.width, state.height, target, stats.attack_dirs)


@memo(4096)
def _slots(width: int, height: int, target: int, dirs: tuple[str, ...]) -> tuple[int, ...]:
    direction_to = geometry(width, height).direction_to
    return tuple(n for n in direction_to[target] if direction_to[n][target] in dirs)


def slot_distance(state: NapoleonicState, stats: UnitStats, cell: int, target: int) -> int:
    """King steps from `cell` to the nearest square from which it could attack `target`."""
    near = slots(state, stats, target)
    if not near:
        return distance(state, cell, target)
    return min(distance(state, cell, n) for n in near)


# --- threats: what the enemy could bring against a square next turn ----------------------


def threat_map(state: NapoleonicState, side: str, gone: AbstractSet[str]) -> list[int]:
    """For each cell, the attack values `side`'s enemies could bring against it next turn.

    Each enemy unit counts once per cell, from anywhere it could stand after a move (its
    reach ignores blocking by units that may move away): an upper bound.
    """
    geo = state.geo
    size = len(geo.names)
    threat = [0] * size
    at = state.at()
    enemies = state.enemies(side)
    step = geo.step
    for unit in state.units:
        if unit.side not in enemies or unit.id in gone:
            continue
        stats = state.stats(unit)
        reach = _ball(state, unit.cell, stats.move_steps)
        seen: set[int] = set()
        for cell in reach:
            occupant = at[cell]
            if occupant is not None and occupant is not unit and occupant.side in enemies:
                continue
            for d in stats.attack_dirs:
                n = step[d][cell]
                if n >= 0:
                    seen.add(n)
        for n in seen:
            threat[n] += stats.attack
    return threat


def _ball(state: NapoleonicState, cell: int, radius: int) -> tuple[int, ...]:
    """The cells within `radius` king steps of `cell`."""
    return _cells_within(state.width, state.height, cell, radius)


@memo(4096)
def _cells_within(width: int, height: int, cell: int, radius: int) -> tuple[int, ...]:
    x, y = cell % width, cell // width
    return tuple(
        yy * width + xx
        for yy in range(max(0, y - radius), min(height, y + radius + 1))
        for xx in range(max(0, x - radius), min(width, x + radius + 1))
    )


def supports_at(state: NapoleonicState, side: str, cell: int, exclude: str) -> int:
    """The support values `side`'s units around `cell` could give a unit standing there."""
    at = state.at()
    total = 0
    for n in state.geo.direction_to[cell]:
        friend = at[n]
        if (
            friend is not None
            and friend.side == side
            and friend.id != exclude
            and may_support(state, friend, cell)
        ):
            total += state.stats(friend).support
    return total


@dataclass
class Outlook:
    """What the position evaluation of one side needs, computed once per position."""

    side: str
    threat: list[int]
    target: int  # the enemy Guards' cell (-1 if none)
    home: int  # the own Guards' cell (-1 if none)
    home_unit: str


def outlook(state: NapoleonicState, side: str, gone: AbstractSet[str] = frozenset()) -> Outlook:
    """The threats and the two Guards' squares, for `unit_score`."""
    theirs = [u for u in enemy_guards(state, side) if u.id not in gone]
    ours = own_guards(state, side)
    return Outlook(
        side,
        threat_map(state, side, gone),
        theirs[0].cell if theirs else -1,
        ours[0].cell if ours else -1,
        ours[0].id if ours else "",
    )


def unit_score(state: NapoleonicState, view: Outlook, unit: Unit, cell: int) -> float:
    """The positional worth of `unit` standing on `cell` (the rest of the board as it is)."""
    stats = state.stats(unit)
    at = state.at()
    side = unit.side
    enemies = state.enemies(side)
    defence = stats.defence + supports_at(state, side, cell, unit.id)
    excess = view.threat[cell] - defence
    score = 0.0
    if stats.is_commander:
        score -= GUARDS_DANGER * max(0, excess + 1)
        near = sum(
            1
            for n in _ball(state, cell, 2)
            if (other := at[n]) is not None and other.side in enemies
        )
        return score - 0.2 * near + 0.3 * supports_at(state, side, cell, unit.id)
    # A standoff wears the caution down: the longer nothing has fallen, the more risk the
    # army takes to come to grips, and the less it keeps by its own Guards (the Guards' own
    # safety never wears down). Else an army of an alliance whose enemy is down to its
    # Guards could stand by its own Guards for good, its ally too weak to finish alone.
    patience = max(0.2, 1.0 - state.turns_since_elimination / STANDOFF_TURNS)
    if excess > 0:
        score -= DANGER * patience * unit_value(state, unit) * min(1.0, excess / 2)
    if view.target >= 0:
        score -= APPROACH.get(unit.kind, APPROACH_DEFAULT) * slot_distance(
            state, stats, cell, view.target
        )
        if distance(state, cell, view.target) == 1 and not may_attack(
            state, stats, cell, view.target
        ):
            score -= BLOCKING  # it holds a square next to the Guards it cannot attack from
    contact = 0.0
    for n in state.geo.direction_to[cell]:
        other = at[n]
        if other is not None and other.side in enemies and may_attack(state, stats, cell, n):
            worth = CONTACT_GUARDS * stats.attack if n == view.target else CONTACT
            contact = max(contact, worth)
    score += contact
    if view.home >= 0 and view.home != cell:
        direction = state.geo.direction_to[cell].get(view.home)
        if direction is not None and direction in stats.support_dirs:
            score += GUARD_SUPPORT * patience
    if supports_at(state, side, cell, unit.id):
        score += COHESION
    return score


def position_score(state: NapoleonicState, side: str, gone: AbstractSet[str]) -> float:
    """The positional worth of all of `side`'s units (units in `gone` left out)."""
    view = outlook(state, side, gone)
    return sum(
        unit_score(state, view, unit, unit.cell)
        for unit in state.units
        if unit.side == side and unit.id not in gone
    )


def evaluate_napoleonic(ruleset: AnyRuleset, state: NapoleonicState, side: str) -> float:
    """Material (without the Guards, whose loss ends the game) and the positional worth,
    the alliance's minus its enemies'.

    An alliance is one side (10.6): the units of `side` and of its allies still in the game
    count for it, those of the enemies still in the game against it, and an army left on
    the board by a player who is out (`army_stays_inert`) counts for nobody.
    """
    friends = (side, *state.allies(side))
    enemies = tuple(enemy for enemy in state.enemies(side) if state.in_game(enemy))
    total = 0.0
    for unit in state.units:
        if state.stats(unit).is_commander:
            continue
        worth = VALUES.get(unit.kind, 1.0)
        if unit.side in friends:
            total += worth
        elif unit.side in enemies:
            total -= worth
    for friend in friends:
        total += position_score(state, friend, frozenset())
    for enemy in enemies:
        total -= position_score(state, enemy, frozenset())
    return total
