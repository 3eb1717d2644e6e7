"""ListGames and DescribeGame carry every field of the rulesets' own descriptions.

For each game, the proto answer is compared field by field with what the ruleset says
(sides, options with kinds, allowed values and rulings, presets, cells, features, piece
kinds), so a field dropped or blanked on the way to the wire fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.convert.describe import describe, event, game_info
from engine_service.rules import rulesets
from engine_service.rules.base import AnyRuleset, Event, EventKind
from engine_service.rules.napoleonic.actions import Attack, EndPhase, Support
from tests.conftest import TEST_SEAL_KEY
from wargame.v1 import board_pb2, game_pb2

RULESETS = rulesets(TEST_SEAL_KEY)


@pytest.fixture(params=sorted(RULESETS))
def ruleset(request: pytest.FixtureRequest) -> AnyRuleset:
    return RULESETS[request.param]


def test_game_info_carries_title_sides_options_and_presets(ruleset: AnyRuleset) -> None:
    info = game_info(ruleset)
    defaults = ruleset.resolve_options({})
    assert (info.id, info.title, info.summary) == (
        ruleset.id,
        ruleset.title,
        ruleset.describe(defaults).summary,
    )
    assert info.title and info.summary
    assert [(s.id, s.name, s.colour) for s in info.sides] == [
        (s.id, s.name, s.colour) for s in ruleset.sides
    ]
    assert all(s.name and s.colour for s in info.sides)
    assert [
        (
            o.name,
            board_pb2.OptionKind.Name(o.kind),
            o.default_value,
            list(o.allowed),
            o.allowed_text,
            o.description,
            o.ruling,
        )
        for o in info.options
    ] == [
        (
            spec.name,
            f"OPTION_KIND_{spec.kind.name}",
            spec.default,
            list(spec.allowed),
            spec.describe_allowed(),
            spec.description,
            spec.ruling,
        )
        for spec in ruleset.option_specs
    ]
    assert any(o.ruling for o in info.options) and any(o.allowed for o in info.options)
    assert {p.name: (p.description, dict(p.options)) for p in info.presets} == {
        name: (f"{name} preset", dict(values)) for name, values in ruleset.presets.items()
    }


def test_the_board_carries_cells_features_piece_kinds_and_sides(ruleset: AnyRuleset) -> None:
    options = ruleset.resolve_options({})
    core = ruleset.describe(options)
    out = describe(ruleset, options)
    assert (out.game, out.title, out.width, out.height, out.summary, out.notation) == (
        core.game,
        core.title,
        core.width,
        core.height,
        core.summary,
        core.notation,
    )
    assert [
        (c.name, c.x, c.y, board_pb2.CellShape.Name(c.shape), list(c.tags), c.label)
        for c in out.cells
    ] == [
        (c.name, c.x, c.y, f"CELL_SHAPE_{c.shape.value}", list(c.tags), c.label) for c in core.cells
    ]
    assert len({(c.x, c.y) for c in out.cells}) == len(out.cells)  # every cell has its place
    assert [
        (f.kind, list(f.cells), f.label, [(p.x, p.y) for p in f.points]) for f in out.features
    ] == [(f.kind, list(f.cells), f.label, list(f.points)) for f in core.features]
    assert [(k.id, k.name, k.letter, k.glyph, k.summary) for k in out.piece_kinds] == [
        (k.id, k.name, k.letter, k.glyph, k.summary) for k in core.piece_kinds
    ]
    assert all(k.summary for k in out.piece_kinds)
    assert [(s.id, s.name, s.colour) for s in out.sides] == [
        (s.id, s.name, s.colour) for s in core.sides
    ]


def test_battle_board_features_have_their_points_and_labels() -> None:
    # The Game of Battle board has rivers and a bridge: features with points to draw.
    ruleset = RULESETS["battle"]
    out = describe(ruleset, ruleset.resolve_options({}))
    assert out.features and all(len(f.points) >= 1 for f in out.features)
    assert any(f.cells for f in out.features)


def test_events_reach_the_wire_field_by_field_combat_tallies_included() -> None:

    ruleset = RULESETS["napoleonic"]
    setup = (
        "board 8x8; red: d4=A#R_A c5=I#R_I h1=G#R_G; black: d5=I#B_I d6=I#B_S a8=G#B_G; hills: d5"
    )
    options = ruleset.resolve_options({"auto_skip_defence": "false"})
    state = ruleset.new_game(options, setup)
    events: list[Event] = []
    for action in (
        Attack("red", "R_A", "B_I"),
        Attack("red", "R_I", "B_I"),
        EndPhase("red"),
        Support("black", "B_S", "B_I"),
        EndPhase("black"),
    ):
        state, more = ruleset.apply(state, action)
        events += more
    assert {e.kind for e in events} >= {EventKind.ATTACK_DECLARED, EventKind.COMBAT_RESOLVED}
    for item in events:
        out = event(item)
        assert game_pb2.EventKind.Name(out.kind) == f"EVENT_KIND_{item.kind.value}"
        assert (out.text, out.side, list(out.cells), out.piece_kind, out.unit) == (
            item.text,
            item.side or "",
            list(item.cells),
            item.piece or "",
            item.unit or "",
        )
        tally = item.combat
        assert out.HasField("combat") is (tally is not None)
        if tally is None:
            continue
        combat = out.combat

        def parts(items: Any) -> list[tuple[str, str, str, int, str]]:
            return [(c.unit, c.kind, c.cell, c.value, c.note) for c in items]

        assert (combat.target, combat.target_kind, combat.cell, combat.defence) == (
            tally.target,
            tally.target_kind,
            tally.cell,
            tally.defence,
        )
        assert parts(combat.attackers) == parts(tally.attackers)
        assert parts(combat.supports) == parts(tally.supports) and combat.supports
        assert [(b.source, b.value) for b in combat.bonuses] == list(tally.bonuses) == [("hill", 1)]
        assert (combat.attack_total, combat.defence_total, combat.eliminated) == (
            tally.attack_total,
            tally.defence_total,
            tally.eliminated,
        )


def test_an_event_without_side_piece_or_unit_has_empty_fields() -> None:

    out = event(Event(EventKind.GAME_OVER, "Draw."))
    assert (out.side, out.piece_kind, out.unit, list(out.cells)) == ("", "", "", [])
    assert not out.HasField("combat")
