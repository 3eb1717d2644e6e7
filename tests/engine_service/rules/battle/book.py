"""The Game of Battle's worked examples (specification 12.1-12.9: Plates 1-4) as positions
and the lines the book plays from them (see tests/engine_service/rules/book.py).

The plates' figures (the `*_FIGURE` set-ups) are what the rules tests analyse. Most lack
the Citadel, the Wagon or a side's figures, and such a position is a finished game (9.1,
9.2), so a caller of the engine could not play the book's lines from it: each example
starts from its figure with the pieces of `SUPPLY` added where they change nothing the
book says (no line, range or cover of the figure reaches them; test_book.py checks that the
figure's exposures and its pieces' legal moves are the same with them as without).
"""

from __future__ import annotations

import re

from tests.engine_service.rules.book import Example

# Plate 4 fig. 2 (12.2): Art 9, Wagon 11, IL 13, Cav 15, LI 36.
MOVES_FIGURE = "defender to move; attacker: W11; defender: A9 I13 C15 L36"
# Plate 4 fig. 1 (12.3): the artillery duel.
DUEL_FIGURE = "defender to move; attacker: A107 A94; defender: C127 A119 A106 I108"
# Plate 2 fig. 1 (12.4): two batteries.
BATTERIES_FIGURE = "attacker: A111; defender: A110"
# Plate 2 fig. 2 (12.5): cover and mutual protection (the side to move goes in front).
COVER_FIGURE = "; attacker: I88 C89 I86 A82; defender: A139 A122 I115"
# Plate 2 fig. 3 (12.6): forced reply, one at a time.
FORCED_REPLY_FIGURE = "attacker to move; attacker: A60 A54; defender: I16 I26 A1"
# Plate 2 fig. 4 (12.7): a battery attacked through its angle.
ANGLE_FIGURE = "attacker to move; attacker: C52 A38; defender: I13 A5"
# Plate 3 fig. 1 (12.8): taking the Wagon.
WAGON_FIGURE = (
    "defender to move; attacker: W127 A110 I119 A106 I101 C102; "
    "defender: I129 I94 C113 I108 A95 A92"
)
# Plate 3 fig. 2 (12.9): taking the Citadel (the attacking figure is added per case).
CITADEL_FIGURE = "defender: T19 A18 A34"
# 12.9 case 1: who may take the Citadel from where (kinds that may, kinds out of reach).
CITADEL_TAKERS = {
    40: ("CL", "I"),
    33: ("CIL", ""),
    35: ("CIL", ""),
    21: ("CIL", ""),
    4: ("CIL", ""),
    2: ("CIL", ""),
    22: ("C", "IL"),
    11: ("CIL", ""),
}
KIND_NAMES = {"C": "cavalry", "I": "infantry-of-the-line", "L": "light-infantry"}

# The pieces that make a figure a game in play: the defender's Citadel and a figure, the
# attacker's Wagon and a figure (a figure's own Citadel or Wagon is kept). Some figures
# reach one of these squares; they take the pieces on other squares instead.
SUPPLY = {"attacker": "W134 I138", "defender": "T19 L45"}


def moved(supply: dict[str, str], **sides: str) -> dict[str, str]:
    """`supply` with some sides' pieces on other squares."""
    return {**supply, **sides}


def supplied(figure: str, supply: dict[str, str]) -> str:
    """`figure` with each side's pieces of `supply` added to its list ('-' is no piece)."""
    text = figure
    for side, pieces in supply.items():
        found = re.search(rf"{side}:([^;]*)", text)
        if found is None:
            text += f"; {side}: {pieces}"
            continue
        given = found.group(1).strip()
        listed = pieces if given in ("", "-") else f"{given} {pieces}"
        text = text[: found.start(1)] + f" {listed}" + text[found.end(1) :]
    return text


def _missing(figure: str, supply: dict[str, str]) -> dict[str, str]:
    """Only the supplies a figure lacks: no second Citadel or Wagon."""
    out = {}
    for side, pieces in supply.items():
        found = re.search(rf"{side}:([^;]*)", figure)
        given = found.group(1) if found else ""
        kept = [p for p in pieces.split() if not (p[0] in "TW" and p[0] in given)]
        if kept:
            out[side] = " ".join(kept)
    return out


# name -> (the plate's figure, the pieces added to it)
PLATES: dict[str, tuple[str, dict[str, str]]] = {}
EXAMPLES: dict[str, Example] = {}


