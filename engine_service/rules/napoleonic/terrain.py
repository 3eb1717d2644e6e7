"""Terrain (spec 10.4): Hills, Redoubts (built over turns) and Square Border Obstacles.

Obstacles sit on the edge between two orthogonal neighbours. Whether an attack (or, with
the blocking options, a step or a support) goes "across" one follows 10.4 and ruling 29:
orthogonally, the shared edge; diagonally, the defender's edges meeting at that corner
(either of them by default, both with `diagonal_obstacle_rule = both`).
"""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import BeginRedoubt, NapoleonicAction
from engine_service.rules.napoleonic.board import CORNER_EDGES, Geometry
from engine_service.rules.napoleonic.state import Construction, NapoleonicState, Terrain
from engine_service.rules.napoleonic.words import side_title, unit_words


def across_obstacle(
    geo: Geometry, obstacles: frozenset[tuple[int, int]], source: int, into: int, both: bool
) -> bool:
    """Whether going from `source` into the adjacent `into` crosses an obstacle (ruling 29)."""
    if not obstacles:
        return False
    direction = geo.direction_to[into].get(source)  # seen from the defender's square
    if direction is None:
        return False
    if direction in CORNER_EDGES:
        first, second = CORNER_EDGES[direction]
        n1 = geo.step[first][into]
        n2 = geo.step[second][into]
        has1 = n1 >= 0 and geo.edge_key(into, n1) in obstacles
        has2 = n2 >= 0 and geo.edge_key(into, n2) in obstacles
        return (has1 and has2) if both else (has1 or has2)
    return geo.edge_key(source, into) in obstacles


def step_blocked(state: NapoleonicState, a: int, b: int) -> bool:
    """With obstacles_block_movement: whether a one-square step a -> b crosses an obstacle.

    A step is blocked when it would count as "across" seen from either square, so a
    diagonal step past an obstacle's end is blocked under the `either` rule.
    """
    obstacles = state.terrain.obstacles
    if not obstacles:
        return False
    both = state.rules.diagonal_both
    return across_obstacle(state.geo, obstacles, a, b, both) or across_obstacle(
        state.geo, obstacles, b, a, both
    )


# --- redoubts ---------------------------------------------------------------------------


def check_begin_redoubt(state: NapoleonicState, side: str, square: str) -> int:
    """The cell of a legal BeginRedoubt, or REDOUBT_NOT_ALLOWED naming the rule (10.4)."""
    rules = state.rules
    if rules.redoubt_build_turns == 0:
        raise RuleError(
            Reason.REDOUBT_NOT_ALLOWED,
            "redoubts cannot be built in this game (option redoubt_build_turns is off)",
        )
    cell = state.geo.index.get(square)
    if cell is None:
        raise RuleError(Reason.DESTINATION_OFF_BOARD, f"{square} is not a square of this board")
    unit = state.at()[cell]
    if unit is None:
        raise RuleError(
            Reason.REDOUBT_NOT_ALLOWED,
            f"no unit stands on {square}: a redoubt is begun on a square one's unit occupies",
        )
    if unit.side != side:
        raise RuleError(
            Reason.NOT_OWN_UNIT,
            f"{unit_words(state, unit)} is not {side}'s: {side} cannot dig there",
        )
    terrain = state.terrain
    if cell in terrain.redoubt_owner:
        raise RuleError(Reason.REDOUBT_NOT_ALLOWED, f"{square} already has a redoubt")
    if cell in terrain.sites:
        raise RuleError(Reason.REDOUBT_NOT_ALLOWED, f"a redoubt is already being built on {square}")
    if rules.max_sites:
        mine = sum(1 for c in terrain.constructions if c.builder == side)
        if mine >= rules.max_sites:
            raise RuleError(
                Reason.REDOUBT_NOT_ALLOWED,
                f"{side} already has {mine} redoubt site(s) under construction, the most "
                f"max_sites_per_side allows",
            )
    return cell


