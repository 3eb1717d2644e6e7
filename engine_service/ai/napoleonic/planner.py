"""The turn plan (spec 6, 7): kills sure against the best defence, moves for position, the
declaration; the defence's supports and the advances.

For each enemy unit, Guards first, the planner looks for attackers that can stand next to
it this turn (in their attack directions) and for units that can attack its possible
supporters, since a unit under attack cannot support (7.2). A kill is planned only when
the attack exceeds the defence plus every support the defender could still give (7.3:
ties survive). The remaining units move for position (`position.unit_score`); then every
unit that can attack does, the targets chosen against the defender's best allocation
(`allocation`). Several orders of targets give several plans; the best one is kept.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engine_service.ai.budget import Budget
from engine_service.ai.evaluation import WIN
from engine_service.ai.napoleonic.allocation import Verdict, judge
from engine_service.ai.napoleonic.lookahead import answered_value
from engine_service.ai.napoleonic.position import (
    distance,
    outlook,
    position_score,
    unit_score,
    unit_value,
)
from engine_service.ai.napoleonic.weights import (
    CANDIDATE_PLANS,
    KILL_SEARCH_NODES,
    MOVE_COST,
    POSITION_NOISE,
)
from engine_service.rules.base import AnyRuleset
from engine_service.rules.napoleonic import combat, movement
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    EndPhase,
    Move,
    NapoleonicAction,
    Support,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase, Unit


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
    budget: Budget
    nodes: int = 0
    reach: dict[str, list[int]] = field(default_factory=dict)
    # Per own unit, per square of its reach: the squares it could attack from there.
    strikes: dict[str, dict[int, frozenset[int]]] = field(default_factory=dict)
    in_reach: set[int] = field(default_factory=set)  # squares some own unit could attack
    noise: float = 0.0  # a weaker level's noise on candidate values (`ai/levels.py`)
    effort: float = 1.0  # a weaker level's share of the work limits (kills, candidates)
    seed: int = 0
    wins_in: int = 0  # 1: the plan surely eliminates an enemy commander; -1: own is lost
    lookahead: bool = False  # judge each candidate turn by the enemy's answer to it
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"napoleonic planner {self.seed} {self.noise}")

    def jitter(self, share: float = 1.0) -> float:
        """Noise for a candidate's value (0 at full strength)."""
        return self.rng.gauss(0.0, self.noise * share) if self.noise else 0.0

    def out_of_time(self) -> bool:
        """The budget as a safety net (the work limits keep plans deterministic)."""
        return self.budget.spent()

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
        attack0 = sum(
            combat.attack_value(state, state.stats(u), cell, t_cell) for u, cell in planned
        )
        supporters = [
            (s, state.stats(s).support)
            for s in state.units
            if s.side == target.side
            and s.id != target.id
            and s.id not in attacked
            and combat.may_support(state, s, t_cell)
        ]
        entries: list[tuple[Unit, list[tuple[int, str, int]]]] = []
        for unit in free:
            stats = state.stats(unit)
            options: list[tuple[int, str, int]] = []
            for cell, near in self.strikes.get(unit.id, {}).items():
                if cell in taken and cell != unit.cell:
                    continue
                if t_cell in near:
                    options.append(
                        (cell, target.id, combat.attack_value(state, stats, cell, t_cell))
                    )
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
        budget = limit = int(KILL_SEARCH_NODES * self.effort)
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
        self.nodes += limit - max(budget, 0)
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
                score += self.jitter(POSITION_NOISE)
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

    def turn_plan(self, order: list[Unit]) -> tuple[float, list[NapoleonicAction], bool]:
        """One candidate plan for the whole turn: its score, its actions, and whether it
        surely eliminates an enemy commander (a win this turn)."""
        jobs = self.offensive(order)
        state, actions = self.make_moves(self.state, jobs)
        busy = {job.unit.id for job in jobs}
        state, more = self.position_moves(state, busy)
        actions += more
        attacks, verdict = self.declaration(state, jobs)
        gone = {u.id for u in verdict.eliminated}
        score = verdict.score + position_score(state, self.side, gone) + self.jitter()
        self.nodes += 1
        already = set(self.state.turn.attacks)
        new_attacks = [(a, t) for a, t in attacks if (a.id, t.id) not in already]
        waiting = [p for p in self.state.turn.pending_players if p != self.side]
        if state.phase is Phase.MOVEMENT and waiting:
            # 10.6, merged_side_turn: attacks wait until every commander has moved; the
            # declaration is planned again once the phase has changed.
            actions.append(EndPhase(self.side))
            return score, actions, False
        for attacker, target in new_attacks:
            actions.append(Attack(self.side, attacker.id, target.id))
        if state.phase is Phase.MOVEMENT and not new_attacks:
            actions.append(EndPhase(self.side))  # movement ends: attack declaration
        actions.append(EndPhase(self.side))  # the declaration is complete
        return score, actions, self.commander_among(verdict.eliminated, own=False)

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
        for first in others[: max(1, round(CANDIDATE_PLANS * self.effort)) - 1]:
            result.append([first] + [t for t in targets if t.id != first.id])
        return result

    def _reachable_targets(self, targets: list[Unit]) -> list[Unit]:
        """The targets some own unit could attack this turn."""
        return [t for t in targets if t.cell in self.in_reach]

    def plan_turn(self) -> tuple[float, list[NapoleonicAction]]:
        """The best candidate plan for the movement and attack phases."""
        self.compute_reach()
        best: tuple[float, list[NapoleonicAction], bool] | None = None
        for order in self.orders():
            if best is not None and self.out_of_time():
                break
            candidate = self.turn_plan(order)
            if self.lookahead and candidate[2]:
                # A sure win this turn needs no look further: it outranks every other
                # plan, and sure wins rank among themselves as they did (fewest moves).
                candidate = (WIN + candidate[0], candidate[1], candidate[2])
            elif self.lookahead:
                value = answered_value(
                    self.ruleset, self.state, self.side, candidate[1], self.answer
                )
                candidate = (value + self.jitter(), candidate[1], candidate[2])
            if best is None or candidate[0] > best[0] + 1e-9:
                best = candidate
        assert best is not None
        score, actions, wins = best
        self.wins_in = 1 if wins else 0
        return score, actions

    def answer(self, state: NapoleonicState, side: str) -> list[NapoleonicAction]:
        """The actions `side` plays in `state`'s phase, planned as this planner would (without
        looking further ahead): the phases that follow a candidate turn."""
        planner = Planner(
            self.ruleset, state, side, self.budget, effort=self.effort, seed=self.seed
        )
        phase = state.phase
        if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION):
            actions = planner.plan_turn()[1]
        elif phase is Phase.DEFENCE:
            actions = planner.plan_defence()[1]
        elif phase is Phase.ADVANCE:
            actions = planner.plan_advance()[1]
        else:
            actions = []
        self.nodes += planner.nodes
        return actions

    def commander_among(self, units: list[Unit], own: bool) -> bool:
        """Whether `units` hold a commander of this side (`own`) or of an enemy."""
        state = self.state
        return any(state.stats(u).is_commander and (u.side == self.side) == own for u in units)

    # -- defence and advance -------------------------------------------------------------

    def plan_defence(self) -> tuple[float, list[NapoleonicAction]]:
        """Supports that save the most valuable attacked units."""
        state = self.state
        names = state.by_id()
        attacks = [(names[a], names[t]) for a, t in state.turn.attacks if a in names and t in names]
        if state.multiplayer():  # 10.6: defend the alliance's units with one's own supports
            alliance = state.alliance_of(self.side)
            own_attacks = [(a, t) for a, t in attacks if state.alliance_of(t.side) == alliance]
            given = [
                (names[s], names[t]) for s, t in state.turn.supports if s in names and t in names
            ]
            verdict = judge(state, own_attacks, given, helper=self.side)
        else:
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
        self.wins_in = -1 if self.commander_among(verdict.eliminated, own=True) else 0
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