def _add(
    name: str,
    figure: str,
    supply: dict[str, str] | None,
    variations: dict[str, tuple[str, ...]] | None = None,
    cells: tuple[str, ...] = (),
) -> None:
    added = _missing(figure, supply) if supply else {}
    PLATES[name] = (figure, added)
    EXAMPLES[name] = Example(supplied(figure, added), variations or {}, cells=cells)


# 12.1 Plate 1: the board, the river and the set-up.
_add(
    "12.1.2-river-examples",
    "defender to move; attacker: A55; defender: I48 I40",
    SUPPLY,
    cells=("48", "40"),
)
_add(
    "12.1.7-artillery-stops-on-a-ford",
    "defender to move; attacker: -; defender: A31",
    SUPPLY,
    {"ford": ("defender 31-47",)},
    cells=("31",),
)
_add("12.1.8-set-up-and-start", "", None)

# 12.2 Plate 4 fig. 2: moves on the numbered board.
_add(
    "12.2.1-2-cavalry-15",
    MOVES_FIGURE,
    moved(SUPPLY, defender="T7 L60"),
    {"to-37": ("defender 15-37", "attacker 138-137", "? 37")},
    cells=("15",),
)
for _name, _piece, _side in (
    ("12.2.3-light-infantry-36", "L36", "defender"),
    ("12.2.4-infantry-of-the-line-13", "I13", "defender"),
    ("12.2.5-artillery-9", "A9", "defender"),
    ("12.2.6-artillery-31", "A31", "defender"),
    ("12.2.8-wagon-11", "W11", "attacker"),
):
    _other = "defender" if _side == "attacker" else "attacker"
    _add(
        _name,
        f"{_side} to move; {_side}: {_piece}; {_other}: -",
        moved(SUPPLY, defender="T7 L45") if _piece == "W11" else SUPPLY,
        cells=(_piece[1:],),
    )
_add(
    "12.2.7-artillery-51-own-battery-protects",
    "defender to move; attacker: A51; defender: I65 A72",
    SUPPLY,
)
_add(
    "12.2.7-artillery-51-enemy-battery-next-to-it",
    "defender to move; attacker: A51; defender: I44 A37",
    moved(SUPPLY, defender="T19 L39"),
)

# 12.3 Plate 4 fig. 1: the artillery duel.
_add(
    "12.3-artillery-duel",
    DUEL_FIGURE,
    SUPPLY,
    {
        "cavalry-retakes": ("defender 119-111", "attacker 107x111", "defender 127x111"),
        "artillery-retakes": ("defender 119-111", "attacker 107x111", "defender 106x111"),
        "stays": ("defender 119-111", "attacker 94-98", "defender 111x107"),
        "to-102": ("defender 119-111", "attacker 107-102", "defender 106x102"),
        "to-120": ("defender 119-111", "attacker 107-120", "defender 108x120"),
        "to-112": ("defender 119-111", "attacker 107-112", "defender 108x112"),
        "to-103": ("defender 119-111", "attacker 107-103", "defender 108x103"),
    },
)

# 12.4 Plate 2 fig. 1: the squares between two batteries.
_add(
    "12.4.1-no-figure-between-two-batteries-attacker",
    "attacker to move; attacker: A111 C119 C98; defender: A110",
    moved(SUPPLY, attacker="W130 I138"),
    {
        "cavalry": (
            "! attacker 119-118 EXPOSED_TO_ARTILLERY",
            "! attacker 98-106 EXPOSED_TO_ARTILLERY",
        )
    },
)
_add(
    "12.4.1-no-figure-between-two-batteries-defender",
    "defender to move; attacker: A111; defender: A110 C117 C105",
    SUPPLY,
    {
        "cavalry": (
            "! defender 117-118 EXPOSED_TO_ARTILLERY",
            "! defender 105-106 EXPOSED_TO_ARTILLERY",
        )
    },
)
_add(
    "12.4.1-a-figure-between-two-batteries-is-exposed",
    "attacker to move; attacker: A111 I118; defender: A110",
    moved(SUPPLY, attacker="W130 I138"),
)
_add(
    "12.4.2-artillery-between-the-batteries-is-taken",
    f"attacker to move; {BATTERIES_FIGURE}",
    SUPPLY,
    {
        "to-118": ("attacker 111-118", "defender 110x118"),
        "to-106": ("attacker 111-106", "defender 110x106"),
    },
)