def begin_redoubt(state: NapoleonicState, side: str, cell: int) -> tuple[Terrain, Event]:
    """The terrain with a new site on `cell` (its occupant noted) and the event."""
    unit = state.at()[cell]
    assert unit is not None
    terrain = state.terrain
    site = Construction(cell=cell, builder=side, turns_done=0, unit=unit.id)
    constructions = tuple(sorted((*terrain.constructions, site), key=lambda c: c.cell))
    name = state.geo.names[cell]
    event = Event(
        EventKind.REDOUBT_STARTED,
        f"{side_title(side)} begins a redoubt on {name} ({state.rules.redoubt_build_turns} "
        f"turns of occupation to complete).",
        side=side,
        cells=(name,),
        unit=unit.id,
    )
    return (
        Terrain(terrain.hills, terrain.redoubts, constructions, terrain.obstacles),
        event,
    )


def _site_event(kind: EventKind, text: str, site: Construction, name: str) -> Event:
    """An event of a redoubt site (on the square `name`): its builder's."""
    return Event(kind, text, side=site.builder, cells=(name,))


def end_of_turn_redoubts(state: NapoleonicState) -> tuple[Terrain, list[Event], bool]:
    """Redoubt bookkeeping at the end of a player-turn (10.4); also whether one completed.

    Every site that is empty or held by another player is dropped (with same_unit: held
    by another unit); at the end of the builder's own turn a held site gains a turn and
    becomes a redoubt at `redoubt_build_turns`. With redoubt_owner = last_occupant a
    completed redoubt passes to whoever holds it.
    """
    terrain = state.terrain
    if not terrain.constructions and not (state.rules.redoubt_owner_last and terrain.redoubts):
        return terrain, [], False
    at = state.at()
    names = state.geo.names
    rules = state.rules
    events: list[Event] = []
    sites: list[Construction] = []
    redoubts = dict(terrain.redoubts)
    completed = False
    for site in terrain.constructions:
        occupant = at[site.cell]
        name = names[site.cell]
        if (
            occupant is None
            or occupant.side != site.builder
            or (rules.redoubt_same_unit and occupant.id != site.unit)
        ):
            why = "empty" if occupant is None else f"held by {unit_words(state, occupant)}"
            events.append(
                _site_event(
                    EventKind.REDOUBT_ABANDONED,
                    f"The redoubt site on {name} is {why} at the end of the turn and is dropped.",
                    site,
                    name,
                )
            )
            continue
        if state.active != site.builder:
            sites.append(site)
            continue
        done = site.turns_done + 1
        if done >= rules.redoubt_build_turns:
            redoubts[site.cell] = site.builder
            completed = True
            events.append(
                _site_event(
                    EventKind.REDOUBT_COMPLETED,
                    f"{side_title(site.builder)} completes a redoubt on {name}.",
                    site,
                    name,
                )
            )
        else:
            sites.append(Construction(site.cell, site.builder, done, site.unit))
            events.append(
                _site_event(
                    EventKind.REDOUBT_PROGRESS,
                    f"The redoubt on {name} has {done} of {rules.redoubt_build_turns} turns of "
                    "occupation.",
                    site,
                    name,
                )
            )
    if rules.redoubt_owner_last:
        for cell in list(redoubts):
            occupant = at[cell]
            if occupant is not None:
                redoubts[cell] = occupant.side
    new = Terrain(terrain.hills, tuple(sorted(redoubts.items())), tuple(sites), terrain.obstacles)
    return new, events, completed


def legal_redoubts(state: NapoleonicState, side: str) -> list[NapoleonicAction]:
    rules = state.rules
    if rules.redoubt_build_turns == 0:
        return []
    ground = state.terrain
    if rules.max_sites and sum(1 for c in ground.constructions if c.builder == side) >= (
        rules.max_sites
    ):
        return []
    names = state.geo.names
    return [
        BeginRedoubt(side, names[u.cell])
        for u in sorted(state.units, key=lambda u: u.cell)
        if u.side == side and u.cell not in ground.redoubt_owner and u.cell not in ground.sites
    ]
