"""What happened, for the players: the events of Napoleonic Chess's actions.

Each rule module reports its events as it applies an action (a move, a declaration, a
combat, a redoubt, a deployment); the events of one unit's doing are made alike here,
and the declaration's and the allocation's sentences too.
"""

from __future__ import annotations

from engine_service.rules.base import CombatTally, Event, EventKind
from engine_service.rules.napoleonic.state import NapoleonicState, Unit
from engine_service.rules.napoleonic.words import kind_name, unit_title


def unit_event(
    kind: EventKind,
    text: str,
    unit: Unit,
    cells: tuple[str, ...],
    *,
    combat: CombatTally | None = None,
) -> Event:
    """An event of one unit: its side, type and id, and the squares concerned."""
    return Event(
        kind, text, side=unit.side, cells=cells, piece=unit.kind, unit=unit.id, combat=combat
    )


def attack_event(state: NapoleonicState, attacker: Unit, target: Unit) -> Event:
    """The ATTACK_DECLARED event of a declaration entry."""
    names = state.geo.names
    text = (
        f"{unit_title(state, attacker)} attacks {target.side} {kind_name(target.kind)} "
        f"on {names[target.cell]}."
    )
    return unit_event(EventKind.ATTACK_DECLARED, text, attacker, squares(state, attacker, target))


def support_event(state: NapoleonicState, supporter: Unit, supported: Unit) -> Event:
    """The SUPPORT_ALLOCATED event of an allocation entry."""
    text = (
        f"{unit_title(state, supporter)} supports {kind_name(supported.kind)} on "
        f"{state.geo.names[supported.cell]} (+{state.stats(supporter).support})."
    )
    return unit_event(
        EventKind.SUPPORT_ALLOCATED, text, supporter, squares(state, supporter, supported)
    )


def squares(state: NapoleonicState, *units: Unit) -> tuple[str, ...]:
    """The names of the squares the units stand on."""
    return tuple(state.geo.names[unit.cell] for unit in units)
