"""Napoleonic Chess: a turn planner.

A Napoleonic Chess turn is many small actions (spec 6): move any units, declare attacks,
the defender allocates supports, combats resolve at once, the attacker may advance. A
ply-by-ply search cannot see a combat's result until the whole turn is played, so the AI
plans whole phases instead:

- **Movement and attack declaration** (`plan_turn`). For each enemy unit, Guards first,
  the planner looks for attackers that can stand next to it this turn (in their attack
  directions) and for units that can attack its possible supporters, since a unit under
  attack cannot support (7.2). A kill is planned only when the attack exceeds the
  defence plus every support the defender could still give (7.3: ties survive), so it
  succeeds against the best allocation. The remaining units then move for position:
  towards the enemy Guards, in contact with the enemy, near their own Guards, away from
  squares the enemy could overwhelm next turn. Finally every unit that can attack
  something does (attacks cost nothing: no counter-attack), the targets chosen to
  maximise what the defender's best allocation must lose. Several orders of targets give
  several plans; the best one by kills and final position is kept.
- **Defence** (`plan_defence`): the allocation of supports that saves the most valuable
  attacked units (the Guards above all), found exactly.
- **Advance** (`plan_advance`): an attacker moves into a vacated square only when the
  square is better for it and no more dangerous.
- **Deployment**: a standard-looking array (front rank infantry and artillery, Guards in
  the middle of the rear rank, cavalry on the wings), placed, sealed or committed.

The planner is deterministic: the same state, side and seed give the same plan. A plan is
remembered (bounded cache) for every state along it, so asking again after each of its
actions continues the same plan; `line` shows the rest of the planned phase.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import combinations
from typing import Final

from engine_service.ai.search import Suggestion
from engine_service.memo import LruCache, memo
from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic import combat, deployment, movement
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Placements,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.board import geometry
from engine_service.rules.napoleonic.deployment import RANDOM_SEEDS, random_player_array
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.setup import canonical_placements
from engine_service.rules.napoleonic.state import NapoleonicState, Phase, Unit
from engine_service.rules.napoleonic.terrain import across_obstacle, step_blocked

COMMANDER_VALUE: Final = 1000.0  # the Guards: losing them loses the game (8)
# Material by unit type (the Guards' loss ends the game: see COMMANDER_VALUE).
VALUES: Final = {
    "infantry": 1.0,
    "cavalry": 1.5,
    "artillery": 2.0,
    "guards": 6.0,
    "horse_artillery": 1.5,
    "dragoons": 1.5,
    "foot_guards": 2.0,
    "cuirassiers": 2.0,
    "heavy_infantry": 2.0,
}
PRESSURE: Final = 0.05  # per unit of value attacked beyond its defence but saved by supports
PRESSURE_CAP: Final = 10.0
KILL_SEARCH_NODES: Final = 1500  # per target
PLAN_CACHE: Final = 512
CANDIDATE_PLANS: Final = 4

# Positional weights (material units: an Infantry unit is 1).
APPROACH: Final = {"cavalry": 0.12, "artillery": 0.08}
APPROACH_DEFAULT: Final = 0.1
CONTACT: Final = 0.15
CONTACT_GUARDS: Final = 0.6
GUARD_SUPPORT: Final = 0.25
COHESION: Final = 0.05
DANGER: Final = 0.5
GUARDS_DANGER: Final = 8.0
MOVE_COST: Final = 0.01
STANDOFF_TURNS: Final = 16  # player-turns without elimination to lose most caution
BLOCKING: Final = 0.3
ALLOCATION_NODES: Final = 20_000


# --- small helpers ----------------------------------------------------------------------


def unit_value(state: NapoleonicState, unit: Unit) -> float:
    """What a unit is worth to its side: the commander decides the game."""
    if state.stats(unit).is_commander:
        return COMMANDER_VALUE
    return VALUES.get(unit.kind, 1.0)


def attack_value(state: NapoleonicState, stats: UnitStats, source: int, target: int) -> int:
    """An attack's value from `source` into `target` (10.4: artillery at 1 into a redoubt
    or across an obstacle)."""
    value = stats.attack
    if stats.is_artillery and value > 1:
        terrain = state.terrain
        if target in terrain.redoubt_owner or across_obstacle(
            state.geo, terrain.obstacles, source, target, state.rules.diagonal_both
        ):
            return 1
    return value


def can_attack(state: NapoleonicState, stats: UnitStats, source: int, target: int) -> bool:
    """Whether a unit of `stats` on `source` may attack `target` (adjacent, its directions)."""
    direction = state.geo.direction_to[source].get(target)
    return direction is not None and direction in stats.attack_dirs


def can_support(state: NapoleonicState, supporter: Unit, target: int) -> bool:
    """Whether `supporter` may support a unit on `target` (7.2: adjacent, its directions)."""
    direction = state.geo.direction_to[supporter.cell].get(target)
    if direction is None or direction not in state.stats(supporter).support_dirs:
        return False
    return not (state.rules.obstacles_block_support and step_blocked(state, supporter.cell, target))


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


# --- combat: the defender's best allocation ----------------------------------------------


@dataclass
class Fight:
    """One attacked unit: its attack total, defence without supports, possible supporters."""

    target: Unit
    attack: int
    defence: int
    supporters: list[tuple[Unit, int]]
    value: float


@dataclass
class Verdict:
    """The outcome of a declaration against the defender's best allocation."""

    lost: float  # the value the defender must lose
    eliminated: list[Unit]
    allocation: list[tuple[Unit, Unit]]  # (supporter, supported) of the best allocation
    pressure: float = 0.0

    @property
    def score(self) -> float:
        """What the attacker gains: losses, plus a little for defences stretched."""
        return self.lost + self.pressure


