"""Engine sentences as players read them: the rule in words, without citations or lists.

The engine's refusals and events name the rule in words and cite where the specification
rules it ("a Troop jumps only diagonally forward (7.6)"), sometimes the option that decided
("... resolved at once (auto_skip_defence)"), and refusals end with what would be legal
instead ("; legal moves of the Troop on e3: e3-e4, e3-e5") or with the whole notation.
Players get the words: citations and option names are for developers, the alternatives
come when asked (`moves`), the notation with `help`. Nothing here decides a rule; it only
trims text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_REF = r"(?:[A-Z]\.?\d+(?:\.\d+)*|\d+(?:\.\d+)*)"
_SECTIONS = re.compile(rf"\s*\((?:rules?\s+)?{_REF}(?:\s*,\s*{_REF})*\)")
# Where a refusal's list of alternatives or of accepted forms begins (to the end).
_ALTERNATIVES = re.compile(
    r"\s*[;:]\s*(?:legal (?:moves|actions)\b|accepted:|actions:|write a move as\b).*$",
    re.IGNORECASE | re.DOTALL,
)


def without_options(text: str, options: Iterable[str]) -> str:
    """`text` without parenthesised option names ("(auto_skip_defence)", "(x = y)")."""
    names = sorted((name for name in options if name), key=len, reverse=True)
    if not names:
        return text
    alternatives = "|".join(re.escape(name) for name in names)
    pattern = re.compile(rf"\s*\((?:under\s+)?(?:{alternatives})(?:\s*=\s*[^)]*)?\)")
    return pattern.sub("", text)


def for_players(text: str, options: Iterable[str] = ()) -> str:
    """An engine sentence without section numbers and option names."""
    return without_options(_SECTIONS.sub("", text), options).strip()


def refusal(message: str, typed: str = "", options: Iterable[str] = ()) -> tuple[str, bool]:
    """A refusal as one sentence, and whether a list of alternatives was left out."""
    if typed:  # the engine quotes the text first: the player knows what they typed
        message = re.sub(rf"^((?:[^:']*: )?)'{re.escape(typed)}': ", r"\1", message)
    short = _ALTERNATIVES.sub("", message)
    return for_players(short, options), short != message
