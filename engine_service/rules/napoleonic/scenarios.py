"""Scenarios are data (spec 5 and 10): `scenarios.json` names each battle's board, armies,
fixed arrays, terrain and the option values it chooses.

A scenario's options become that scenario's defaults: the caller's explicit options and a
preset's values still win (`NapoleonicRuleset.resolve_options`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from engine_service.rules.napoleonic.pieces import UNIT_TYPES, type_rank

SIDES = ("red", "black")  # red = south (deploys from rank 1 upward), black = north (1)


@dataclass(frozen=True, slots=True)
class NamedSetup:
    """A fixed array of a scenario: per side, the array text ('a2=A#R_A1 ...')."""

    name: str
    description: str
    arrays: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Scenario:
    """One battle: board size, order of battle per side, arrays, terrain and options."""

    id: str
    title: str
    description: str
    width: int
    height: int
    armies: Mapping[str, tuple[str, ...]]  # side -> unit types, one per unit, canonical order
    setups: Mapping[str, NamedSetup]
    hills: tuple[str, ...]
    obstacles: tuple[tuple[str, str], ...]
    redoubts: tuple[tuple[str, str], ...]  # (square, builder)
    options: Mapping[str, str]


def army_from_counts(counts: Mapping[str, int]) -> tuple[str, ...]:
    """An order of battle from {type: count}, in canonical (table) order."""
    units: list[str] = []
    for type_id in sorted(counts, key=type_rank):
        if type_id not in UNIT_TYPES:
            raise ValueError(f"unknown unit type {type_id!r}")
        units += [type_id] * int(counts[type_id])
    return tuple(units)


def _read(raw: Mapping[str, Any]) -> dict[str, Scenario]:
    result: dict[str, Scenario] = {}
    for scenario_id, data in raw["scenarios"].items():
        terrain = data.get("terrain", {})
        result[scenario_id] = Scenario(
            id=scenario_id,
            title=data["title"],
            description=data["description"],
            width=int(data["board"]["width"]),
            height=int(data["board"]["height"]),
            armies={side: army_from_counts(data["armies"][side]) for side in SIDES},
            setups={
                name: NamedSetup(
                    name=name,
                    description=setup.get("description", ""),
                    arrays={side: setup[side] for side in SIDES},
                )
                for name, setup in data.get("setups", {}).items()
            },
            hills=tuple(terrain.get("hills", ())),
            obstacles=tuple((a, b) for a, b in terrain.get("obstacles", ())),
            redoubts=tuple((r["square"], r["builder"]) for r in terrain.get("redoubts", ())),
            options=dict(data.get("options", {})),
        )
    return result


SCENARIOS: Mapping[str, Scenario] = _read(
    json.loads(resources.files(__package__).joinpath("scenarios.json").read_text(encoding="utf-8"))
)
DEFAULT_SCENARIO = "standard"
