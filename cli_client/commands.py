"""What the player types during a game: client commands, or an action in the game's notation.

Anything that is not one of the client's words goes to the engine as notation, so the
client never has to know how a game's actions are written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PLACEMENT = re.compile(r"^[a-z]{1,2}\d{1,3}=[A-Za-z]$")

WORDS = {
    "moves": "moves [SQUARE]   the legal actions now (only those from SQUARE)",
    "hint": "hint             the engine's suggestion",
    "draw": "draw             offer a draw (or accept the one offered)",
    "accept": "accept / decline answer a draw offer",
    "resign": "resign           give up the game (asks first; `resign!` does not)",
    "undo": "undo             against the bot: take back your last action and its answer",
    "abort": "abort            call the game off: no result, no rating (early only)",
    "say": "say TEXT         a line to the game's chat (`mute`/`unmute`: hide or show it)",
    "rematch": "rematch          after the game: play again, sides swapped",
    "board": "board            draw the board again (`board flip`: turn it round)",
    "help": "help             this help",
    "quit": "quit             leave; the game goes on (`wargame resume` comes back)",
}
DEPLOY_WORDS = {
    "place": "a2=A b2=C ...    place units of your secret array (again to change one)",
    "army": "army             what is placed and what is left",
    "clear": "clear            start the array again",
    "commit": "commit           send the array's digest (the array stays here until the reveal)",
}
_CLIENT_WORDS = frozenset(
    {"moves", "hint", "resign", "abort", "undo", "draw", "accept", "decline", "rematch"}
    | {"help", "board", "flip", "quit", "mute", "unmute"}
)
_ALIASES = {
    "?": "help",
    "h": "help",
    "exit": "quit",
    "leave": "quit",
    "q": "quit",
    "legal": "moves",
    "suggest": "hint",
    "surrender": "resign",
    "takeback": "undo",
    "again": "rematch",
    "offer": "draw",
    "yes": "accept",
    "no": "decline",
}


@dataclass(frozen=True)
class Command:
    """One typed line: a client command with its argument, or an action ("action")."""

    name: str
    argument: str = ""


def is_placements(text: str) -> bool:
    """Whether the text is only placements like `a2=A b2=C`."""
    words = text.replace(",", " ").split()
    return bool(words) and all(_PLACEMENT.match(word) for word in words)


def parse(line: str, *, deploying: bool = False) -> Command:
    """The command a line asks for."""
    text = line.strip()
    if not text:
        return Command("empty")
    head, _, rest = text.partition(" ")
    word = _ALIASES.get(head.lower(), head.lower())
    rest = rest.strip()
    if word == "board" and rest.lower() == "flip":
        return Command("flip")
    if word in {"resign!", "surrender!"} and not rest:
        return Command("resign", "!")  # no question asked
    if word == "say":
        return Command("say", rest)
    if word in _CLIENT_WORDS and (word == "moves" or not rest):
        return Command(word, rest)
    if deploying:
        if word in {"army", "clear"} and not rest:
            return Command(word)
        if word == "commit" and (not rest or is_placements(rest)):
            return Command("commit", rest)
        if is_placements(text):
            return Command("place", text)
    return Command("action", text)


def words(*, deploying: bool = False, spectator: bool = False) -> list[str]:
    """The client's words a player may type now (for completion)."""
    viewing = ["moves", "board", "flip", "help", "quit", "mute", "unmute"]
    if spectator:
        return viewing
    playing = ["hint", "draw", "accept", "decline", "resign", "abort", "undo", "say", "rematch"]
    return viewing + playing + (["army", "clear", "commit"] if deploying else [])


def help_lines(notation: str, deploying: bool = False) -> list[str]:
    """The help text: the client's words and the game's notation."""
    lines = ["Type an action in the game's notation, or one of:"]
    if deploying:
        lines += [f"  {text}" for text in DEPLOY_WORDS.values()]
    lines += [f"  {text}" for text in WORDS.values()]
    if notation:
        lines += ["", "Notation: " + notation]
    return lines
