"""Napoleonic Chess actions: the small steps of a turn (spec 6), each naming its player.

The spec's list-valued messages are sequences of these, applied atomically by
`Game.apply_all`: `DeclareAttacks{list}` = `Attack`s then `EndPhase` (an `Attack` during
movement ends movement), `AllocateSupports{list}` = `Support`s then the defender's
`EndPhase` (which resolves combat), `Advance{list}` = `Advance`s then `EndPhase`.
Squares are algebraic names, so an action can name a square off the board and be refused
with the rule's own reason.
"""

from __future__ import annotations

from dataclasses import dataclass

Placements = tuple[tuple[str, str], ...]  # (square, unit type id), canonical order


@dataclass(frozen=True, slots=True)
class Move:
    """Movement phase: one unit moves to a square (4)."""

    side: str
    unit: str
    to: str


@dataclass(frozen=True, slots=True)
class EndPhase:
    """Ends the sender's part of the current phase (movement, attacks, defence, advance)."""

    side: str


@dataclass(frozen=True, slots=True)
class Attack:
    """Attack declaration: `attacker` attacks `target` (7.1)."""

    side: str
    attacker: str
    target: str


@dataclass(frozen=True, slots=True)
class Support:
    """Defence: `supporter` supports the attacked `supported` (7.2)."""

    side: str
    supporter: str
    supported: str


@dataclass(frozen=True, slots=True)
class Advance:
    """Advance: an attacker of an eliminated unit moves into its vacated square (7.4)."""

    side: str
    unit: str
    to: str


@dataclass(frozen=True, slots=True)
class BeginRedoubt:
    """The active player begins a redoubt on a square its unit occupies (10.4)."""

    side: str
    cell: str


@dataclass(frozen=True, slots=True)
class Commit:
    """Attack at Dawn, commit_reveal: SHA-256 of the canonical array text and salt (10.1)."""

    side: str
    digest: bytes


@dataclass(frozen=True, slots=True)
class Reveal:
    """Attack at Dawn, commit_reveal: the committed array and its 32-byte salt (10.1)."""

    side: str
    placements: Placements
    salt: bytes


@dataclass(frozen=True, slots=True)
class Seal:
    """Attack at Dawn, sealed: an array for the engine to check and encrypt (10.1)."""

    side: str
    placements: Placements


@dataclass(frozen=True, slots=True)
class Place:
    """Marching Orders: one unit of the player's pool placed on a square (10.2)."""

    side: str
    kind: str
    cell: str


NapoleonicAction = (
    Move | EndPhase | Attack | Support | Advance | BeginRedoubt | Commit | Reveal | Seal | Place
)