def fights(
    state: NapoleonicState,
    attacks: Sequence[tuple[Unit, Unit]],
    given: Sequence[tuple[Unit, Unit]] = (),
) -> list[Fight]:
    """The combats of a declaration (attacker at its cell, target), with the supports the
    defender could still allocate; `given` are supports already allocated."""
    attackers_of: dict[str, list[Unit]] = {}
    targets: dict[str, Unit] = {}
    for attacker, target in attacks:
        attackers_of.setdefault(target.id, []).append(attacker)
        targets[target.id] = target
    assigned = {s.id for s, _t in given}
    given_of: dict[str, list[Unit]] = {}
    for supporter, supported in given:
        given_of.setdefault(supported.id, []).append(supporter)
    result = []
    for target_id, target in targets.items():
        tally = combat.tally(state, target, attackers_of[target_id], given_of.get(target_id, []))
        supporters = []
        for unit in state.units:
            if (
                unit.side == target.side
                and unit.id not in targets
                and unit.id not in assigned
                and can_support(state, unit, target.cell)
            ):
                supporters.append((unit, state.stats(unit).support))
        result.append(
            Fight(
                target,
                tally.attack_total,
                tally.defence_total,
                supporters,
                unit_value(state, target),
            )
        )
    return result


def best_allocation(fights_: list[Fight]) -> Verdict:
    """The defender's allocation that loses the least value (exact, by branch and bound).

    Each supporter gives one support (7.2); a target survives when its defence plus its
    supports reach its attack (7.3). Targets are tried most valuable first, each either
    saved by a minimal set of free supporters or given up.
    """
    threatened = sorted(
        (f for f in fights_ if f.attack > f.defence), key=lambda f: (-f.value, f.target.id)
    )
    total = sum(f.value for f in threatened)
    best_lost = total
    best_saved: list[tuple[Fight, tuple[Unit, ...]]] = []

    def options(f: Fight, used: set[str]) -> Iterable[tuple[Unit, ...]]:
        need = f.attack - f.defence
        free = [(u, v) for u, v in f.supporters if u.id not in used]
        if sum(v for _u, v in free) < need:
            return
        for size in range(1, len(free) + 1):
            found = False
            for group in combinations(free, size):
                if sum(v for _u, v in group) >= need:
                    found = True
                    yield tuple(u for u, _v in group)
            if found:
                return  # minimal groups only

    budget = ALLOCATION_NODES

    def visit(
        i: int, used: set[str], lost: float, saved: list[tuple[Fight, tuple[Unit, ...]]]
    ) -> None:
        nonlocal best_lost, best_saved, budget
        budget -= 1
        if lost >= best_lost or budget < 0:
            return
        if i == len(threatened):
            best_lost, best_saved = lost, list(saved)
            return
        f = threatened[i]
        for group in options(f, used):
            saved.append((f, group))
            visit(i + 1, used | {u.id for u in group}, lost, saved)
            saved.pop()
        visit(i + 1, used, lost + f.value, saved)

    visit(0, set(), 0.0, [])
    saved_ids = {f.target.id for f, _g in best_saved}
    eliminated = [f.target for f in threatened if f.target.id not in saved_ids]
    allocation = [(u, f.target) for f, group in best_saved for u in group]
    pressure = PRESSURE * sum(min(f.value, PRESSURE_CAP) for f, _g in best_saved)
    return Verdict(best_lost, eliminated, allocation, pressure)


