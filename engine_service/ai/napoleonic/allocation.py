"""Combat against the best defence: the defender's allocation of supports (7.2, 7.3).

A declaration's combats are tallied by the rules (`combat.tally`, `combat.may_support`);
here the defender's best allocation is found exactly, by branch and bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from engine_service.ai.napoleonic.position import unit_value
from engine_service.ai.napoleonic.weights import ALLOCATION_NODES, PRESSURE, PRESSURE_CAP
from engine_service.rules.napoleonic import combat
from engine_service.rules.napoleonic.state import NapoleonicState, Unit


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


def _helpers(state: NapoleonicState, side: str, helper: str | None) -> set[str]:
    """Who may support a unit of `side`: `helper` alone if given, else `side` and, in a game
    of alliances (10.6), its allies still in the game."""
    if helper is not None:
        return {helper}
    if not state.multiplayer():
        return {side}
    return {side, *state.allies(side)}


def fights(
    state: NapoleonicState,
    attacks: Sequence[tuple[Unit, Unit]],
    given: Sequence[tuple[Unit, Unit]] = (),
    helper: str | None = None,
) -> list[Fight]:
    """The combats of a declaration (attacker at its cell, target), with the supports the
    defenders could still allocate (only `helper`'s, if given); `given` are supports
    already allocated."""
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
        friends = _helpers(state, target.side, helper)
        for unit in state.units:
            if (
                unit.side in friends
                and unit.id not in targets
                and unit.id not in assigned
                and combat.may_support(state, unit, target.cell)
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
    helper: str | None = None,
) -> Verdict:
    """A declaration's outcome against the best defence (by `helper` alone, if given)."""
    if not attacks:
        return Verdict(0.0, [], [])
    return best_allocation(fights(state, attacks, given, helper))
