"""Arrays and set-up texts: how positions are written down.

**Array** (a side's deployment, spec 5 and 10.1): items `square=LETTER`,
`square=LETTER<n>` or `square=LETTER#id`, separated by spaces or commas; LETTER is the
unit-type letter of `units.json` (I C A G H D F K Y) or a type id (`infantry`,
`horse_guards`...); `<n>` names the unit `<P>_<LETTER><n>` (`c3=I4` on red's side is
`R_I4`), `#id` any id.

**Canonical array text** (what a commitment hashes, 10.1): the items `square=LETTER`,
without ids, sorted by rank and then by file (a1, b1, ..., a2, ...), joined by single
spaces, in ASCII; squares in lower case. Example: `a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I
b3=I c3=I d3=I e3=I f3=I g3=I h3=I`.

**Set-up text** (a whole position, for records and `new_game(setup=...)`): sections
separated by `;`, each optional except `board`:

    board 8x8; red: d4=A#R_A e4=C#R_C; black: d5=A#B_A a8=G#B_G;
    army red: 8I 4C 2A 1G; hills: c4 f5; redoubts: d5=black; sites: e4=red/1/R_I5;
    obstacles: d4|d5 d5|e5

`red:`/`black:` list the units on the board; an item without a number or `#id` gets the
engine's id (`R_`/`B_` + letter + number in board order among that side's units of its type
on the board, no number when there is one). The whole state of a game in progress adds more
sections to this text (`position.py`, docs/positions.md).
`army <side>:` gives a player's order of battle (counts and letters) where it differs from
the units on the board (deployments to come, units already lost). `sites` are redoubts
under construction: `square=builder/turns_done/unit id`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from engine_service.memo import memo
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.board import MAX_SIDE, Geometry
from engine_service.rules.napoleonic.pieces import BY_LETTER, UNIT_TYPES, type_of_word, type_rank
from engine_service.rules.napoleonic.scenarios import PALETTE
from engine_service.rules.position import once_each
from wargame.runtime.quoting import quoted

_ITEM = re.compile(r"^([a-z]{1,2}[0-9]{1,3})=([A-Za-z_]+?)([0-9]{1,3})?(?:#([A-Za-z0-9_]{1,32}))?$")
_SQUARE = re.compile(r"^([a-z])([0-9]{1,2})$")
_COUNT = re.compile(r"^([0-9]{1,3})\*?([A-Za-z_]+)$")
UNIT_ID = re.compile(r"^[A-Za-z0-9_]{1,32}$")


class ArrayError(ValueError):
    """An array or set-up text that cannot be read; the message says where."""


@dataclass(frozen=True, slots=True)
class ArrayItem:
    """One item of an array text: a square name, a unit type id and an optional id."""

    square: str
    kind: str
    id: str = ""
    number: int = 0  # `square=LETTER<n>`: the unit <P>_<LETTER><n> (0: not given)


def parse_array(text: str) -> list[ArrayItem]:
    """The items of an array text; ArrayError names the first bad item."""
    items: list[ArrayItem] = []
    for word in text.replace(",", " ").split():
        # The common items first, without a regular expression: `c3=I`, `c3=I4`.
        square, _sep, rest = word.partition("=")
        kind = BY_LETTER.get(rest[:1])
        tail = rest[1:]
        if (
            kind is not None
            and _SQUARE.match(square)
            and (not tail or (tail.isascii() and tail.isdigit() and len(tail) <= 3))
        ):
            items.append(ArrayItem(square, kind, "", int(tail or 0)))
            continue
        match = _ITEM.match(word)
        if not match:
            raise ArrayError(f"{quoted(word)} is not an array item 'square=LETTER' (e.g. 'a2=A')")
        kind = type_of_word(match.group(2))
        if kind is None:
            letters = ", ".join(f"{t.letter} {t.id}" for t in UNIT_TYPES.values())
            raise ArrayError(
                f"{quoted(match.group(2))} in {quoted(word)} is no unit type ({letters})"
            )
        number = int(match.group(3) or 0)
        items.append(ArrayItem(match.group(1), kind, match.group(4) or "", number))
    return items


@memo(4096)  # square names: a few hundred on any board, and bounded if a client sends more
def square_order(square: str) -> tuple[int, int, str]:
    """Sort key of a square name: rank, then file (unreadable names last)."""
    match = _SQUARE.match(square)
    if not match:
        return (1_000, 1_000, square)
    return (int(match.group(2)), ord(match.group(1)) - ord("a"), square)


def canonical_placements(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """(square, type) pairs in canonical order: by rank, then file, then type."""
    return tuple(sorted(pairs, key=lambda p: (square_order(p[0]), type_rank(p[1]))))


def canonical_array_text(placements: Iterable[tuple[str, str]]) -> str:
    """The canonical text of an array, the text a commitment hashes (module docstring)."""
    return " ".join(
        f"{square}={UNIT_TYPES[kind].letter}" for square, kind in canonical_placements(placements)
    )


def array_problems(
    geo: Geometry,
    placements: Sequence[tuple[str, str]],
    allowed_cells: Iterable[int],
    army: Sequence[str],
    side: str,
) -> list[str]:
    """Why an array is no legal deployment (composition, own rows, distinct squares)."""
    problems: list[str] = []
    allowed = set(allowed_cells)
    seen: set[str] = set()
    for square, _kind in placements:
        if square not in geo.index:
            problems.append(f"{square} is not a square of the {geo.width}x{geo.height} board")
        elif geo.index[square] not in allowed:
            problems.append(f"{square} is not on {side}'s deployment rows")
        if square in seen:
            problems.append(f"{square} holds two units")
        seen.add(square)
    have = Counter(kind for _square, kind in placements)
    want = Counter(army)
    if have != want:
        problems.append(
            f"the array has {counts_text(have) or 'no units'}, "
            f"but {side}'s army is {counts_text(want) or 'empty'}"
        )
    return problems


def counts_text(counts: Mapping[str, int]) -> str:
    """Counts as text: '8I 4C 2A 1G' (table order)."""
    return " ".join(
        f"{counts[k]}{UNIT_TYPES[k].letter}" for k in sorted(counts, key=type_rank) if counts[k] > 0
    )


def parse_counts(text: str) -> tuple[str, ...]:
    """An order of battle from counts text ('8I 4C 2A 1G'), in table order."""
    kinds: list[str] = []
    if text.strip() == "none":
        return ()
    for word in text.replace(",", " ").split():
        match = _COUNT.match(word)
        kind = type_of_word(match.group(2)) if match else None
        if match is None or kind is None:
            raise ArrayError(f"{quoted(word)} is not a count and unit letter (e.g. '8I')")
        kinds += [kind] * int(match.group(1))
    return tuple(sorted(kinds, key=type_rank))


def default_ids(side: str, placements: Sequence[tuple[str, str]]) -> list[str]:
    """The engine's ids for an array: R_/B_ + letter + number in board order (10.1)."""
    prefix = unit_prefix(side) + "_"
    totals: dict[str, int] = {}
    for _square, kind in placements:
        totals[kind] = totals.get(kind, 0) + 1
    numbers: dict[str, int] = {}
    order = sorted(range(len(placements)), key=lambda i: square_order(placements[i][0]))
    ids = [""] * len(placements)
    for i in order:
        kind = placements[i][1]
        number = numbers[kind] = numbers.get(kind, 0) + 1
        letter = UNIT_TYPES[kind].letter
        ids[i] = f"{prefix}{letter}" if totals[kind] == 1 else f"{prefix}{letter}{number}"
    return ids