def judge(
    state: NapoleonicState,
    attacks: Sequence[tuple[Unit, Unit]],
    given: Sequence[tuple[Unit, Unit]] = (),
) -> Verdict:
    """A declaration's outcome against the best defence."""
    if not attacks:
        return Verdict(0.0, [], [])
    return best_allocation(fights(state, attacks, given))


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
            and can_support(state, friend, cell)
        ):
            total += state.stats(friend).support
    return total


# --- position ------------------------------------------------------------------------------


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
    if excess > 0:
        # A standoff wears the caution down: the longer nothing has fallen, the more risk
        # the army takes to come to grips (the Guards' own safety never wears down).
        patience = max(0.2, 1.0 - state.turns_since_elimination / STANDOFF_TURNS)
        score -= DANGER * patience * unit_value(state, unit) * min(1.0, excess / 2)
    if view.target >= 0:
        score -= APPROACH.get(unit.kind, APPROACH_DEFAULT) * slot_distance(
            state, stats, cell, view.target
        )
        if distance(state, cell, view.target) == 1 and not can_attack(
            state, stats, cell, view.target
        ):
            score -= BLOCKING  # it holds a square next to the Guards it cannot attack from
    contact = 0.0
    for n in state.geo.direction_to[cell]:
        other = at[n]
        if other is not None and other.side in enemies and can_attack(state, stats, cell, n):
            worth = CONTACT_GUARDS * stats.attack if n == view.target else CONTACT
            contact = max(contact, worth)
    score += contact
    if view.home >= 0 and view.home != cell:
        direction = state.geo.direction_to[cell].get(view.home)
        if direction is not None and direction in stats.support_dirs:
            score += GUARD_SUPPORT
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


# --- the turn plan -------------------------------------------------------------------------


@dataclass
class Assignment:
    """A unit's part in a planned kill: where it stands and whom it attacks."""

    unit: Unit
    cell: int
    target: str


