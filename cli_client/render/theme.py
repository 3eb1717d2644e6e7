"""How things look: Unicode or ASCII, colours or none, and the symbols of the cell tags.

The engine's cell tags ("citadel", "hill", "ford"...) are the contract's vocabulary; each
known tag gets a symbol (ASCII and Unicode) and a background colour. Unknown tags are
drawn as plain cells, so a new tag never breaks the drawing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TextIO

from rich.color import Color, ColorParseError


@dataclass(frozen=True)
class Theme:
    """Character set and colour of the output."""

    unicode: bool = False
    colour: bool = False

    def style(self, style: str) -> str:
        """`style` when colours are on, else no style."""
        return style if self.colour else ""

    @property
    def glyphs(self) -> bool:
        """Whether pieces are drawn as glyphs (only with colour: glyphs do not show the side)."""
        return self.unicode and self.colour

    @classmethod
    def detect(
        cls, stream: TextIO | None = None, *, ascii_only: bool = False, colour: bool | None = None
    ) -> Theme:
        """Unicode and colour on a terminal that has them; plain ASCII otherwise."""
        out = stream or sys.stdout
        tty = bool(getattr(out, "isatty", lambda: False)())
        if ascii_only or not tty or os.environ.get("TERM") == "dumb":
            return cls(unicode=False, colour=False)
        encoding = (getattr(out, "encoding", "") or "").lower().replace("-", "")
        unicode = encoding in {"utf8", "utf16", "utf32"}
        if colour is None:
            colour = "NO_COLOR" not in os.environ
        return cls(unicode=unicode, colour=colour)


@dataclass(frozen=True)
class Mark:
    """How a cell tag is shown."""

    ascii: str
    unicode: str
    name: str


# In order of precedence when a cell has several tags.
MARKS: dict[str, Mark] = {
    "citadel": Mark("#", "⌂", "Citadel"),
    "redoubt": Mark("%", "◆", "redoubt"),
    "redoubt_site": Mark("&", "◇", "redoubt being built"),
    "hill": Mark("^", "▲", "hill"),
    "ford": Mark("=", "≡", "ford"),
    "bridge": Mark("+", "╪", "bridge"),
    "station": Mark(":", "∘", "station"),
}


def mark_of(tags: tuple[str, ...] | list[str]) -> str:
    """The tag of MARKS a cell shows (the first in precedence), or ""."""
    present = set(tags)
    return next((tag for tag in MARKS if tag in present), "")


# Side colours by name; anything else is parsed by rich ("#b22222", "magenta").
NAMED_COLOURS = {
    "white": "#f2f2f2",
    "black": "#161616",
    "red": "#c41e1a",
    "blue": "#1b3fc4",
    "green": "#1d7f2c",
    "yellow": "#e0b81c",
    "orange": "#d9701a",
    "purple": "#6d2aa8",
    "grey": "#808080",
    "gray": "#808080",
}


def side_colour(name: str) -> str:
    """A #rrggbb colour for a side's colour name."""
    key = name.strip().lower()
    if key in NAMED_COLOURS:
        return NAMED_COLOURS[key]
    try:
        triplet = Color.parse(key).get_truecolor()
    except ColorParseError:
        return "#808080"
    return triplet.hex


def luminance(colour: str) -> float:
    """Relative luminance (0 black .. 1 white) of a #rrggbb colour."""
    try:
        red, green, blue = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    except ValueError:
        return 0.5

    def linear(value: float) -> float:
        """sRGB component to linear light."""
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def on_colour(background: str) -> str:
    """Black or white, whichever reads better on `background`."""
    return "#000000" if luminance(background) > 0.35 else "#ffffff"


@dataclass(frozen=True)
class Palette:
    """Background colours of a board."""

    light: str
    dark: str
    plain: str  # cells with no light/dark tag (diamond boards)
    citadel: str
    hill: str
    redoubt: str
    water: str  # fords, bridges and river cells
    last: str  # the last move's cells
    marked: str  # cells picked out (deployment rows, a piece's moves)
    label: str  # square numbers
    river: str  # river lines (foreground)
    obstacle: str  # obstacle lines (foreground)

    def background(self, tags: tuple[str, ...] | list[str]) -> str:
        """The background of a cell with these tags."""
        mark = mark_of(tags)
        if mark == "citadel":
            return self.citadel
        if mark in {"redoubt", "redoubt_site"}:
            return self.redoubt
        if mark == "hill":
            return self.hill
        if mark in {"ford", "bridge"}:
            return self.water
        if "dark" in tags:
            return self.dark
        if "light" in tags:
            return self.light
        return self.plain


# For dark side colours (blue, red, black): a light wooden board.
LIGHT_BOARD = Palette(
    light="#efdfbc",
    dark="#cfb184",
    plain="#e2cfa5",
    citadel="#e8a33c",
    hill="#a9c47f",
    redoubt="#c49a6c",
    water="#8fb6dd",
    last="#e6e26a",
    marked="#9cc3e8",
    label="#6b5a3e",
    river="#2f6fd0",
    obstacle="#8b4513",
)
# When a side is light (white pieces): mid tones, so white and black both show.
MID_BOARD = Palette(
    light="#8f8d6c",
    dark="#737154",
    plain="#8a8466",
    citadel="#b7812f",
    hill="#6d8a45",
    redoubt="#8a6a45",
    water="#5b7fa6",
    last="#a9a53a",
    marked="#4f7fa8",
    label="#d8d2b8",
    river="#4a90e2",
    obstacle="#b5651d",
)


def palette_for(colours: list[str]) -> Palette:
    """The palette that shows every side's colour: mid tones if any side is light."""
    if any(luminance(side_colour(name)) > 0.5 for name in colours):
        return MID_BOARD
    return LIGHT_BOARD
