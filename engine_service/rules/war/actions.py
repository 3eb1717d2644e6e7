"""Game of War actions: small tuples of cell numbers, hashable and cheap to make.

- a move of one man: `(origin, landing)`; a Troop jump chain lists every landing in order:
  `(origin, landing1, landing2, ...)` (section 7.5: the whole chain is one move);
- a Flying-Machine placement: `(PLACE, cell)`. With `placement_uses_turn = false` the move
  that follows it in the same turn comes after: `(PLACE, cell, origin, landing, ...)`;
- a pass (passing_allowed): `(PASS,)`;
- with `compulsion = huff`, removing ("huffing") an offending enemy Troop before the action:
  `(HUFF, cell, *action)`.

Cells are 0..99 (a1 = 0); the markers are above every cell number. Which man moves, what it
captures and whether a two-square diagonal move is a jump follow from the position.
"""

from __future__ import annotations

from typing import Final, NamedTuple

Action = tuple[int, ...]

PLACE: Final = 100
PASS: Final = 101
HUFF: Final = 102

# One prebuilt tuple per cell: the placement generator reuses them instead of building 64
# new tuples per position.
PLACEMENTS: Final = tuple((PLACE, cell) for cell in range(100))
PASS_ACTION: Final[Action] = (PASS,)


class ActionParts(NamedTuple):
    """An action taken apart: what is huffed, placed and moved (each may be absent)."""

    huff: int | None
    place: int | None
    origin: int | None
    path: tuple[int, ...]
    passes: bool


def split_action(action: Action) -> ActionParts:
    """The parts of an action; ValueError if the tuple is not a well-formed action."""
    rest = tuple(action)
    huff = place = None
    if rest[:1] == (HUFF,):
        if len(rest) < 3:
            raise ValueError("a huff needs a cell and the action that follows it")
        huff, rest = rest[1], rest[2:]
    if rest[:1] == (PLACE,):
        if len(rest) < 2:
            raise ValueError("a placement needs a cell")
        place, rest = rest[1], rest[2:]
    passes = rest == (PASS,)
    if passes:
        rest = ()
    elif not rest and place is None:
        raise ValueError("an action needs a move, a placement or a pass")
    elif rest and len(rest) < 2:
        raise ValueError("a move needs an origin and at least one landing cell")
    cells = [c for c in (huff, place, *rest) if c is not None]
    if any(type(c) is not int or not 0 <= c < 100 for c in cells):
        raise ValueError("cells are numbers 0..99")
    if rest:
        return ActionParts(huff, place, rest[0], rest[1:], False)
    return ActionParts(huff, place, None, (), passes)


def join_action(parts: ActionParts) -> Action:
    """The action tuple of its parts (inverse of `split_action`)."""
    out: list[int] = []
    if parts.huff is not None:
        out += [HUFF, parts.huff]
    if parts.place is not None:
        out += [PLACE, parts.place]
    if parts.passes:
        out.append(PASS)
    elif parts.origin is not None:
        out.append(parts.origin)
        out += parts.path
    return tuple(out)