@dataclass
class Planner:
    """One planning of a turn (or phase) for `side`: the state, the clock and counters."""

    ruleset: AnyRuleset
    state: NapoleonicState
    side: str
    deadline: float
    nodes: int = 0
    reach: dict[str, list[int]] = field(default_factory=dict)
    # Per own unit, per square of its reach: the squares it could attack from there.
    strikes: dict[str, dict[int, frozenset[int]]] = field(default_factory=dict)
    in_reach: set[int] = field(default_factory=set)  # squares some own unit could attack

    def out_of_time(self) -> bool:
        """The clock as a safety net (the work limits keep plans deterministic)."""
        return time.perf_counter() > self.deadline

    # -- reach ---------------------------------------------------------------------------

    def compute_reach(self) -> None:
        """Where each own unit could stand at the end of movement (its square included).

        Squares held by own units that have not moved yet count too: such a unit can be
        moved out of the way first (`make_moves` does it).
        """
        state = self.state
        moving = state.phase is Phase.MOVEMENT
        movable = {
            u.id for u in state.units if u.side == self.side and u.id not in state.turn.moved
        }
        for unit in state.units:
            if unit.side != self.side:
                continue
            cells = [unit.cell]
            if moving and unit.id in movable:
                cells += movement.destinations(state, unit)
                cleared = state.with_units(
                    tuple(u for u in state.units if u.id == unit.id or u.id not in movable)
                )
                known = set(cells)
                cells += [c for c in movement.destinations(cleared, unit) if c not in known]
            self.reach[unit.id] = cells
            step = state.geo.step
            dirs = state.stats(unit).attack_dirs
            strikes = {
                cell: frozenset(n for d in dirs if (n := step[d][cell]) >= 0) for cell in cells
            }
            self.strikes[unit.id] = strikes
            for near in strikes.values():
                self.in_reach |= near

    # -- kills ---------------------------------------------------------------------------

    def kill(
        self,
        target: Unit,
        free: list[Unit],
        taken: set[int],
        attacked: dict[str, list[tuple[Unit, int]]],
    ) -> list[Assignment] | None:
        """The fewest free units that surely eliminate `target`, or None.

        `attacked` holds the attacks already planned (target id -> attackers at their
        cells). Sure means: the attack exceeds the defence plus every support the
        defender's units not under attack could give it.
        """
        state = self.state
        t_cell = target.cell
        base = combat.tally(state, target, [], []).defence_total
        planned = attacked.get(target.id, [])
        attack0 = sum(attack_value(state, state.stats(u), cell, t_cell) for u, cell in planned)
        supporters = [
            (s, state.stats(s).support)
            for s in state.units
            if s.side == target.side
            and s.id != target.id
            and s.id not in attacked
            and can_support(state, s, t_cell)
        ]
        entries: list[tuple[Unit, list[tuple[int, str, int]]]] = []
        for unit in free:
            stats = state.stats(unit)
            options: list[tuple[int, str, int]] = []
            for cell, near in self.strikes.get(unit.id, {}).items():
                if cell in taken and cell != unit.cell:
                    continue
                if t_cell in near:
                    options.append((cell, target.id, attack_value(state, stats, cell, t_cell)))
                for supporter, value in supporters:
                    if supporter.cell in near:
                        options.append((cell, supporter.id, value))
            if options:
                options.sort(key=lambda o: (-o[2], o[0] != unit.cell, o[0]))
                entries.append((unit, options))
        entries.sort(key=lambda e: (-e[1][0][2], e[0].id))
        best_cost = float("inf")
        best: list[Assignment] | None = None
        support_total = sum(v for _s, v in supporters)
        ceiling = [0] * (len(entries) + 1)
        for i in range(len(entries) - 1, -1, -1):
            ceiling[i] = ceiling[i + 1] + entries[i][1][0][2]
        budget = KILL_SEARCH_NODES
        chosen: list[Assignment] = []
        used_cells: set[int] = set()
        cut: set[str] = set()

        def visit(i: int, attack: int, uncut: int, cost: float) -> None:
            nonlocal best_cost, best, budget
            budget -= 1
            if budget < 0 or cost >= best_cost:
                return
            if budget % 128 == 0 and self.out_of_time():
                budget = -1
                return
            if attack - base - uncut >= 1:
                best_cost, best = cost, list(chosen)
                return
            if i == len(entries) or attack + ceiling[i] - base - uncut < 1:
                return
            unit, options = entries[i]
            for cell, role, value in options:
                if cell in used_cells or (cell != unit.cell and cell in taken):
                    continue
                if role != target.id and role in cut:
                    continue
                chosen.append(Assignment(unit, cell, role))
                used_cells.add(cell)
                step_cost = 1.0
                if cell != unit.cell:
                    step_cost += 0.3 if state.at()[cell] is not None else 0.1
                if role == target.id:
                    visit(i + 1, attack + value, uncut, cost + step_cost)
                else:
                    cut.add(role)
                    visit(i + 1, attack, uncut - value, cost + step_cost)
                    cut.discard(role)
                used_cells.discard(cell)
                chosen.pop()
            visit(i + 1, attack, uncut, cost)

        visit(0, attack0, support_total, 0.0)
        self.nodes += KILL_SEARCH_NODES - max(budget, 0)
        return best

    def offensive(self, order: list[Unit]) -> list[Assignment]:
        """Planned kills for targets taken in `order`, each with the units left over."""
        state = self.state
        free = [
            u
            for u in state.units
            if u.side == self.side and u.id not in {a for a, _t in state.turn.attacks}
        ]
        # Squares no plan may use: the enemy's and those of own units that cannot move away.
        movable = state.phase is Phase.MOVEMENT
        taken = {
            u.cell
            for u in state.units
            if u.side != self.side or not movable or u.id in state.turn.moved
        }
        attacked: dict[str, list[tuple[Unit, int]]] = {}
        for attacker_id, target_id in state.turn.attacks:
            attacker = state.unit(attacker_id)
            if attacker is not None:
                attacked.setdefault(target_id, []).append((attacker, attacker.cell))
        plan: list[Assignment] = []
        for target in order:
            if self.out_of_time():
                break
            if target.cell not in self.in_reach:
                continue
            found = self.kill(target, free, taken, attacked)
            if not found:
                continue
            for job in found:
                plan.append(job)
                free = [u for u in free if u.id != job.unit.id]
                taken.add(job.cell)
                attacked.setdefault(job.target, []).append((job.unit, job.cell))
        return plan

    # -- carrying a plan out ---------------------------------------------------------------

    def make_moves(
        self, state: NapoleonicState, jobs: list[Assignment]
    ) -> tuple[NapoleonicState, list[NapoleonicAction]]:
        """Move the assigned units to their squares, in an order that keeps every move legal,
        first moving away own units that stand in the way."""
        actions: list[NapoleonicAction] = []
        if state.phase is not Phase.MOVEMENT:
            return state, actions
        pending = [job for job in jobs if job.cell != job.unit.cell]
        busy = {job.unit.id for job in jobs}
        reserved = {job.cell for job in jobs}
        progress = True
        while pending and progress:
            progress = False
            for job in list(pending):
                unit = state.unit(job.unit.id)
                if unit is None or unit.id in state.turn.moved:
                    pending.remove(job)
                    continue
                occupant = state.at()[job.cell]
                if occupant is not None:
                    if occupant.side != self.side or occupant.id in busy:
                        continue  # a planned mover may still leave; else the job fails
                    state, evicted = self.evict(state, occupant, reserved)
                    if evicted is None:
                        continue
                    actions.append(evicted)
                    progress = True
                if job.cell in movement.destinations(state, unit):
                    move = Move(self.side, unit.id, state.geo.names[job.cell])
                    state = self.ruleset.play(state, move)
                    actions.append(move)
                    pending.remove(job)
                    progress = True
        return state, actions

    def evict(
        self, state: NapoleonicState, unit: Unit, reserved: set[int]
    ) -> tuple[NapoleonicState, Move | None]:
        """Move an own unit out of a square a plan needs, to its best other square."""
        if unit.id in state.turn.moved:
            return state, None
        view = outlook(state, self.side)
        options = [c for c in movement.destinations(state, unit) if c not in reserved]
        if not options:
            return state, None
        best = max(options, key=lambda c: (unit_score(state, view, unit, c), -c))
        self.nodes += 1
        move = Move(self.side, unit.id, state.geo.names[best])
        return self.ruleset.play(state, move), move

    def position_moves(
        self, state: NapoleonicState, busy: set[str]
    ) -> tuple[NapoleonicState, list[NapoleonicAction]]:
        """Move the units not in a planned kill for position, front units first."""
        actions: list[NapoleonicAction] = []
        if state.phase is not Phase.MOVEMENT:
            return state, actions
        view = outlook(state, self.side)
        target = view.target
        movers = [
            u
            for u in state.units
            if u.side == self.side and u.id not in busy and u.id not in state.turn.moved
        ]
        movers.sort(key=lambda u: (distance(state, u.cell, target) if target >= 0 else 0, u.id))
        for original in movers:
            unit = state.unit(original.id)
            if unit is None:
                continue
            if self.out_of_time():
                break  # the rest stand where they are
            self.nodes += 1
            best_cell = unit.cell
            best = unit_score(state, view, unit, unit.cell)
            for cell in sorted(movement.destinations(state, unit)):
                score = unit_score(state, view, unit, cell) - MOVE_COST
                if score > best + 1e-9:
                    best, best_cell = score, cell
            if best_cell != unit.cell:
                move = Move(self.side, unit.id, state.geo.names[best_cell])
                state = self.ruleset.play(state, move)
                actions.append(move)
        return state, actions

    def declaration(
        self, state: NapoleonicState, jobs: list[Assignment]
    ) -> tuple[list[tuple[Unit, Unit]], Verdict]:
        """Every own unit that can attack does; targets chosen against the best defence."""
        names = state.by_id()
        declared = [
            (names[a], names[t]) for a, t in state.turn.attacks if a in names and t in names
        ]
        done = {a.id for a, _t in declared}
        choices: dict[str, list[Unit]] = {}
        for attack in combat.legal_attacks(state, self.side):
            if attack.attacker in done:
                continue
            choices.setdefault(attack.attacker, []).append(names[attack.target])
        if not choices:
            return declared, judge(state, declared)
        planned = {job.unit.id: job.target for job in jobs}
        current: dict[str, Unit] = {}
        for attacker_id in sorted(choices):
            options = choices[attacker_id]
            wanted = planned.get(attacker_id)
            pick = next((t for t in options if t.id == wanted), None)
            if pick is None:
                pick = max(options, key=lambda t: (unit_value(state, t), t.id))
            current[attacker_id] = pick

        def attacks_of(assign: dict[str, Unit]) -> list[tuple[Unit, Unit]]:
            return declared + [(names[a], t) for a, t in sorted(assign.items())]

        verdict = judge(state, attacks_of(current))
        self.nodes += 1
        for _round in range(2):
            improved = False
            for attacker_id in sorted(choices):
                options = choices[attacker_id]
                if len(options) < 2 or self.out_of_time():
                    continue
                for option in options:
                    if option.id == current[attacker_id].id:
                        continue
                    trial = dict(current)
                    trial[attacker_id] = option
                    result = judge(state, attacks_of(trial))
                    self.nodes += 1
                    if result.score > verdict.score + 1e-9:
                        current, verdict, improved = trial, result, True
            if not improved:
                break
        return attacks_of(current), verdict

    def turn_plan(self, order: list[Unit]) -> tuple[float, list[NapoleonicAction]]:
        """One candidate plan for the whole turn: its score and its actions."""
        jobs = self.offensive(order)
        state, actions = self.make_moves(self.state, jobs)
        busy = {job.unit.id for job in jobs}
        state, more = self.position_moves(state, busy)
        actions += more
        attacks, verdict = self.declaration(state, jobs)
        gone = {u.id for u in verdict.eliminated}
        score = verdict.score + position_score(state, self.side, gone)
        self.nodes += 1
        already = set(self.state.turn.attacks)
        new_attacks = [(a, t) for a, t in attacks if (a.id, t.id) not in already]
        for attacker, target in new_attacks:
            actions.append(Attack(self.side, attacker.id, target.id))
        if state.phase is Phase.MOVEMENT and not new_attacks:
            actions.append(EndPhase(self.side))  # movement ends: attack declaration
        actions.append(EndPhase(self.side))  # the declaration is complete
        return score, actions

    def orders(self) -> list[list[Unit]]:
        """Orders of enemy targets to plan kills in: Guards first, then by value; and the
        same with each of the most valuable other targets put first."""
        state = self.state
        enemies = state.enemies(self.side)
        targets = [u for u in state.units if u.side in enemies]
        targets.sort(key=lambda u: (-unit_value(state, u), u.id))
        reachable = self._reachable_targets(targets)
        result = [targets]
        others = [t for t in reachable if not state.stats(t).is_commander]
        for first in others[: CANDIDATE_PLANS - 1]:
            result.append([first] + [t for t in targets if t.id != first.id])
        return result

    def _reachable_targets(self, targets: list[Unit]) -> list[Unit]:
        """The targets some own unit could attack this turn."""
        return [t for t in targets if t.cell in self.in_reach]

    def plan_turn(self) -> tuple[float, list[NapoleonicAction]]:
        """The best candidate plan for the movement and attack phases."""
        self.compute_reach()
        best: tuple[float, list[NapoleonicAction]] | None = None
        for order in self.orders():
            if best is not None and self.out_of_time():
                break
            candidate = self.turn_plan(order)
            if best is None or candidate[0] > best[0] + 1e-9:
                best = candidate
        assert best is not None
        return best

    # -- defence and advance -------------------------------------------------------------

    def plan_defence(self) -> tuple[float, list[NapoleonicAction]]:
        """Supports that save the most valuable attacked units."""
        state = self.state
        names = state.by_id()
        attacks = [(names[a], names[t]) for a, t in state.turn.attacks if a in names and t in names]
        own_attacks = [(a, t) for a, t in attacks if t.side == self.side]
        given = [
            (names[s], names[t])
            for s, t in state.turn.supports
            if s in names and t in names and names[s].side == self.side
        ]
        verdict = judge(state, own_attacks, given)
        self.nodes += 1
        legal = set(combat.legal_supports(state, self.side))
        actions: list[NapoleonicAction] = []
        for supporter, supported in verdict.allocation:
            action = Support(self.side, supporter.id, supported.id)
            if action in legal:
                actions.append(action)
        actions.append(EndPhase(self.side))
        return -verdict.lost, actions

    def plan_advance(self) -> tuple[float, list[NapoleonicAction]]:
        """Advances into vacated squares that improve the advancing unit's position and
        are no more threatened than where it stands; the best unit for each square."""
        state = self.state
        view = outlook(state, self.side)
        best: dict[str, tuple[float, Advance]] = {}
        for advance in combat.legal_advances(state, self.side):
            unit = state.unit(advance.unit)
            if unit is None or state.stats(unit).is_commander:
                continue
            cell = state.geo.index[advance.to]
            gain = unit_score(state, view, unit, cell) - unit_score(state, view, unit, unit.cell)
            self.nodes += 1
            if gain <= 1e-9 or view.threat[cell] > view.threat[unit.cell]:
                continue
            known = best.get(advance.to)
            if known is None or gain > known[0] + 1e-9:
                best[advance.to] = (gain, advance)
        actions: list[NapoleonicAction] = [best[square][1] for square in sorted(best)]
        actions.append(EndPhase(self.side))
        return sum(gain for gain, _a in best.values()), actions


