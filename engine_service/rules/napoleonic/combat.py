"""Combat (spec 7): declare attacks, allocate_supports, resolve, advance.

Every attack and support goes into an adjacent square in the unit's own direction set.
Resolution is simultaneous (7.3): a target falls only when the attack values exceed its
defence plus terrain bonuses plus supports; ties survive. The tally of every combat is
returned term by term so a client can show why a unit fell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from engine_service.rules.base import CombatTally, Contribution, Event, EventKind
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import Advance, Attack, Support
from engine_service.rules.napoleonic.events import unit_event
from engine_service.rules.napoleonic.movement import (
    check_hill_to_hill,
    check_not_leaving_height,
    own_unit,
    step_onto,
)
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.state import NapoleonicState, Unit, Vacancy
from engine_service.rules.napoleonic.terrain import across_obstacle, step_blocked
from engine_service.rules.napoleonic.words import dirs_words, kind_name, kind_title, unit_title

# --- what attacks (7.1) and supports (7.2) share ------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """Attack or support: the rules they share (an adjacent square in the unit's own
    directions, one per unit per turn), with each one's words and reasons."""

    verb: str  # "attack", "support"
    single: str  # how a unit's single one is said: "makes a single attack"
    directions: Callable[[UnitStats], tuple[tuple[str, ...], str]]  # (dirs, their words' key)
    not_adjacent: Reason
    direction_not_allowed: Reason
    already_assigned: Reason


ATTACK: Final = Job(
    "attack",
    "makes a single attack",
    lambda stats: (stats.attack_dirs, stats.attack_dirs_key),
    Reason.ATTACK_NOT_ADJACENT,
    Reason.ATTACK_DIRECTION_NOT_ALLOWED,
    Reason.ATTACKER_ALREADY_ASSIGNED,
)
SUPPORT: Final = Job(
    "support",
    "gives a single support",
    lambda stats: (stats.support_dirs, stats.support_dirs_key),
    Reason.SUPPORT_NOT_ADJACENT,
    Reason.SUPPORT_DIRECTION_NOT_ALLOWED,
    Reason.SUPPORTER_ALREADY_ASSIGNED,
)


def _check_reach(state: NapoleonicState, job: Job, unit: Unit, other: Unit) -> None:
    """7.1, 7.2: `unit` reaches `other` for `job` only in an adjacent square, in one of the
    unit's own directions for that job."""
    names = state.geo.names
    refused = f"{kind_title(unit.kind)} on {names[unit.cell]} cannot {job.verb} {names[other.cell]}"
    direction = state.geo.direction_to[unit.cell].get(other.cell)
    if direction is None:
        raise RuleError(job.not_adjacent, f"{refused}: {job.verb}s go into an adjacent square only")
    dirs, dirs_key = job.directions(state.stats(unit))
    if direction not in dirs:
        raise RuleError(
            job.direction_not_allowed, f"{refused}: it {job.verb}s {dirs_words(dirs_key)}"
        )


def _check_single(
    state: NapoleonicState, job: Job, unit: Unit, assigned: tuple[tuple[str, str], ...]
) -> None:
    """7.1, 7.2: a unit makes a single attack, gives a single support (`assigned`: this
    turn's (unit, other) pairs of the job)."""
    names = state.geo.names
    for unit_id, other_id in assigned:
        if unit_id == unit.id:
            other = state.unit(other_id)
            where = names[other.cell] if other else other_id
            raise RuleError(
                job.already_assigned,
                f"{kind_title(unit.kind)} on {names[unit.cell]} already {job.verb}s {where}: "
                f"a unit {job.single}",
            )


# --- attack declaration (7.1) -------------------------------------------------------------


