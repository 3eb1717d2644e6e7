"""The unit-type table (spec 3.1 and 3.2) as data: moves, attack, support, defence, traits.

`units.json` holds Carroll's values. Options that rule on variant units (3.2) do not edit
the table; `UnitStats` is the table row as a game's options make it (`stats_for`): whether
Horse Artillery and Heavy Infantry count as artillery, the Cuirassiers' support value and
which types carry the commander trait.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from engine_service.memo import memo
from engine_service.rules.board import ALL_DIRECTIONS, DIAGONAL, ORTHOGONAL

DIRECTION_SETS: dict[str, tuple[str, ...]] = {
    "orth": ORTHOGONAL,
    "diag": DIAGONAL,
    "all": ALL_DIRECTIONS,
}
DIRECTION_WORDS = {"orth": "orthogonally", "diag": "diagonally", "all": "in any direction"}

ARTILLERY = "artillery"  # trait: the terrain penalties of 10.4 apply
COMMANDER = "commander"  # trait: losing it loses the game (8)


@dataclass(frozen=True, slots=True)
class UnitType:
    """One row of the unit-type table, as Carroll gives it."""

    id: str
    name: str
    letter: str
    glyph: str
    move_steps: int
    move_dirs: str  # "orth" | "diag" | "all"
    attack_dirs: str
    attack: int
    support_dirs: str
    support: int
    defence: int
    traits: frozenset[str]
    points: int
    variant: bool
    two_square_variant: bool
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnitStats:
    """A unit type's effective values under one game's options (the hot-path view)."""

    id: str
    name: str
    letter: str
    move_steps: int
    move_dirs: tuple[str, ...]  # in a fixed order: iteration must not depend on hashing
    move_dirs_key: str
    exactly_two: bool  # variant_two_square_move = exactly_two applies to this type
    attack_dirs: tuple[str, ...]
    attack_dirs_key: str
    attack: int
    support_dirs: tuple[str, ...]
    support_dirs_key: str
    support: int
    defence: int
    is_artillery: bool
    is_commander: bool
    points: int


def _read_table() -> dict[str, UnitType]:
    raw: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("units.json").read_text(encoding="utf-8")
    )
    table: dict[str, UnitType] = {}
    for type_id, row in raw["types"].items():
        table[type_id] = UnitType(
            id=type_id,
            name=row["name"],
            letter=row["letter"],
            glyph=row["glyph"],
            move_steps=int(row["move"]["max_steps"]),
            move_dirs=row["move"]["dirs"],
            attack_dirs=row["attack"]["dirs"],
            attack=int(row["attack"]["value"]),
            support_dirs=row["support"]["dirs"],
            support=int(row["support"]["value"]),
            defence=int(row["defence"]),
            traits=frozenset(row.get("traits", ())),
            points=int(row["points"]),
            variant=bool(row.get("variant", False)),
            two_square_variant=bool(row.get("two_square_variant", False)),
            aliases=tuple(row.get("aliases", ())),
        )
    return table


UNIT_TYPES: Mapping[str, UnitType] = _read_table()
TYPE_ORDER: tuple[str, ...] = tuple(UNIT_TYPES)  # display and canonical order
BY_LETTER: Mapping[str, str] = {t.letter: t.id for t in UNIT_TYPES.values()}
_BY_NAME: dict[str, str] = {t.id: t.id for t in UNIT_TYPES.values()}
_BY_NAME.update({alias: t.id for t in UNIT_TYPES.values() for alias in t.aliases})


def type_of_word(word: str) -> str | None:
    """The type id a notation word names: a letter ("C"), an id or an alias; None if none."""
    if word in BY_LETTER:
        return BY_LETTER[word]
    return _BY_NAME.get(word.lower())


_RANKS: Mapping[str, int] = {type_id: rank for rank, type_id in enumerate(TYPE_ORDER)}


def type_rank(type_id: str) -> int:
    """The position of a type in the table (for canonical orders); ValueError if unknown."""
    try:
        return _RANKS[type_id]
    except KeyError:
        raise ValueError(f"{type_id!r} is no unit type") from None


@memo(64)
def stats_for(
    horse_artillery_is_artillery: bool,
    heavy_infantry_is_artillery: bool,
    cuirassier_support_value: int,
    commander_types: tuple[str, ...],
    exactly_two: bool,
) -> Mapping[str, UnitStats]:
    """Every unit type's effective values under the variant-unit options (3.2, 8)."""
    result: dict[str, UnitStats] = {}
    for t in UNIT_TYPES.values():
        is_artillery = ARTILLERY in t.traits
        if t.id == "horse_artillery":
            is_artillery = horse_artillery_is_artillery
        elif t.id == "heavy_infantry":
            is_artillery = heavy_infantry_is_artillery
        support = cuirassier_support_value if t.id == "cuirassiers" else t.support
        result[t.id] = UnitStats(
            id=t.id,
            name=t.name,
            letter=t.letter,
            move_steps=t.move_steps,
            move_dirs=DIRECTION_SETS[t.move_dirs],
            move_dirs_key=t.move_dirs,
            exactly_two=exactly_two and t.two_square_variant,
            attack_dirs=DIRECTION_SETS[t.attack_dirs],
            attack_dirs_key=t.attack_dirs,
            attack=t.attack,
            support_dirs=DIRECTION_SETS[t.support_dirs],
            support_dirs_key=t.support_dirs,
            support=support,
            defence=t.defence,
            is_artillery=is_artillery,
            # Ruling 23: only the listed types command; by default the Guards alone.
            is_commander=t.id in commander_types,
            points=t.points,
        )
    return result
