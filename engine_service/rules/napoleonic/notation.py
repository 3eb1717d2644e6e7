"""Notation (spec 13's conventions): every action as text, and back.

    move c2-d4          a unit (by square or id) moves
    attack d4>e5        declare an attack
    support e6>e5       allocate a support
    advance d4>e5       advance into a vacated square (also d4-e5)
    end                 end the current phase (also: pass)
    redoubt d4          begin a redoubt
    commit <64 hex>     commit to a digest, or:  commit <array> salt <64 hex>
    reveal <array> salt <64 hex>
    seal <array>        sealed Attack at Dawn
    place c3=I          Marching Orders

Bare `c2-d4` and `d4>e5` are read by phase (move / attack, support, advance). An array is
`square=LETTER` items (see `setup.py`); units are named by their square or by their id.
"""

from __future__ import annotations

import re

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.deployment import (
    SALT_BYTES,
    check_array,
    commitment,
    read_placements,
)
from engine_service.rules.napoleonic.pieces import UNIT_TYPES
from engine_service.rules.napoleonic.setup import ArrayError, canonical_array_text, parse_array
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from wargame.runtime.quoting import quoted, withheld

_SQUARE = re.compile(r"^[a-z]{1,2}[0-9]{1,3}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# Actions whose text holds a hidden deployment or a salt: a refusal quotes only the keyword.
SECRET_KEYWORDS = frozenset({"commit", "reveal", "seal"})
HELP = (
    "actions: 'move c2-d4', 'attack d4>e5', 'support e6>e5', 'advance d4>e5', 'end', "
    "'redoubt d4', 'commit <array> salt <hex>', 'commit <hex digest>', "
    "'reveal <array> salt <hex>', 'seal <array>', 'place c3=I' (arrays: 'a2=A b2=C ...')"
)


def _name(state: NapoleonicState, unit_id: str) -> str:
    unit = state.unit(unit_id)
    return state.geo.names[unit.cell] if unit is not None else unit_id


def format_action(state: NapoleonicState, action: NapoleonicAction) -> str:
    """The notation of an action in `state` (units named by their squares)."""
    if isinstance(action, Move):
        return f"move {_name(state, action.unit)}-{action.to}"
    if isinstance(action, Attack):
        return f"attack {_name(state, action.attacker)}>{_name(state, action.target)}"
    if isinstance(action, Support):
        return f"support {_name(state, action.supporter)}>{_name(state, action.supported)}"
    if isinstance(action, Advance):
        return f"advance {_name(state, action.unit)}>{action.to}"
    if isinstance(action, EndPhase):
        return "end"
    if isinstance(action, BeginRedoubt):
        return f"redoubt {action.cell}"
    if isinstance(action, Commit):
        return f"commit {action.digest.hex()}"
    if isinstance(action, Reveal):
        return f"reveal {canonical_array_text(action.placements)} salt {action.salt.hex()}"
    if isinstance(action, Seal):
        return f"seal {canonical_array_text(action.placements)}"
    return f"place {action.cell}={UNIT_TYPES[action.kind].letter}"


def _invalid(text: str, why: str) -> RuleError:
    """NOTATION_INVALID quoting `text`, or only its keyword when the rest is secret."""
    words = text.split(maxsplit=1)
    secret = bool(words) and words[0].lower() in SECRET_KEYWORDS
    shown = withheld(text, words[0]) if secret else quoted(text)
    return RuleError(Reason.NOTATION_INVALID, f"{shown}: {why}", accepted=HELP)


def _unit_ref(state: NapoleonicState, word: str, text: str) -> str:
    """The id of the unit a word names (its square or its id)."""
    if _SQUARE.match(word):
        if word not in state.geo.index:
            raise RuleError(Reason.UNKNOWN_CELL, f"{word} is not a square of this board")
        unit = state.at()[state.geo.index[word]]
        if unit is None:
            raise RuleError(Reason.UNKNOWN_UNIT, f"there is no unit on {word}")
        return unit.id
    if state.unit(word) is None:
        raise _invalid(text, f"{quoted(word)} is neither a square nor a unit id on the board")
    return word


def _square(word: str, text: str) -> str:
    if not _SQUARE.match(word):
        raise _invalid(text, f"{quoted(word)} is not a square name")
    return word


def _pair(body: str, sep: str, text: str) -> tuple[str, str]:
    left, found, right = body.partition(sep)
    if not found or not left or not right:
        raise _invalid(text, f"expected two squares joined by {quoted(sep)}")
    return left.strip(), right.strip()


def _salt(word: str, text: str) -> bytes:
    if len(word) != 2 * SALT_BYTES or not _HEX.match(word):
        raise _invalid(text, f"a salt is {SALT_BYTES} bytes written as {2 * SALT_BYTES} hex digits")
    return bytes.fromhex(word)


def _array_and_salt(words: list[str], text: str) -> tuple[str, bytes]:
    lowered = [w.lower() for w in words]
    if "salt" not in lowered or lowered.index("salt") != len(words) - 2:
        raise _invalid(text, "expected '<array> salt <hex>'")
    return " ".join(words[:-2]), _salt(words[-1], text)


def _placements(array_text: str, text: str) -> tuple[tuple[str, str], ...]:
    """The placements of a (secret) array; a refusal names the bad item by its number."""
    try:
        return read_placements(array_text)
    except ArrayError:
        items = array_text.replace(",", " ").split()
        number = next(n for n, item in enumerate(items, 1) if not _readable(item))
        raise _invalid(
            text, f"array item {number} is not 'square=LETTER' (e.g. 'a2=A') of a unit type"
        ) from None


def _readable(item: str) -> bool:
    try:
        parse_array(item)
    except ArrayError:
        return False
    return True


def parse_action(state: NapoleonicState, text: str, side: str) -> NapoleonicAction:
    """The action `text` names for `side` in `state`; RuleError says what is wrong."""
    words = text.strip().split()
    if not words:
        raise _invalid(text, "empty")
    keyword = words[0].lower()
    rest = words[1:]
    body = "".join(rest)
    if keyword in ("end", "pass") and not rest:
        return EndPhase(side)
    if keyword == "move":
        source, dest = _pair(body, "-", text)
        return Move(side, _unit_ref(state, source, text), _square(dest, text))
    if keyword in ("attack", "support"):
        source, dest = _pair(body, ">", text)
        first, second = _unit_ref(state, source, text), _unit_ref(state, dest, text)
        return Attack(side, first, second) if keyword == "attack" else Support(side, first, second)
    if keyword == "advance":
        source, dest = _pair(body, ">" if ">" in body else "-", text)
        return Advance(side, _unit_ref(state, source, text), _square(dest, text))
    if keyword == "redoubt" and len(rest) == 1:
        return BeginRedoubt(side, _square(rest[0], text))
    if keyword == "commit":
        if len(rest) == 1 and len(rest[0]) == 64 and _HEX.match(rest[0]):
            return Commit(side, bytes.fromhex(rest[0]))
        array_text, salt = _array_and_salt(rest, text)
        placements = _placements(array_text, text)
        # The engine hashes for thin clients, and refuses to commit an illegal array.
        check_array(state, side, placements)
        return Commit(side, commitment(placements, salt))
    if keyword == "reveal":
        array_text, salt = _array_and_salt(rest, text)
        return Reveal(side, _placements(array_text, text), salt)
    if keyword == "seal":
        return Seal(side, _placements(" ".join(rest), text))
    if keyword == "place" and len(rest) == 1:
        try:
            (item,) = parse_array(rest[0])
        except (ArrayError, ValueError):
            raise _invalid(text, "expected 'place <square>=<letter>'") from None
        return Place(side, item.kind, item.square)
    if len(words) == 1 and ("-" in keyword or ">" in keyword):
        return _bare(state, words[0], side, text)
    raise _invalid(text, "not an action")


def _bare(state: NapoleonicState, word: str, side: str, text: str) -> NapoleonicAction:
    """A bare 'c2-d4' or 'd4>e5', read by the current phase."""
    phase = state.phase
    if "-" in word:
        source, dest = _pair(word, "-", text)
        unit = _unit_ref(state, source, text)
        if phase is Phase.ADVANCE:
            return Advance(side, unit, _square(dest, text))
        return Move(side, unit, _square(dest, text))
    source, dest = _pair(word, ">", text)
    unit = _unit_ref(state, source, text)
    if phase is Phase.ADVANCE:
        return Advance(side, unit, _square(dest, text))
    other = _unit_ref(state, dest, text)
    if phase is Phase.DEFENCE:
        return Support(side, unit, other)
    return Attack(side, unit, other)