def check_attack(state: NapoleonicState, action: Attack) -> tuple[Unit, Unit]:
    """Attacker and target of a legal declaration entry; RuleError naming the rule (7.1)."""
    attacker = state.unit(action.attacker)
    if attacker is None:
        raise RuleError(Reason.UNKNOWN_UNIT, f"there is no unit {action.attacker} on the board")
    if attacker.side != action.side:
        raise RuleError(
            Reason.NOT_OWN_UNIT,
            f"{unit_title(state, attacker)} is not {action.side}'s: {action.side} cannot "
            "attack with it",
        )
    target = state.unit(action.target)
    if target is None:
        raise RuleError(
            Reason.UNKNOWN_UNIT, f"there is no unit {action.target} to attack", rule="7.1"
        )
    names = state.geo.names
    name = kind_title(attacker.kind)
    here = names[attacker.cell]
    there = names[target.cell]
    if target.side not in state.enemies(action.side):
        raise RuleError(
            Reason.TARGET_NOT_ENEMY,
            f"{name} on {here} cannot attack {there}: only enemy units can be attacked "
            f"({there} holds {target.side} {kind_name(target.kind)})",
        )
    _check_reach(state, ATTACK, attacker, target)
    _check_single(state, ATTACK, attacker, state.turn.attacks)
    return attacker, target


def may_attack(state: NapoleonicState, stats: UnitStats, source: int, target: int) -> bool:
    """7.1: whether a unit of `stats` on `source` may attack a unit on `target` (an
    adjacent square in its attack directions)."""
    direction = state.geo.direction_to[source].get(target)
    return direction is not None and direction in stats.attack_dirs


def attack_value(state: NapoleonicState, stats: UnitStats, source: int, target: int) -> int:
    """The value an attack from `source` into `target` counts (10.4: `artillery_limits`)."""
    return 1 if artillery_limits(state, stats, source, target) else stats.attack


def artillery_limits(
    state: NapoleonicState, stats: UnitStats, source: int, target: int
) -> tuple[str, ...]:
    """10.4: why an artillery attack from `source` into `target` counts only 1 ("into a
    redoubt", "across an obstacle"; the two do not stack); empty when it counts in full."""
    if not stats.is_artillery or stats.attack <= 1:
        return ()
    terrain = state.terrain
    into_redoubt = target in terrain.redoubt_owner
    across = across_obstacle(
        state.geo, terrain.obstacles, source, target, state.rules.diagonal_both
    )
    reasons = (("into a redoubt", into_redoubt), ("across an obstacle", across))
    return tuple(why for why, applies in reasons if applies)


def legal_attacks(state: NapoleonicState, side: str) -> list[Attack]:
    """Every legal declaration entry for `side` now."""
    assigned = {a for a, _t in state.turn.attacks}
    at = state.at()
    step = state.geo.step
    enemies = state.enemies(side)
    result: list[Attack] = []
    for unit in state.units:
        if unit.side != side or unit.id in assigned:
            continue
        for d in state.stats(unit).attack_dirs:
            n = step[d][unit.cell]
            if n >= 0:
                target = at[n]
                if target is not None and target.side in enemies:
                    result.append(Attack(side, unit.id, target.id))
    return result


def declare(state: NapoleonicState, action: Attack) -> NapoleonicState:
    """The state with a legal declaration entry recorded in the turn's attacks."""
    turn = state.turn
    return state.evolve(
        turn=replace(turn, attacks=(*turn.attacks, (action.attacker, action.target)))
    )


# --- support allocation (7.2) -------------------------------------------------------------


def under_attack(state: NapoleonicState) -> set[str]:
    """Ids of the units named as targets this turn."""
    return {t for _a, t in state.turn.attacks}


