"""What the game-specific part of a state (`GameState.detail`) adds to the screen.

Only reading: reserves of the Game of War, the Napoleonic phase, declared attacks and
supports, and terrain that appears during play (redoubts). No rule is decided here.
"""

from __future__ import annotations

from wargame.v1 import game_pb2, napoleonic_pb2

PHASE_NAMES = {
    napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT: "deployment (commit)",
    napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL: "deployment (reveal)",
    napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED: "deployment (sealed)",
    napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT: "placement",
    napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT: "movement",
    napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION: "attack declaration",
    napoleonic_pb2.NAPOLEONIC_PHASE_DEFENCE: "defence",
    napoleonic_pb2.NAPOLEONIC_PHASE_ADVANCE: "advance",
    napoleonic_pb2.NAPOLEONIC_PHASE_GAME_OVER: "game over",
}


def state_tags(state: game_pb2.GameState) -> frozenset[str]:
    """The cell tags the state decides (so the board's own tags of those kinds give way).

    DescribeGame draws the board of the options; a game started from a set-up text has its
    Citadels (Game of War) and terrain (Napoleonic Chess) in its state.
    """
    which = state.WhichOneof("detail")
    if which == "war" and state.war.south_citadel and state.war.north_citadel:
        return frozenset({"citadel"})
    if which == "napoleonic":
        return frozenset({"hill", "redoubt", "redoubt_site"})
    return frozenset()


def terrain_tags(state: game_pb2.GameState) -> dict[str, tuple[str, ...]]:
    """Cell tags that come from the state rather than the board (Citadels, hills, redoubts)."""
    which = state.WhichOneof("detail")
    if which == "war" and "citadel" in state_tags(state):
        return {state.war.south_citadel: ("citadel",), state.war.north_citadel: ("citadel",)}
    if which != "napoleonic":
        return {}
    terrain = state.napoleonic.terrain
    tags: dict[str, tuple[str, ...]] = {}
    for hill in terrain.hills:
        tags[hill] = (*tags.get(hill, ()), "hill")
    for redoubt in terrain.redoubts:
        tags[redoubt.cell] = (*tags.get(redoubt.cell, ()), "redoubt")
    for site in terrain.constructions:
        tags[site.cell] = (*tags.get(site.cell, ()), "redoubt_site")
    return tags


def unit_cells(state: game_pb2.GameState) -> dict[str, str]:
    """Unit id -> cell, for games whose pieces have ids."""
    return {piece.id: piece.cell for piece in state.pieces if piece.id}


def moved_cells(state: game_pb2.GameState) -> frozenset[str]:
    """Cells of the units that already moved this turn (Napoleonic Chess)."""
    if state.WhichOneof("detail") != "napoleonic":
        return frozenset()
    cells = unit_cells(state)
    return frozenset(cells[unit] for unit in state.napoleonic.turn.moved if unit in cells)


def phase(state: game_pb2.GameState) -> int:
    """The Napoleonic phase (0 for other games)."""
    if state.WhichOneof("detail") != "napoleonic":
        return 0
    return int(state.napoleonic.phase)


def links(pairs: list[tuple[str, str]], cells: dict[str, str]) -> str:
    """Unit-to-unit links ("d4>e5, e6>e5") with each unit at its cell (its id if not found)."""
    return ", ".join(f"{cells.get(one, one)}>{cells.get(other, other)}" for one, other in pairs)


def extra_lines(state: game_pb2.GameState, name: dict[str, str]) -> list[str]:
    """Lines of game-specific status under the players ("Flying Machines in reserve: ...")."""
    which = state.WhichOneof("detail")
    lines: list[str] = []
    if which == "war":
        war = state.war
        south, north = name.get("south", "South"), name.get("north", "North")
        lines.append(
            f"Flying Machines in reserve: {south} {war.south_reserve} · {north} {war.north_reserve}"
        )
    elif which == "napoleonic":
        nap = state.napoleonic
        cells = unit_cells(state)
        active = name.get(nap.active_player, nap.active_player)
        if nap.phase == napoleonic_pb2.NAPOLEONIC_PHASE_GAME_OVER:
            lines.append(f"Turn {nap.turn_number + 1} · game over")
        else:
            lines.append(
                f"Turn {nap.turn_number + 1} · {active} · {PHASE_NAMES.get(nap.phase, '?')} phase"
            )
        moved = sorted(moved_cells(state), key=lambda cell: (cell[1:].zfill(3), cell))
        if moved and nap.phase == napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT:
            lines.append("moved this turn: " + ", ".join(moved))
        combat_phases = (
            napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION,
            napoleonic_pb2.NAPOLEONIC_PHASE_DEFENCE,
        )
        if nap.phase in combat_phases:
            attacks = [(a.attacker, a.target) for a in nap.turn.attacks]
            if attacks:
                lines.append("attacks: " + links(attacks, cells))
            supports = [(s.supporter, s.supported) for s in nap.turn.supports]
            if supports:
                lines.append("supports: " + links(supports, cells))
        vacant = [v.cell for v in nap.turn.vacancies if not v.filled_by]
        if vacant and nap.phase == napoleonic_pb2.NAPOLEONIC_PHASE_ADVANCE:
            lines.append("vacated: " + ", ".join(vacant))
        sites = [
            f"{c.cell} ({name.get(c.builder, c.builder)}, {c.turns_done} turn(s))"
            for c in nap.terrain.constructions
        ]
        if sites:
            lines.append("redoubts being built: " + ", ".join(sites))
    return lines