def unit_id_for(side: str, kind: str, number: int, total: int) -> str:
    """The engine's id of the `number`-th unit of a type in an army of `total` of them."""
    return numbered_id(side, kind, 0 if total == 1 else number)


def numbered_id(side: str, kind: str, number: int) -> str:
    """The id `<P>_<LETTER><n>` of a side's unit (no number when `number` is 0)."""
    return f"{unit_prefix(side)}_{UNIT_TYPES[kind].letter}{number or ''}"


def unit_prefix(side: str) -> str:
    """The prefix of a player's unit ids: R for red, B for black, U for blue (`PALETTE`)."""
    return PALETTE.get(side) or side[:1].upper()


def item_id(side: str, item: ArrayItem, default: str) -> str:
    """The id an array item names: its `#id`, its number, or else `default`."""
    if item.id:
        return item.id
    return numbered_id(side, item.kind, item.number) if item.number else default


# --- set-up texts ----------------------------------------------------------------------


@dataclass
class Position:
    """A set-up text read: board, units (id, side, type, square), armies and terrain."""

    width: int
    height: int
    units: list[tuple[str, str, str, str]] = field(default_factory=list)
    armies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hills: list[str] = field(default_factory=list)
    redoubts: list[tuple[str, str]] = field(default_factory=list)
    sites: list[tuple[str, str, int, str]] = field(default_factory=list)
    obstacles: list[tuple[str, str]] = field(default_factory=list)