def check_support(state: NapoleonicState, action: Support) -> tuple[Unit, Unit]:
    """Supporter and supported of a legal allocation entry; RuleError naming the rule (7.2)."""
    supporter = state.unit(action.supporter)
    if supporter is None:
        raise RuleError(Reason.UNKNOWN_UNIT, f"there is no unit {action.supporter} on the board")
    supported = state.unit(action.supported)
    if supported is None:
        raise RuleError(Reason.UNKNOWN_UNIT, f"there is no unit {action.supported} on the board")
    names = state.geo.names
    name = kind_title(supporter.kind)
    here = names[supporter.cell]
    there = names[supported.cell]
    if supporter.side != action.side:
        raise RuleError(
            Reason.SUPPORT_NOT_FRIENDLY,
            f"{unit_title(state, supporter)} is not {action.side}'s: supports are between "
            "friendly units",
        )
    if state.alliance_of(supported.side) != state.alliance_of(action.side):
        raise RuleError(
            Reason.SUPPORT_NOT_FRIENDLY,
            f"{unit_title(state, supported)} is not {action.side}'s"
            + (" nor an ally's" if state.multiplayer() else "")
            + ": supports are between friendly units",
        )
    if supporter.id == supported.id:
        raise RuleError(Reason.SUPPORT_SELF, f"{name} on {here} cannot support itself")
    attacked = under_attack(state)
    if supporter.id in attacked:
        raise RuleError(
            Reason.SUPPORTER_UNDER_ATTACK,
            f"{name} on {here} is under attack and cannot support {there}",
            rule="7.2",
        )
    if supported.id not in attacked:
        raise RuleError(
            Reason.SUPPORTED_NOT_UNDER_ATTACK,
            f"{name} on {here} cannot support {there}: {there} is not under attack",
        )
    _check_reach(state, SUPPORT, supporter, supported)
    if state.rules.obstacles_block_support and step_blocked(state, supporter.cell, supported.cell):
        raise RuleError(
            Reason.SUPPORT_ACROSS_OBSTACLE,
            f"{name} on {here} cannot support {there} across an obstacle (obstacles_block_support)",
        )
    _check_single(state, SUPPORT, supporter, state.turn.supports)
    return supporter, supported


def may_support(state: NapoleonicState, supporter: Unit, cell: int) -> bool:
    """7.2, 10.4: whether `supporter` could support a unit on `cell` (an adjacent square in
    its support directions, and not across an obstacle under obstacles_block_support)."""
    direction = state.geo.direction_to[supporter.cell].get(cell)
    if direction is None or direction not in state.stats(supporter).support_dirs:
        return False
    return not (state.rules.obstacles_block_support and step_blocked(state, supporter.cell, cell))


def legal_supports(state: NapoleonicState, side: str) -> list[Support]:
    """Every legal allocation entry for the defending `side` now."""
    attacked = under_attack(state)
    assigned = {s for s, _t in state.turn.supports}
    at = state.at()
    step = state.geo.step
    alliance = state.alliance_of(side)
    friends = {p.id for p in state.players if p.alliance == alliance} | {side}
    result: list[Support] = []
    for unit in state.units:
        if unit.side != side or unit.id in attacked or unit.id in assigned:
            continue
        for d in state.stats(unit).support_dirs:
            n = step[d][unit.cell]
            if n < 0:
                continue
            other = at[n]
            if (
                other is not None
                and other.id in attacked
                and other.side in friends
                and may_support(state, unit, n)
            ):
                result.append(Support(side, unit.id, other.id))
    return result


def allocate(state: NapoleonicState, action: Support) -> NapoleonicState:
    """The state with a legal allocation entry recorded in the turn's supports."""
    turn = state.turn
    supports = (*turn.supports, (action.supporter, action.supported))
    return state.evolve(turn=replace(turn, supports=supports))


# --- resolution (7.3) -----------------------------------------------------------------------