# 12.5 Plate 2 fig. 2: cover and mutual protection.
_add(
    "12.5.1-2-4-cover-as-drawn",
    "attacker to move" + COVER_FIGURE,
    SUPPLY,
    {
        "refused": (
            "! attacker 88-109 EXPOSED_TO_ARTILLERY",
            "! attacker 89x139 EXPOSED_TO_ARTILLERY",
            "! attacker 88x122 EXPOSED_TO_ARTILLERY",
        )
    },
)
_add(
    "12.5.3-5-cover-defender-to-move",
    "defender to move" + COVER_FIGURE,
    SUPPLY,
    {
        "115-114": ("defender 115-114", "! attacker 88-109 FORCED_REPLY"),
        "115-131": (
            "defender 115-131",
            "attacker 88x122",
            "defender 131x122",
            "attacker 89x139",
        ),
        "115-131-cavalry-takes-122": ("defender 115-131", "attacker 89x122"),
    },
)

# 12.6 Plate 2 fig. 3: forced reply, one at a time.
_add(
    "12.6.1-3-forced-reply",
    FORCED_REPLY_FIGURE,
    moved(SUPPLY, defender="T3 L45"),
    {"ford": ("attacker 54-40", "defender 16-8", "attacker 60-67", "defender 1-18")},
)
for _square, _other_square in ((16, 26), (26, 16)):
    _add(
        f"12.6.4-artillery-on-{_square}-takes-40",
        f"attacker to move; attacker: A60 A54; defender: A{_square} I{_other_square} A1",
        moved(SUPPLY, defender="T3 L45"),
        {"ford": ("attacker 54-40", f"defender {_square}x40")},
    )

# 12.7 Plate 2 fig. 4: a battery attacked through its angle.
_add(
    "12.7-battery-attacked-through-its-angle",
    ANGLE_FIGURE,
    moved(SUPPLY, defender="T19 L60"),
    {
        "to-51": ("attacker 52-51", "? 5", "defender 13-21"),
        "to-36": ("attacker 52-36", "? 5", "defender 13-21", "attacker 36x21", "? 5"),
    },
)

# 12.8 Plate 3 fig. 1: taking the Wagon (the Citadel far away, as in test_12_8_5).
_add(
    "12.8-taking-the-wagon",
    WAGON_FIGURE,
    SUPPLY,
    {
        "line-played": (
            "! defender 129x127 WAGON_UNDER_COVER",
            "defender 95-99",
            "attacker 102-111",
            "defender 99x106",
            "attacker 111x106",
            "defender 113x110",
            "attacker 106x110",
            "defender 129x127",
        ),
    },
)

# 12.9 Plate 3 fig. 2: taking the Citadel.
for _square, (_may, _may_not) in CITADEL_TAKERS.items():
    for _kind in _may + _may_not:
        _line = (
            f"attacker {_square}x19"
            if _kind in _may
            else f"! attacker {_square}x19 ILLEGAL_MOVE_GEOMETRY"
        )
        _add(
            f"12.9.1-citadel-from-{_square}-by-{KIND_NAMES[_kind]}",
            f"attacker to move; attacker: {_kind}{_square}; {CITADEL_FIGURE}",
            SUPPLY,
            {"take": (_line,)},
        )
for _square in (3, 20, 10, 27, 26):
    _add(
        f"12.9.1-commanded-square-{_square}",
        f"attacker to move; attacker: C{_square}; {CITADEL_FIGURE}",
        SUPPLY,
    )
for _cavalry in (40, 33):
    _add(
        f"12.9.2-battery-to-26-checks-the-cavalry-on-{_cavalry}",
        f"defender to move; attacker: C{_cavalry} I127; {CITADEL_FIGURE}",
        moved(SUPPLY, attacker="W130 I138"),
        {
            f"{battery}-26": (f"defender {battery}-26", f"! attacker {_cavalry}x19 PATH_BLOCKED")
            for battery in (18, 34)
        },
    )
_add(
    "12.9.3-4-passing-a-commanded-square",
    f"defender to move; attacker: I33; {CITADEL_FIGURE}",
    SUPPLY,
    {
        "34-26": ("defender 34-26", "attacker 33-35", "defender 18-9", "attacker 35x19"),
        "18-26": ("defender 18-26", "attacker 33-2", "defender 34-42", "attacker 2x19"),
    },
)
