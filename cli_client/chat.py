"""A game's chat in the client: `say …` sends a line, `mute`/`unmute` hide and show the
lines that arrive, and every line is shown safely.

The matchmaker already removes control characters from what players say; the client
removes them again (a server it talks to may be another's), so no line can move the
cursor, change colours, retitle the terminal or reorder the text around it.
"""

from __future__ import annotations

import unicodedata

from wargame.v1 import matchmaker_pb2

UNSHOWN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})  # controls, formats, no characters


def safe(text: str) -> str:
    """The text with nothing a terminal would obey: control, format and unassigned
    characters dropped, white space made single spaces."""
    kept = "".join(
        " " if char.isspace() else char
        for char in text
        if char.isspace() or unicodedata.category(char) not in UNSHOWN
    )
    return " ".join(kept.split())


def line_text(line: matchmaker_pb2.ChatLine, speaker: str) -> str:
    """A chat line as the log shows it: `speaker` is how the client names its side."""
    return f"[chat] {safe(speaker)}: {safe(line.text)}"