def tally(
    state: NapoleonicState, target: Unit, attackers: list[Unit], supporters: list[Unit]
) -> CombatTally:
    """One attacked unit's sums, term by term, with the terrain of 10.4."""
    geo = state.geo
    terrain = state.terrain
    rules = state.rules
    names = geo.names
    contributions: list[Contribution] = []
    all_across = bool(attackers)
    elevated_attackers = 0
    for attacker in attackers:
        stats = state.stats(attacker)
        value = stats.attack
        note = ""
        across = across_obstacle(
            geo, terrain.obstacles, attacker.cell, target.cell, rules.diagonal_both
        )
        all_across = all_across and across
        if attacker.cell in terrain.elevated:
            elevated_attackers += 1
        limits = artillery_limits(state, stats, attacker.cell, target.cell)
        if limits:
            value = 1
            note = "attacks at 1 " + " and ".join(limits)
        contributions.append(
            Contribution(attacker.id, attacker.kind, names[attacker.cell], value, note)
        )
    sources: list[str] = []
    if target.cell in terrain.hills:
        sources.append("hill")
    owner = terrain.redoubt_owner.get(target.cell)
    if owner is not None and (not rules.redoubt_bonus_builder_only or owner == target.side):
        sources.append("redoubt")
    if rules.hill_negation_any:
        negated = elevated_attackers > 0
    else:
        negated = bool(attackers) and elevated_attackers == len(attackers)
    elevation = [] if negated else sources[: rules.elevation_max]
    bonuses: list[tuple[str, int]] = [(source, 1) for source in elevation]
    # 10.4: +1 only if the obstacles protect from every attacker. Without
    # terrain_bonus_stacking the larger of elevation and obstacle counts.
    if all_across and (rules.terrain_stacking or not bonuses):
        bonuses.append(("obstacle", 1))
    supports = tuple(
        Contribution(s.id, s.kind, names[s.cell], state.stats(s).support) for s in supporters
    )
    defence = state.stats(target).defence
    attack_total = sum(c.value for c in contributions)
    defence_total = defence + sum(v for _s, v in bonuses) + sum(c.value for c in supports)
    return CombatTally(
        target=target.id,
        target_kind=target.kind,
        cell=names[target.cell],
        attackers=tuple(contributions),
        defence=defence,
        supports=supports,
        bonuses=tuple(bonuses),
        attack_total=attack_total,
        defence_total=defence_total,
        eliminated=attack_total > defence_total,  # 7.3: ties survive ("exceed")
    )


def tally_text(state: NapoleonicState, result: CombatTally) -> str:
    """The sentence of a COMBAT_RESOLVED event."""
    attackers = ", ".join(
        f"{kind_name(c.kind)} {c.cell} {c.value}" + (f" ({c.note})" if c.note else "")
        for c in result.attackers
    )
    terms = [f"defence {result.defence}"]
    terms += [f"{source} +{value}" for source, value in result.bonuses]
    terms += [f"support {kind_name(c.kind)} {c.cell} +{c.value}" for c in result.supports]
    verdict = "eliminated" if result.eliminated else "it holds"
    target = state.unit(result.target)
    side = target.side if target else ""
    return (
        f"Combat at {result.cell}: {side} {kind_name(result.target_kind)} attacked by "
        f"{attackers} = {result.attack_total} against {' + '.join(terms)} = "
        f"{result.defence_total}: {verdict}."
    )


def resolve(state: NapoleonicState) -> tuple[NapoleonicState, list[Event], tuple[str, ...]]:
    """Simultaneous resolution (7.3): the state without the eliminated units, the events,
    and the players whose commander fell (the caller ends the game or puts them out).

    The returned state keeps the phase; its turn scratch holds the eliminations and the
    vacated squares with their eligible advancers (7.4): attackers of the acting player(s)
    only, as allies join an attack without moving (10.6).
    """
    acting = state.acting()
    units = state.by_id()
    order: list[str] = []
    attackers_of: dict[str, list[Unit]] = {}
    for attacker_id, target_id in state.turn.attacks:
        if target_id not in attackers_of:
            attackers_of[target_id] = []
            order.append(target_id)
        attackers_of[target_id].append(units[attacker_id])
    supporters_of: dict[str, list[Unit]] = {}
    for supporter_id, supported_id in state.turn.supports:
        supporters_of.setdefault(supported_id, []).append(units[supporter_id])
    events: list[Event] = []
    eliminated: list[Unit] = []
    vacancies: list[Vacancy] = []
    fallen: list[str] = []
    names = state.geo.names
    for target_id in order:
        target = units[target_id]
        result = tally(state, target, attackers_of[target_id], supporters_of.get(target_id, []))
        events.append(
            unit_event(
                EventKind.COMBAT_RESOLVED,
                tally_text(state, result),
                target,
                (names[target.cell],),
                combat=result,
            )
        )
        if result.eliminated:
            eliminated.append(target)
            eligible = tuple(a.id for a in attackers_of[target_id] if a.side in acting)
            if eligible:
                vacancies.append(Vacancy(target.cell, eligible))
            if state.stats(target).is_commander and target.side not in fallen:
                fallen.append(target.side)
    for unit in eliminated:
        events.append(
            unit_event(
                EventKind.ELIMINATED,
                f"{unit_title(state, unit)} is eliminated.",
                unit,
                (names[unit.cell],),
            )
        )
    if not eliminated:
        return state, events, ()
    gone = {u.id for u in eliminated}
    turn = replace(
        state.turn,
        eliminated=state.turn.eliminated + tuple(u.id for u in eliminated),
        vacancies=tuple(vacancies),
    )
    new = state.with_units(tuple(u for u in state.units if u.id not in gone), turn=turn)
    return new, events, tuple(fallen)


