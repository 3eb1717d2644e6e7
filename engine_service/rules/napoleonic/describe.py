"""DescribeGame for Napoleonic Chess: the board of a scenario, its terrain and unit types."""

from __future__ import annotations

from engine_service.rules.base import (
    BoardDescription,
    CellInfo,
    CellShape,
    Feature,
    PieceKind,
    SideInfo,
)
from engine_service.rules.napoleonic.board import geometry
from engine_service.rules.napoleonic.notation import HELP
from engine_service.rules.napoleonic.options import parse_rows
from engine_service.rules.napoleonic.pieces import UNIT_TYPES, UnitType
from engine_service.rules.napoleonic.scenarios import EDGES, SCENARIOS
from engine_service.rules.napoleonic.words import dirs_words
from engine_service.rules.options import Options

SUMMARY = """\
Napoleonic Chess (Peter J Carroll, 2016). Each player-turn the active player may move any
of its units (infantry, artillery and Guards one square, cavalry one or two), then declares
attacks into adjacent squares: each unit attacks once, and the attack values on one target
add up. The defender then allocates supports from units that are not under attack. A
target is eliminated when the attack exceeds its defence plus terrain plus supports (ties
survive); one of its attackers may then advance into the vacated square. Eliminating the
enemy Guards wins. Terrain: hills and redoubts give +1 unless attacked from a hill or
redoubt; border obstacles give +1 if they protect from every attacker; artillery attacks
at 1 into a redoubt or across an obstacle."""


def _kind_summary(t: UnitType) -> str:
    moves = "1 square" if t.move_steps == 1 else "1 or 2 squares"
    return (
        f"moves {moves} {dirs_words(t.move_dirs)}; attacks {dirs_words(t.attack_dirs)} at "
        f"{t.attack}; supports {dirs_words(t.support_dirs)} at {t.support}; defence {t.defence}"
    )


def describe_board(title: str, sides: tuple[SideInfo, ...], options: Options) -> BoardDescription:
    """The board of the chosen scenario for drawing (cell centres at x+0.5, y+0.5)."""
    scenario = SCENARIOS[str(options["scenario"])]
    geo = geometry(scenario.width, scenario.height)
    rows = parse_rows(str(options["deployment_rows"])) or (2, 3)
    hills = set(scenario.hills)
    redoubts = {square for square, _owner in scenario.redoubts}
    cells: list[CellInfo] = []
    for cell, name in enumerate(geo.names):
        x, y = geo.xy(cell)
        tags = ["dark" if (x + y) % 2 == 0 else "light"]
        if name in hills:
            tags.append("hill")
        if name in redoubts:
            tags.append("redoubt")
        for index, side in enumerate(sides):
            player = scenario.player(side.id)
            edge = EDGES.index(player.edge) if player else index
            span = player.span if player else None
            if rows[0] <= geo.rank_from_edge(cell, edge) <= rows[1] and (
                span is None or span[0] <= geo.along_edge(cell, edge) <= span[1]
            ):
                tags.append(f"deployment:{side.id}")
        cells.append(CellInfo(name, x + 0.5, y + 0.5, CellShape.SQUARE, tuple(tags)))
    features: list[Feature] = []
    for a, b in scenario.obstacles:
        ax, ay = geo.xy(geo.index[a])
        bx, by = geo.xy(geo.index[b])
        if ax == bx:  # a horizontal edge between two ranks
            y = max(ay, by)
            points = ((float(ax), float(y)), (float(ax + 1), float(y)))
        else:  # a vertical edge between two files
            x = max(ax, bx)
            points = ((float(x), float(ay)), (float(x), float(ay + 1)))
        features.append(Feature("obstacle", points, (a, b), "border obstacle"))
    kinds = tuple(
        PieceKind(t.id, t.name, t.letter, t.glyph, _kind_summary(t)) for t in UNIT_TYPES.values()
    )
    return BoardDescription(
        game="napoleonic",
        title=f"{title}: {scenario.title}",
        width=float(geo.width),
        height=float(geo.height),
        cells=tuple(cells),
        features=tuple(features),
        piece_kinds=kinds,
        sides=sides,
        summary=SUMMARY + "\n\n" + scenario.description,
        notation=HELP,
    )
