"""Position texts: the grammar every game's text shares, for both services.

A position text (docs/positions.md) is one line per game state; each game has its own
grammar over these shared parts, written here once:

- words `key=value`, where a value holding a space, a double quote, a backslash or a `;` (or
  nothing) is written in double quotes with backslash escapes; and `;`-separated sections,
  each `head: body` where it has a head; both are split outside quotes;
- base64url (RFC 4648, no padding) for the binary parts: position keys, digests, sealed
  arrays;
- `withheld`: the body of a section a server leaves out of the copy another player gets
  (a secret deployment), so the text still says the section is there;
- the sections a server reads whatever the game (docs/positions.md): the `turn:` section's
  phase, the secret phases (`SECRET_PHASES`, the action word each one expects), the
  `revealed <player>:` and `sealed <player>:` sections that hold a player's secret array,
  and the `players:` section's marks of the players out of a game of many.

The engine (`engine_service.rules.position`) builds whole texts from these and reads them
back; the matchmaker (`matchmaker.states`) only splits the texts the engine wrote, through
the readers at the end of this module, to see whose turn is in which phase, what the rules
hide and from whom: it names no game.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from typing import Final

from wargame.runtime.quoting import quoted

Pair = tuple[str, str]
WITHHELD: Final = "withheld"
_BARE: Final = re.compile(r'[^\s"\\;]+')
_WORD: Final = re.compile(r'(?:[^\s"]+|"(?:[^"\\]|\\.)*")+')
_ESCAPED: Final = re.compile(r"\\(.)")
_QUOTED: Final = re.compile(r'"(?:[^"\\]|\\.)*"')
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]*={0,2}")
# The phases in which the rules hide a secret deployment (Napoleonic Chess 10.1: Attack at
# Dawn), as a `turn:` section names them, each with the word of the action a player sends
# in it (`commit <array> salt <salt>`, `reveal <array> salt <salt>`, `seal <array>`).
SECRET_PHASES: Final = {
    "deploy_commit": "commit",
    "deploy_reveal": "reveal",
    "deploy_sealed": "seal",
}
# A deployment section whose body is a player's secret: `revealed <p>: ...`, `sealed <p>:
# ...` (commitments are digests: they hide nothing).
_SECRET: Final = re.compile(r"(\s*(?:revealed|sealed) )([^:\s]+)(:\s*)(.*?)(\s*)", re.DOTALL)
_OUT_MARKS: Final = ("!out", "!surrendered")


class PositionError(ValueError):
    """A position text that cannot be read; the message says which part and why."""


# --- words and sections ---------------------------------------------------------------------


def quote(value: str) -> str:
    """A value as written in a `key=value` word: bare when it can be, else in quotes."""
    if _BARE.fullmatch(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def words(text: str) -> list[str]:
    """The whitespace-separated words of a text (quoted values kept whole)."""
    if '"' not in text:
        return text.split()
    _closed(text, _WORD, None)
    return _WORD.findall(text)


def split_sections(text: str) -> list[str]:
    """The `;`-separated sections of a text exactly as written (quoted values kept whole,
    empty sections and spaces kept), so that `";".join` gives the text back; PositionError
    if a quote is left open."""
    if '"' not in text:
        return text.split(";")
    parts: list[str] = []
    start = index = 0
    inside = False
    while index < len(text):
        char = text[index]
        if inside and char == "\\":
            index += 1  # the escaped character, whatever it is
        elif char == '"':
            inside = not inside
        elif char == ";" and not inside:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    if inside:
        raise PositionError("a quoted value is not closed")
    parts.append(text[start:])
    return parts


def sections(text: str) -> list[str]:
    """The non-empty `;`-separated sections of a text (quoted values kept whole), stripped."""
    return [part for part in (p.strip() for p in split_sections(text)) if part]


def head_and_body(section: str) -> tuple[str, str]:
    """A section's head and body (`turn: 3 movement` -> ("turn", " 3 movement")); the head
    is "" for a section without one."""
    head, sep, body = section.partition(":")
    return (head.strip(), body) if sep else ("", section)


def _closed(text: str, pattern: re.Pattern[str], separators: str | None) -> None:
    """PositionError unless `pattern` covers all of `text` but its separators (None: any
    whitespace, as `str.split` splits at; a quote left open is what it would skip)."""
    if pattern.sub("", text).strip(separators):
        raise PositionError("a quoted value is not closed")


def unquote(value: str) -> str:
    """A value as `quote` wrote it, quotes and escapes removed; PositionError if unclosed."""
    if not value.startswith('"'):
        return value
    if not _QUOTED.fullmatch(value):
        raise PositionError(f"{quoted(value[:24])}: the quoted value is not closed")
    return _ESCAPED.sub(r"\1", value[1:-1])


def pair_of(word: str) -> Pair:
    """(key, value) of a `key=value` word, the value unquoted; PositionError if it is none."""
    key, sep, value = word.partition("=")
    if not sep or not key:
        raise PositionError(f"{quoted(word)} is not a word key=value")
    return key, unquote(value)


def pairs_text(pairs: Iterable[Pair]) -> str:
    """`key=value` words joined by spaces."""
    return " ".join(f"{key}={quote(value)}" for key, value in pairs)


# --- base64url --------------------------------------------------------------------------------


def b64(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str, what: str) -> bytes:
    """The bytes of a base64url text (padding optional); PositionError naming `what`."""
    if not _BASE64URL.fullmatch(text):  # the decoder itself skips letters of no alphabet
        raise PositionError(f"{what}: {quoted(text[:24])} is not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise PositionError(f"{what}: {quoted(text[:24])} is not base64url") from None


# --- what a server reads of any game's text ---------------------------------------------------


def section_body(text: str, head: str) -> str:
    """The body of the section with this head ("" if the text has none)."""
    for section in split_sections(text):
        found, body = head_and_body(section)
        if found == head:
            return body
    return ""


def turn_phase(text: str) -> str:
    """The phase word of the `turn: <player> <phase> <n>` section ("" for texts without
    one: set-ups, and games without phases)."""
    found = section_body(text, "turn").split()
    return found[1] if len(found) > 1 else ""


def secret_phase(text: str) -> bool:
    """True while the text's turn is in a phase that hides a secret deployment."""
    return any(phase in text for phase in SECRET_PHASES) and turn_phase(text) in SECRET_PHASES


def players_out(text: str) -> set[str]:
    """The players a game of many marks out (`!out`, `!surrendered` in its `players:`
    section, written once someone is out)."""
    if "!" not in text:
        return set()
    return {
        word.split("/", 1)[0]
        for word in section_body(text, "players").split()
        if word.endswith(_OUT_MARKS)
    }


def withhold(text: str, viewer: str) -> str:
    """The text as `viewer` ("" for a spectator) may see it: the bodies of other players'
    `revealed` and `sealed` sections replaced by `withheld`, the sections kept (so the text
    still says who has deployed, and the engine still reads it). The text itself when it
    hides nothing from `viewer`; PositionError if a quote is left open."""
    parts = split_sections(text)
    changed = False
    for index, part in enumerate(parts):
        found = _SECRET.fullmatch(part)
        if found is None or found.group(2) == viewer or found.group(4) == WITHHELD:
            continue
        lead, head, colon, _, tail = found.groups()
        parts[index] = f"{lead}{head}{colon}{WITHHELD}{tail}"
        changed = True
    return ";".join(parts) if changed else text