# --- advance (7.4) --------------------------------------------------------------------------


def check_advance(state: NapoleonicState, action: Advance) -> tuple[Unit, int, int]:
    """Unit, destination cell and vacancy index of a legal advance; RuleError otherwise."""
    unit = own_unit(state, action.unit, action.side, "advance")
    geo = state.geo
    name = kind_title(unit.kind)
    here = geo.names[unit.cell]
    dest = geo.index.get(action.to, -1)
    index = next((i for i, v in enumerate(state.turn.vacancies) if v.cell == dest), -1)
    if index < 0:
        raise RuleError(
            Reason.ADVANCE_SQUARE_NOT_VACATED,
            f"{name} on {here} cannot advance to {action.to}: an advance goes only into a "
            "square vacated in this combat",
            rule="7.4",
        )
    vacancy = state.turn.vacancies[index]
    if vacancy.filled_by:
        raise RuleError(
            Reason.ADVANCE_DUPLICATE_SQUARE,
            f"{action.to} has already been taken by an advance: one unit per vacated square",
        )
    if unit.id not in vacancy.eligible:
        raise RuleError(
            Reason.ADVANCE_NOT_ATTACKER,
            f"{name} on {here} did not attack the unit that held {action.to}: only its "
            "attackers may advance into it",
            rule="7.4",
        )
    rules = state.rules
    if rules.advance_requires_unmoved and unit.id in state.turn.moved:
        raise RuleError(
            Reason.ADVANCE_AFTER_MOVE_FORBIDDEN,
            f"{name} on {here} moved this turn and may not advance (advance_requires_unmoved)",
        )
    terrain = state.terrain
    check_not_leaving_height(state, unit, f"{name} on {here}")
    owner = terrain.redoubt_owner.get(dest)
    if state.stats(unit).is_artillery and owner is not None and owner in state.enemies(unit.side):
        raise RuleError(
            Reason.ADVANCE_TERRAIN_FORBIDDEN,
            f"{name} on {here} cannot enter the enemy redoubt on {action.to} in the turn it falls",
            rule="10.4",
        )
    if rules.obstacles_block_movement and step_blocked(state, unit.cell, dest):
        raise RuleError(
            Reason.PATH_BLOCKED,
            f"{name} on {here} cannot advance across the obstacle to {action.to} "
            "(obstacles_block_movement)",
        )
    check_hill_to_hill(state, unit, unit.cell, dest)
    return unit, dest, index


def apply_advance(
    state: NapoleonicState, unit: Unit, dest: int, index: int, events: list[Event] | None
) -> NapoleonicState:
    """The state after a legal advance; appends an ADVANCED event when `events` is given."""
    turn = state.turn
    vacancies = list(turn.vacancies)
    vacancies[index] = replace(vacancies[index], filled_by=unit.id)
    new_turn = replace(turn, vacancies=tuple(vacancies))
    return step_onto(
        state, unit, dest, new_turn, events, kind=EventKind.ADVANCED, words="advances into"
    )


def legal_advances(state: NapoleonicState, side: str) -> list[Advance]:
    """Every legal advance for `side` now."""
    result: list[Advance] = []
    names = state.geo.names
    for vacancy in state.turn.vacancies:
        if vacancy.filled_by:
            continue
        for unit_id in vacancy.eligible:
            action = Advance(side, unit_id, names[vacancy.cell])
            try:
                check_advance(state, action)
            except RuleError:
                continue
            result.append(action)
    return result
