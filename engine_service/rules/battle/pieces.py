"""The two armies (section 3) and how a piece is stored: one small integer per square.

A piece code is `kind | side << 3`: kinds 1..6 for the attacker, 9..14 for the defender,
0 for an empty square. The codes index flat tables in the move generator, so a square of
the board is one byte and a whole position is a 139-byte `bytes` value.
"""

from __future__ import annotations

from typing import Final

# --- sides (2.1: the defender faces North, the attacker South) -------------------------
ATTACKER: Final = 0
DEFENDER: Final = 1
SIDE_IDS: Final[tuple[str, str]] = ("attacker", "defender")
SIDE_ADJECTIVES: Final[tuple[str, str]] = ("attacking", "defending")


def side_of_id(name: str) -> int:
    """The side number of a side id ("attacker" or "defender"); ValueError otherwise."""
    return SIDE_IDS.index(name)


# --- kinds (section 5) ---------------------------------------------------------------
LIGHT_INFANTRY: Final = 1
INFANTRY_OF_THE_LINE: Final = 2
CAVALRY: Final = 3
ARTILLERY: Final = 4
WAGON: Final = 5
CITADEL: Final = 6
KINDS: Final = (LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY, ARTILLERY, WAGON, CITADEL)

KIND_IDS: Final[dict[int, str]] = {
    LIGHT_INFANTRY: "light_infantry",
    INFANTRY_OF_THE_LINE: "infantry_of_the_line",
    CAVALRY: "cavalry",
    ARTILLERY: "artillery",
    WAGON: "wagon",
    CITADEL: "citadel",
}
KIND_OF_ID: Final[dict[str, int]] = {name: kind for kind, name in KIND_IDS.items()}
KIND_NAMES: Final[dict[int, str]] = {
    LIGHT_INFANTRY: "Light Infantry",
    INFANTRY_OF_THE_LINE: "Infantry of the Line",
    CAVALRY: "Cavalry",
    ARTILLERY: "Artillery",
    WAGON: "Wagon",
    CITADEL: "Citadel",
}
# One letter per kind, used by the set-up text (T for the ciTadel: C is the Cavalry).
KIND_LETTERS: Final[dict[int, str]] = {
    LIGHT_INFANTRY: "L",
    INFANTRY_OF_THE_LINE: "I",
    CAVALRY: "C",
    ARTILLERY: "A",
    WAGON: "W",
    CITADEL: "T",
}
KIND_OF_LETTER: Final[dict[str, int]] = {letter: kind for kind, letter in KIND_LETTERS.items()}

# "Figures" in the book's sense: the pieces Artillery checks and that can take (6, 9.2).
FIGURE_KINDS: Final = frozenset({LIGHT_INFANTRY, INFANTRY_OF_THE_LINE, CAVALRY})
# Pieces that may not end a move exposed (A.1): the figures and the Wagon (ruling 8).
EXPOSABLE_KINDS: Final = FIGURE_KINDS | {WAGON}

# Section 3: each army has 4 LI, 5 IL, 2 Cav, 2 Art, plus the Citadel or the Wagon.
ARMY: Final[dict[int, dict[int, int]]] = {
    ATTACKER: {LIGHT_INFANTRY: 4, INFANTRY_OF_THE_LINE: 5, CAVALRY: 2, ARTILLERY: 2, WAGON: 1},
    DEFENDER: {LIGHT_INFANTRY: 4, INFANTRY_OF_THE_LINE: 5, CAVALRY: 2, ARTILLERY: 2, CITADEL: 1},
}

EMPTY: Final = 0
CODE_COUNT: Final = 16


def code(side: int, kind: int) -> int:
    """The board code of a piece of `kind` belonging to `side`."""
    return kind | side << 3


def side_of(piece: int) -> int:
    """The side of a (non-empty) piece code."""
    return piece >> 3


def kind_of(piece: int) -> int:
    """The kind of a (non-empty) piece code."""
    return piece & 7


CITADEL_BYTE: Final = bytes([code(DEFENDER, CITADEL)])  # for `bytes.find` on a board
WAGON_BYTE: Final = bytes([code(ATTACKER, WAGON)])


# The side and the kind of every piece code, by lookup, for loops over many squares (an
# empty square reads as the attacker's kind 0: test it first).
SIDE_OF_CODE: Final = tuple(side_of(c) for c in range(CODE_COUNT))
KIND_OF_CODE: Final = tuple(kind_of(c) for c in range(CODE_COUNT))


def describe_piece(piece: int, article: str = "") -> str:
    """'attacking Cavalry' (or 'the attacking Cavalry' with article "the"), 'the Citadel'."""
    kind = kind_of(piece)
    if kind in (CITADEL, WAGON):
        return f"the {KIND_NAMES[kind]}"
    words = f"{SIDE_ADJECTIVES[side_of(piece)]} {KIND_NAMES[kind]}"
    return f"{article} {words}" if article else words
