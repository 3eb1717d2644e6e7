"""The rules' tables and the functions that build them at import: the unit types of 3.1
and 3.2 (`units.json`) and the scenarios of sections 5 and 10 (`scenarios.json`).

Other tests use the tables as they were built when the modules were first imported; these
call the builders themselves, so that a fault in a builder shows wherever it runs.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from engine_service.rules.napoleonic import pieces, scenarios
from engine_service.rules.napoleonic.scenarios import (
    COLOURS,
    SCENARIOS,
    army_from_counts,
)
from tests.engine_service.rules.napoleonic.helpers import spec_data

# 3.1 and 3.2: each type's name as the rulebook's tables write it, and its notation letter.
NAMES_AND_LETTERS = {
    "infantry": ("Infantry", "I"),
    "cavalry": ("Cavalry", "C"),
    "artillery": ("Artillery", "A"),
    "guards": ("Guards", "G"),
    "horse_artillery": ("Horse Artillery", "H"),
    "dragoons": ("Dragoons", "D"),
    "foot_guards": ("Foot Guards", "F"),
    "cuirassiers": ("Cuirassiers / Horse Guards", "K"),
    "heavy_infantry": ("Heavy Infantry", "Y"),
}


def _scenarios_json() -> dict[str, Any]:
    text = resources.files(scenarios.__package__).joinpath("scenarios.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def test_3_the_unit_table_is_the_rulebooks() -> None:
    table = pieces._read_table()
    rulebook = spec_data()["unit_types"]
    assert list(table) == list(rulebook)
    for type_id, row in rulebook.items():
        unit = table[type_id]
        assert (unit.name, unit.letter) == NAMES_AND_LETTERS[type_id]
        assert (unit.move_steps, unit.move_dirs) == (row["move"]["max_steps"], row["move"]["dirs"])
        assert (unit.attack_dirs, unit.attack) == (row["attack"]["dirs"], row["attack"]["value"])
        assert (unit.support_dirs, unit.support) == (
            row["support"]["dirs"],
            row["support"]["value"],
        )
        assert unit.defence == row["defence"]
        assert unit.traits == frozenset(row.get("traits", ()))
        assert unit.variant is bool(row.get("variant", False))
    assert table == pieces.UNIT_TYPES


def test_3_2_ruling_24_the_two_square_variant_is_horse_artillery_and_dragoons() -> None:
    table = pieces._read_table()
    assert {t.id for t in table.values() if t.two_square_variant} == {
        "horse_artillery",
        "dragoons",
    }
    # "Cuirassiers/Horse Guards" are one type (3.2): the second name is an alias.
    assert table["cuirassiers"].aliases == ("horse_guards",)


def test_10_the_scenarios_are_read_from_their_data() -> None:
    raw = _scenarios_json()
    read = scenarios._read(raw)
    assert read == dict(SCENARIOS)
    for scenario_id, data in raw["scenarios"].items():
        scenario = read[scenario_id]
        assert (scenario.title, scenario.description) == (data["title"], data["description"])
        assert scenario.description  # every scenario says what it is, for lobbies
    assert read["standard"].armies["red"] == (
        *["infantry"] * 8,
        *["cavalry"] * 4,
        "artillery",
        "artillery",
        "guards",
    )


def test_10_6_scenario_players_keep_their_edge_and_colour() -> None:
    read = scenarios._read(_scenarios_json())
    three_way = read["three_way"]
    assert [(p.id, p.edge) for p in three_way.players] == [
        ("red", "south"),
        ("black", "north"),
        ("green", "west"),
    ]
    assert [p.colour for p in three_way.players] == [
        COLOURS["red"],
        COLOURS["black"],
        COLOURS["green"],
    ]
    # A scenario may give a player its own colour; without one the palette's is used.
    own = scenarios._players(
        [
            {
                "id": "red",
                "name": "Wellington",
                "alliance": "a",
                "edge": "south",
                "colour": "#ff0000",
            },
            {"id": "blue", "name": "Blücher", "alliance": "a", "edge": "east"},
        ]
    )
    assert [(p.colour, p.edge) for p in own] == [("#ff0000", "south"), (COLOURS["blue"], "east")]
    with pytest.raises(ValueError, match="scenario player 'red' on edge 'up'"):
        scenarios._players([{"id": "red", "name": "Red", "alliance": "a", "edge": "up"}])


def test_10_4_a_scenario_may_place_redoubts() -> None:
    raw = _scenarios_json()
    standard = dict(raw["scenarios"]["standard"])
    standard["terrain"] = {"hills": ["d4"], "redoubts": [{"square": "e5", "builder": "black"}]}
    read = scenarios._read({"scenarios": {"fortified": standard}})["fortified"]
    assert read.hills == ("d4",) and read.redoubts == (("e5", "black"),)
    assert read.description == standard["description"]


def test_an_order_of_battle_is_in_table_order() -> None:
    assert army_from_counts({"guards": 1, "infantry": 2, "artillery": 1}) == (
        "infantry",
        "infantry",
        "artillery",
        "guards",
    )
    with pytest.raises(ValueError, match="'lancers' is no unit type"):
        army_from_counts({"lancers": 1})
