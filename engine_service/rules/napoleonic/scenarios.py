"""Scenarios are data (spec 5 and 10): `scenarios.json` names each battle's board, armies,
fixed arrays, terrain and the option values it chooses.

A scenario's options become that scenario's defaults: the caller's explicit options and a
preset's values still win (`NapoleonicRuleset.resolve_options`).

A scenario lists its players (10.6) with their colour, alliance, army, the board edge they
deploy from and the stretch of it (`span`) that is theirs; a scenario without a list has
the two players of the standard game: red from the south, black from the north, each its
own alliance and army. Player ids come from `PALETTE`, each with the prefix of its units'
engine ids (`R_I1`, `U_C2`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from engine_service.rules.napoleonic.pieces import UNIT_TYPES, type_rank

SIDES = ("red", "black")  # red = south (deploys from rank 1 upward), black = north (1)
# Every player id a game may have (2 to 8 players), with the prefix of its units' ids.
# An alliance id: one word the position text can carry (docs/positions.md), whichever form
# of the state it came in.
ALLIANCE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
ALLIANCE_ID_IS = "a word of letters, digits, '_' and '-' (at most 32)"

PALETTE: Mapping[str, str] = {
    "red": "R",
    "black": "B",
    "blue": "U",
    "green": "G",
    "white": "W",
    "yellow": "Y",
    "purple": "P",
    "orange": "O",
}
COLOURS: Mapping[str, str] = {
    "red": "#b22222",
    "black": "#202020",
    "blue": "#1f4e9e",
    "green": "#2e7d32",
    "white": "#e8e8e8",
    "yellow": "#d4a017",
    "purple": "#6a1b9a",
    "orange": "#e65100",
}
EDGES = ("south", "north", "west", "east")  # the board edge a player deploys from


@dataclass(frozen=True, slots=True)
class ScenarioPlayer:
    """A player of a scenario: id, display name, colour, alliance, army (shared with
    divided command), deployment edge and the stretch of that edge (0-based, inclusive)."""

    id: str
    name: str
    colour: str
    alliance: str
    army: str
    edge: str
    span: tuple[int, int] | None = None


DEFAULT_PLAYERS: tuple[ScenarioPlayer, ...] = (
    ScenarioPlayer("red", "Red", COLOURS["red"], "red", "red", "south"),
    ScenarioPlayer("black", "Black", COLOURS["black"], "black", "black", "north"),
)


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
    players: tuple[ScenarioPlayer, ...] = DEFAULT_PLAYERS

    @property
    def player_ids(self) -> tuple[str, ...]:
        """The players' ids, in the scenario's order (the order of the armies)."""
        return tuple(p.id for p in self.players)

    def player(self, side: str) -> ScenarioPlayer | None:
        """The scenario's player with this id, if any."""
        return next((p for p in self.players if p.id == side), None)


def army_from_counts(counts: Mapping[str, int]) -> tuple[str, ...]:
    """An order of battle from {type: count}, in canonical (table) order."""
    units: list[str] = []
    for type_id in sorted(counts, key=type_rank):
        if type_id not in UNIT_TYPES:
            raise ValueError(f"unknown unit type {type_id!r}")
        units += [type_id] * int(counts[type_id])
    return tuple(units)


def _span(text: str | None) -> tuple[int, int] | None:
    """A stretch of an edge: files 'a-h' or ranks '3-10', as 0-based inclusive indices."""
    if not text:
        return None
    low, _sep, high = text.partition("-")
    if low.isalpha():
        return ord(low) - ord("a"), ord(high) - ord("a")
    return int(low) - 1, int(high) - 1


def _players(data: Any) -> tuple[ScenarioPlayer, ...]:
    if not data:
        return DEFAULT_PLAYERS
    players = tuple(
        ScenarioPlayer(
            id=p["id"],
            name=p["name"],
            colour=p.get("colour", COLOURS.get(p["id"], "#808080")),
            alliance=p["alliance"],
            army=p.get("army", p["id"]),
            edge=p["edge"],
            span=_span(p.get("span")),
        )
        for p in data
    )
    for p in players:
        if p.id not in PALETTE or p.edge not in EDGES:
            raise ValueError(f"scenario player {p.id!r} on edge {p.edge!r}")
    return players


def _read(raw: Mapping[str, Any]) -> dict[str, Scenario]:
    result: dict[str, Scenario] = {}
    for scenario_id, data in raw["scenarios"].items():
        terrain = data.get("terrain", {})
        players = _players(data.get("players"))
        sides = tuple(p.id for p in players)
        result[scenario_id] = Scenario(
            id=scenario_id,
            title=data["title"],
            description=data["description"],
            width=int(data["board"]["width"]),
            height=int(data["board"]["height"]),
            armies={side: army_from_counts(data["armies"][side]) for side in sides},
            setups={
                name: NamedSetup(
                    name=name,
                    description=setup.get("description", ""),
                    arrays={side: setup[side] for side in sides},
                )
                for name, setup in data.get("setups", {}).items()
            },
            hills=tuple(terrain.get("hills", ())),
            obstacles=tuple((a, b) for a, b in terrain.get("obstacles", ())),
            redoubts=tuple((r["square"], r["builder"]) for r in terrain.get("redoubts", ())),
            options=dict(data.get("options", {})),
            players=players,
        )
    return result


SCENARIOS: Mapping[str, Scenario] = _read(
    json.loads(resources.files(__package__).joinpath("scenarios.json").read_text(encoding="utf-8"))
)
DEFAULT_SCENARIO = "standard"
