"""Proto forms of what every game describes the same way: game info, boards and events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine_service.rules.base import (
    AnyRuleset,
    BoardDescription,
    Contribution,
    Event,
    EventKind,
    SideInfo,
)
from engine_service.rules.options import Options
from wargame.v1 import board_pb2, game_pb2


def game_info(ruleset: AnyRuleset) -> board_pb2.GameInfo:
    """A ruleset's id, title, sides, options and presets."""
    defaults = ruleset.resolve_options({})
    info = board_pb2.GameInfo(
        id=ruleset.id, title=ruleset.title, summary=ruleset.describe(defaults).summary
    )
    add_sides(info.sides, ruleset.sides)
    for scenario in ruleset.scenarios():
        item = info.scenarios.add(
            name=scenario.name, title=scenario.title, description=scenario.description
        )
        add_sides(item.sides, scenario.sides)
    for spec in ruleset.option_specs:
        info.options.add(
            name=spec.name,
            kind=board_pb2.OptionKind.Value(f"OPTION_KIND_{spec.kind.name}"),
            default_value=spec.default,
            allowed=list(spec.allowed),
            allowed_text=spec.describe_allowed(),
            description=spec.description,
            ruling=spec.ruling,
        )
    for name, values in ruleset.presets.items():
        preset = info.presets.add(name=name, description=f"{name} preset")
        preset.options.update(values)
    return info


def add_sides(out: Any, sides: Iterable[SideInfo]) -> None:
    """Append sides to a repeated SideInfo field (each side its own alliance if unset)."""
    for side in sides:
        out.add(id=side.id, name=side.name, colour=side.colour, alliance=side.alliance or side.id)


def game_info_for(
    ruleset: AnyRuleset, info: board_pb2.GameInfo, options: Options
) -> board_pb2.GameInfo:
    """The game's info with the sides of the game these options make (DescribeGame)."""
    sides = ruleset.sides_of(options)
    if sides == ruleset.sides:
        return info
    out = board_pb2.GameInfo()
    out.CopyFrom(info)
    del out.sides[:]
    add_sides(out.sides, sides)
    return out


def board(description: BoardDescription) -> board_pb2.BoardDescription:
    """A board description for drawing."""
    out = board_pb2.BoardDescription(
        game=description.game,
        title=description.title,
        width=description.width,
        height=description.height,
        summary=description.summary,
        notation=description.notation,
    )
    for cell in description.cells:
        out.cells.add(
            name=cell.name,
            x=cell.x,
            y=cell.y,
            shape=board_pb2.CellShape.Value(f"CELL_SHAPE_{cell.shape.value}"),
            tags=list(cell.tags),
            label=cell.label,
        )
    for feature in description.features:
        item = out.features.add(kind=feature.kind, cells=list(feature.cells), label=feature.label)
        for x, y in feature.points:
            item.points.add(x=x, y=y)
    for kind in description.piece_kinds:
        out.piece_kinds.add(
            id=kind.id, name=kind.name, letter=kind.letter, glyph=kind.glyph, summary=kind.summary
        )
    add_sides(out.sides, description.sides)
    return out


def describe(ruleset: AnyRuleset, options: Options) -> board_pb2.BoardDescription:
    """The board of a ruleset under some options."""
    return board(ruleset.describe(options))


_EVENT_KINDS: dict[EventKind, game_pb2.EventKind.ValueType] = {
    kind: game_pb2.EventKind.Value(f"EVENT_KIND_{kind.value}") for kind in EventKind
}


def _contribution(part: Contribution, out: game_pb2.Contribution) -> None:
    out.unit = part.unit
    out.kind = part.kind
    out.cell = part.cell
    out.value = part.value
    out.note = part.note


def event(item: Event, out: game_pb2.Event | None = None) -> game_pb2.Event:
    """An event for the wire (written into `out` when given: a response's own field)."""
    if out is None:
        out = game_pb2.Event()
    out.kind = _EVENT_KINDS[item.kind]
    out.text = item.text
    if item.side:
        out.side = item.side
    out.cells.extend(item.cells)
    if item.piece:
        out.piece_kind = item.piece
    if item.unit:
        out.unit = item.unit
    tally = item.combat
    if tally is not None:
        combat = out.combat
        combat.target = tally.target
        combat.target_kind = tally.target_kind
        combat.cell = tally.cell
        for part in tally.attackers:
            _contribution(part, combat.attackers.add())
        combat.defence = tally.defence
        for part in tally.supports:
            _contribution(part, combat.supports.add())
        for source, value in tally.bonuses:
            combat.bonuses.add(source=source, value=value)
        combat.attack_total = tally.attack_total
        combat.defence_total = tally.defence_total
        combat.eliminated = tally.eliminated
    return out