# --- deployment ----------------------------------------------------------------------------


def _placement_preference(state: NapoleonicState, side: str, kind: str, cell: int) -> float:
    """How well a unit of `kind` fits `cell` of `side`'s deployment rows."""
    stats = state.rules.types[kind]
    low, high = state.rules.rows
    row = state.geo.rank_from_edge(cell, state.side_index(side))
    front = (row - low) / max(1, high - low)  # 0 rear row .. 1 front row
    x = cell % state.width
    centre = 1.0 - abs(2 * x - (state.width - 1)) / max(1, state.width - 1)  # 1 centre .. 0 edge
    if stats.is_commander:
        return 3.0 * (1.0 - front) + 2.0 * centre
    if stats.move_steps >= 2:
        return 1.0 * (1.0 - front) + 1.5 * (1.0 - centre)
    if stats.is_artillery or stats.attack >= 2:
        return 2.0 * front + 1.0 * centre
    return 2.5 * front + 0.2 * centre


def standard_array(state: NapoleonicState, side: str) -> Placements:
    """A sensible array of `side`'s army on its deployment rows (deterministic)."""
    cells = list(deployment.deployment_cells(state, side))
    army = sorted(
        state.army(side),
        key=lambda k: (not state.rules.types[k].is_commander, -state.rules.types[k].attack, k),
    )
    names = state.geo.names
    placements: list[tuple[str, str]] = []
    for kind in army:
        best = max(cells, key=lambda c: (_placement_preference(state, side, kind, c), -c))
        cells.remove(best)
        placements.append((names[best], kind))
    return canonical_placements(placements)


