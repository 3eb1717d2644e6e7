"""The worked examples of the rules books, as a caller of the engine meets them.

Each game with such examples has a module `tests/engine_service/rules/<game>/book.py`
holding its `EXAMPLES`, named after the book's section ("13.1-compulsion"): a position
(set-up text and options, the single source the rules tests read too) and the lines of
play the book gives from it. tools/conformance/generate.py turns each into conformance
vectors (`book/<name>/...`), checking as it goes that the engine accepts and refuses what
the book says.

A line of a variation is one of
    "<side> <notation>"             an action the book plays (it must be accepted);
    "! <side> <notation> <REASON>"  an action the book forbids, refused with that
                                     ErrorReason (the position stays as it was);
    "? <cell>"                      the legal actions from (or naming) that cell now.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType


@dataclass(frozen=True)
class Example:
    """A worked example: where it starts and the variations the book plays from there."""

    setup: str
    variations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    # Cells whose legal actions the book lists in the starting position.
    cells: tuple[str, ...] = ()


@dataclass(frozen=True)
class Line:
    """One line of a variation, read."""

    kind: str  # "play", "refuse" or "list"
    side: str = ""
    text: str = ""  # the notation, or the cell listed
    reason: str = ""


def read_line(raw: str) -> Line:
    """A variation's line as data (see the module docstring for the three forms)."""
    if raw.startswith("? "):
        return Line("list", text=raw[2:].strip())
    if raw.startswith("! "):
        side, text_and_reason = raw[2:].split(" ", 1)
        text, reason = text_and_reason.rsplit(" ", 1)
        return Line("refuse", side, text, reason)
    side, text = raw.split(" ", 1)
    return Line("play", side, text)


def book_of(game: str) -> ModuleType | None:
    """The book module of a game (`EXAMPLES`), or None when the game has none."""
    try:
        return importlib.import_module(f"tests.engine_service.rules.{game}.book")
    except ModuleNotFoundError:
        return None
