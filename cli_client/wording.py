"""Engine sentences as players read them: the rule in words, without citations.

The engine's refusals say the rule in words and send its section, the legal alternatives
and the accepted notation beside the message (ErrorInfo metadata "rule", "alternatives",
"accepted": `ClientError.details`), so a refusal is shown as its sentence and the rest
comes when asked (`moves`, `help`). Events still cite where the specification rules them
("... wins (9)") and sometimes the option that decided ("... resolved at once
(auto_skip_defence)"): players get the words, citations and option names are for
developers. The engine names sides by their ids ("south resigns; north wins"); players read
them as the client writes them everywhere else, capitalised ("South resigns; North wins"),
and an identifier left in a sentence ("attack_declaration") as words ("attack declaration").
A notation is shown as played without the Game of War's `#C`, and the surrenders the server
writes in words (`as_played`). Nothing here
decides a rule; it only trims text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Game of War notation (section 2): `#C` ends the move after which a Citadel occupation
# held, the losing side's reply; the result line says who won and how.
CITADEL_HELD = "#C"
# The surrenders no player types: the server writes them when a clock runs out or a player
# stays away (`resign` is the player's own word, and stays).
SERVER_SURRENDERS = {"timeout": "out of time", "abandon": "abandoned the game"}
_REF = r"(?:[A-Z]\.?\d+(?:\.\d+)*|\d+(?:\.\d+)*)"
_SECTIONS = re.compile(rf"\s*\((?:rules?\s+)?{_REF}(?:\s*,\s*{_REF})*\)")
_IDENTIFIER = re.compile(r"(?<![\w`'=])[a-z]+(?:_[a-z]+)+(?![\w`'=])")  # attack_declaration


def _either(names: Iterable[str]) -> str:
    """A pattern matching any of `names`, the longest first ("" when there are none)."""
    return "|".join(re.escape(name) for name in sorted(filter(None, names), key=len, reverse=True))


def without_options(text: str, options: Iterable[str]) -> str:
    """`text` without parenthesised option names ("(auto_skip_defence)", "(x = y)")."""
    alternatives = _either(options)
    if not alternatives:
        return text
    pattern = re.compile(rf"\s*\((?:under\s+)?(?:{alternatives})(?:\s*=\s*[^)]*)?\)")
    return pattern.sub("", text)


def with_side_names(text: str, sides: Iterable[str]) -> str:
    """`text` with each side id written as a word ("south", "black's") capitalised."""
    alternatives = _either(sides)
    if not alternatives:
        return text
    pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")
    return pattern.sub(lambda found: found.group(0)[:1].upper() + found.group(0)[1:], text)


def for_players(text: str, options: Iterable[str] = (), sides: Iterable[str] = ()) -> str:
    """An engine sentence without section numbers and option names, sides capitalised."""
    trimmed = without_options(_SECTIONS.sub("", text), options).strip()
    spoken = _IDENTIFIER.sub(lambda found: found.group(0).replace("_", " "), trimmed)
    return with_side_names(spoken, sides)


def refusal(
    message: str, typed: str = "", options: Iterable[str] = (), sides: Iterable[str] = ()
) -> str:
    """A refusal as one sentence (the alternatives are in its details, not its text)."""
    if typed:  # the engine quotes the text first: the player knows what they typed
        message = re.sub(rf"^((?:[^:']*: )?)'{re.escape(typed)}': ", r"\1", message)
    return for_players(message, options, sides)


def as_played(notation: str) -> str:
    """A notation as the log and the move list show it: without the Game of War's `#C`,
    which the engine writes on the losing side's move (the one after which the Citadel
    held), where it would read as that side's win (the result line says who won); and the
    surrenders the server writes for a player (`timeout`, `abandon`) in words."""
    return SERVER_SURRENDERS.get(notation, notation.removesuffix(CITADEL_HELD))