def _salt(state: NapoleonicState, side: str, seed: int) -> bytes:
    """The salt of the AI's commitment: derived from the seed, so it can reveal later."""
    text = f"wargame napoleonic ai salt {state.scenario} {side} {seed}"
    return hashlib.sha256(text.encode()).digest()


def deployment_action(
    ruleset: AnyRuleset, state: NapoleonicState, side: str, seed: int
) -> NapoleonicAction:
    """The AI's action in a deployment phase (10.1, 10.2)."""
    if state.phase is Phase.PLACEMENT:
        legal = [a for a in ruleset.legal_actions(state) if isinstance(a, Place)]
        return max(
            legal,
            key=lambda a: (
                _placement_preference(state, side, a.kind, state.geo.index[a.cell]),
                a.kind,
                -state.geo.index[a.cell],
            ),
        )
    placements = standard_array(state, side)
    if state.phase is Phase.DEPLOY_SEALED:
        return Seal(side, placements)
    salt = _salt(state, side, seed)
    if state.phase is Phase.DEPLOY_COMMIT:
        return Commit(side, deployment.commitment(placements, salt))
    committed = dict(state.deployment.commitments).get(side) if state.deployment else None
    if committed == deployment.commitment(placements, salt):
        return Reveal(side, placements, salt)
    # Committed by another scheme: the random players' (see the ruleset's random_action).
    for random_seed in range(RANDOM_SEEDS):
        guess, guess_salt = random_player_array(state, side, random_seed)
        if deployment.commitment(guess, guess_salt) == committed:
            return Reveal(side, guess, guess_salt)
    return Reveal(side, placements, salt)