def _setup_error(message: str) -> RuleError:
    return RuleError(Reason.INVALID_SETUP, f"set-up: {message}", field="setup")


def parse_setup_text(text: str) -> Position:
    """Read a set-up text (module docstring); INVALID_SETUP names the bad section."""
    sections = [s.strip() for s in text.split(";") if s.strip()]
    if not sections or not sections[0].startswith("board "):
        raise _setup_error("must start with 'board <width>x<height>', e.g. 'board 8x8'")
    size = re.match(r"^board\s+([0-9]{1,2})x([0-9]{1,2})$", sections[0])
    if not size:
        raise _setup_error(f"{quoted(sections[0])} is not 'board <width>x<height>'")
    width, height = int(size.group(1)), int(size.group(2))
    if not (2 <= width <= MAX_SIDE and 2 <= height <= 99):
        raise _setup_error(f"board {width}x{height} is outside 2..{MAX_SIDE} x 2..99")
    position = Position(width, height)
    heads_and_bodies = once_each(
        map(_head_and_body, sections[1:]),
        lambda head: _setup_error(f"section {quoted(head)} appears twice"),
    )
    for head, body in heads_and_bodies:
        try:
            _read_section(position, head, body)
        except ArrayError as error:
            raise _setup_error(f"{head}: {error}") from None
    return position


def _head_and_body(section: str) -> tuple[str, str]:
    """A section's head and body, each stripped."""
    head, sep, body = section.partition(":")
    if not sep:
        raise _setup_error(f"section {quoted(section)} has no ':'")
    return head.strip(), body.strip()


def _read_section(position: Position, head: str, body: str) -> None:
    words = body.replace(",", " ").split()
    if head in PALETTE:
        items = parse_array(body)
        auto = default_ids(head, [(item.square, item.kind) for item in items])
        for item, auto_id in zip(items, auto, strict=True):
            position.units.append((item_id(head, item, auto_id), head, item.kind, item.square))
    elif head.startswith("army "):
        side = head.removeprefix("army ").strip()
        if side not in PALETTE:
            raise ArrayError(f"army of unknown side {quoted(side)}; sides: {', '.join(PALETTE)}")
        position.armies[side] = parse_counts(body)
    elif head == "hills":
        position.hills = words
    elif head == "redoubts":
        for word in words:
            square, sep, owner = word.partition("=")
            if not sep or owner not in PALETTE:
                raise ArrayError(f"{quoted(word)} is not 'square=owner' (owner a player id)")
            position.redoubts.append((square, owner))
    elif head == "sites":
        for word in words:
            match = re.match(
                r"^([a-z]{1,2}[0-9]{1,3})=([a-z]+)/([0-9]{1,2})/([A-Za-z0-9_]{1,32})$", word
            )
            if not match or match.group(2) not in PALETTE:
                raise ArrayError(f"{quoted(word)} is not 'square=builder/turns_done/unit'")
            position.sites.append(
                (match.group(1), match.group(2), int(match.group(3)), match.group(4))
            )
    elif head == "obstacles":
        for word in words:
            a, sep, b = word.partition("|")
            if not sep:
                raise ArrayError(f"{quoted(word)} is not an edge 'a|b' (e.g. 'd4|d5')")
            position.obstacles.append((a, b))
    else:
        raise ArrayError(
            f"unknown section {quoted(head)}; sections: red, black, army <side>, hills, redoubts, "
            "sites, obstacles (and, for a game in progress, those of docs/positions.md)"
        )
