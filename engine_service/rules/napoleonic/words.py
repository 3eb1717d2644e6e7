"""Words for messages and events: how a unit, a side or a direction set is named."""

from __future__ import annotations

from engine_service.rules.napoleonic.pieces import DIRECTION_WORDS, UNIT_TYPES
from engine_service.rules.napoleonic.state import NapoleonicState, Unit

_NAMES = {t.id: t.name.lower() for t in UNIT_TYPES.values()}


def kind_name(kind: str) -> str:
    """A unit type's name in lower case ("horse artillery")."""
    return _NAMES.get(kind, kind)


def unit_words(state: NapoleonicState, unit: Unit) -> str:
    """'red artillery on d4'."""
    return f"{unit.side} {kind_name(unit.kind)} on {state.geo.names[unit.cell]}"


def unit_title(state: NapoleonicState, unit: Unit) -> str:
    """'Red artillery on d4' (for the start of a sentence)."""
    text = unit_words(state, unit)
    return text[:1].upper() + text[1:]


def kind_title(kind: str) -> str:
    """'Artillery' (capitalised type name)."""
    name = kind_name(kind)
    return name[:1].upper() + name[1:]


def dirs_words(key: str) -> str:
    """'orthogonally only', 'diagonally only' or 'in any direction'."""
    word = DIRECTION_WORDS[key]
    return word if key == "all" else f"{word} only"


def side_title(side: str) -> str:
    """'Red'."""
    return side[:1].upper() + side[1:]