# --- the entry point -----------------------------------------------------------------------

PlanKey = tuple[object, ...]
_CACHE: LruCache[PlanKey, tuple[float, tuple[NapoleonicAction, ...]]] = LruCache(PLAN_CACHE)


def plan_key(state: NapoleonicState, side: str, seed: int) -> PlanKey:
    """The cache key of a state (every compared field; the options by their values)."""
    return (
        side,
        seed,
        tuple(state.options.items()),
        state.scenario,
        state.width,
        state.height,
        state.players,
        state.turn_order,
        state.armies,
        state.units,
        state.terrain,
        state.phase,
        state.active,
        state.turn_number,
        state.turn,
        state.turns_since_elimination,
        state.position_history,
        state.deployment,
        state.outcome,
    )


def _remember(
    ruleset: AnyRuleset,
    state: NapoleonicState,
    *,
    side: str,
    seed: int,
    value: float,
    actions: Sequence[NapoleonicAction],
) -> None:
    """Remember the plan for every state along it, so that the next calls continue it."""
    for i, action in enumerate(actions):
        _CACHE.put(plan_key(state, side, seed), (value, tuple(actions[i:])))
        if i + 1 < len(actions):
            state = ruleset.play(state, action)
            if ruleset.outcome(state) is not None or side not in ruleset.to_act(state):
                break


def _line(
    ruleset: AnyRuleset, state: NapoleonicState, actions: Sequence[NapoleonicAction]
) -> list[str]:
    """The notations of a plan's actions, each in the state it is played in."""
    line = []
    for action in actions:
        line.append(ruleset.format_action(state, action))
        state = ruleset.play(state, action)
        if ruleset.outcome(state) is not None:
            break
    return line


def plan_suggestion(
    ruleset: AnyRuleset, state: NapoleonicState, side: str, *, seconds: float, seed: int
) -> Suggestion:
    """The next action of the plan for `side` in `state` (planning it if needed)."""
    started = time.perf_counter()
    key = plan_key(state, side, seed)
    cached = _CACHE.get(key)
    if cached is not None:
        value, actions = cached
        return Suggestion(actions[0], value, len(actions), _line(ruleset, state, actions), 1)
    planner = Planner(ruleset, state, side, started + seconds * 0.8)
    phase = state.phase
    if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION):
        value, plan = planner.plan_turn()
    elif phase is Phase.DEFENCE:
        value, plan = planner.plan_defence()
    elif phase is Phase.ADVANCE:
        value, plan = planner.plan_advance()
    else:
        value, plan = 0.0, [deployment_action(ruleset, state, side, seed)]
    _remember(ruleset, state, side=side, seed=seed, value=value, actions=plan)
    return Suggestion(plan[0], value, len(plan), _line(ruleset, state, plan), max(planner.nodes, 1))


def clear_plans() -> None:
    """Forget every remembered plan (tests; a fresh process behaves the same)."""
    _CACHE.clear()


def evaluate_napoleonic(ruleset: AnyRuleset, state: NapoleonicState, side: str) -> float:
    """The registered evaluator: material (without the Guards, whose loss ends the game)
    and the planner's positional worth, own minus the enemy's."""
    total = 0.0
    for unit in state.units:
        if state.stats(unit).is_commander:
            continue
        worth = VALUES.get(unit.kind, 1.0)
        total += worth if unit.side == side else -worth
    total += position_score(state, side, frozenset())
    for enemy in state.enemies(side):
        total -= position_score(state, enemy, frozenset())
    return total


class TurnPlanner:
    """Napoleonic Chess's AI (its registry entry names it): the turn planner."""

    def __init__(self, ruleset: AnyRuleset) -> None:
        self.ruleset = ruleset

    def suggest(
        self, state: NapoleonicState, side: str, *, seconds: float, max_depth: int, seed: int
    ) -> Suggestion:
        """The next action of the plan for `side` (plans are whole phases: no depth cap)."""
        return plan_suggestion(self.ruleset, state, side, seconds=seconds, seed=seed)

    def evaluate(self, state: NapoleonicState, side: str) -> float:
        """Material and the planner's positional worth, own minus the enemy's."""
        return evaluate_napoleonic(self.ruleset, state, side)


strategy = TurnPlanner
