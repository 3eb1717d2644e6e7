"""Set-ups as data: the setup string of section 3.2, its extensions, and the derived default.

The section 3.2 string is three fields::

    mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM S FF:ff

board (rank 10 first; upper case South, lower case North; digits are runs of empty squares,
"10" an empty rank), side to move (S or N), and the Flying Machines in reserve (South's
`F`s, a colon, North's `f`s; `-` or nothing for none).

Extensions, so that any position of a game can be written exactly (a string without them
reads as before, so every section 3.2 string is accepted unchanged):

- `F` / `f` on the board: a placed Flying Machine of South / North (section 8).
- Troop "has moved" (section 11): the flag is part of the state, tracked from the set-up
  on. An initial position (the `initial_position` option) has no moved Troop, wherever
  its Troops stand. A setup string of any other position says which Troops have moved
  with two tokens: `moved=<cells>` for Troops on their side's Troop ranks (ranks 2 and 3
  counted from its own back rank, where every set-up of section 3 puts them) that have
  moved (`moved=b3,h3`), and `unmoved=<cells>` for Troops off those ranks that have not
  (a custom initial position can put them there); a Troop neither token lists reads as
  moved exactly when it stands off its Troop ranks, so that the section 3.2 strings and
  every string written before the token existed read as they always did.
- `citadels=<south>,<north>` (e.g. `citadels=f1,f10`): the Citadel squares. Without it, the
  Citadels are the King squares of the game's initial position as the options define it
  (section 9: "the square on which its King stood at the start"), so a middlegame position
  whose Kings have moved keeps the right Citadels. `initial_position` strings without the
  token take their Citadels from their own Kings.
- `ep=<cell>` (en_passant = displacement_only): the square just passed by a double step.
- `huff=<cells>` (compulsion = huff): the Troops the side to move may huff.
- `quiet=<n>`: plies since the last capture, Troop move or placement (no_progress_limit).
- `move=<n>`: the turn number, 1 on each side's first turn (placement_first_turn).
- `hist=<base64url>` and `histkeys=<base64url>`: the repetition history (repetition_draw),
  the positions since the last irreversible action, as the moves that lead back to them and
  as raw keys where no move does (`engine_service.rules.position`, "steps back"). Without
  them the history starts afresh at this position, as in a chess FEN.

`setup_text` writes a token only when it says something the board does not, so the initial
position prints as the plain section 3.2 string. With these tokens the string writes every
field of a position (docs/positions.md), so one text serves set-ups, records and states. A
set-up is read as the position after the opponent's last move: if the side to move already
has a man on the enemy Citadel, that occupation has held and the game is over (section 9).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar

from engine_service.rules.options import Options
from engine_service.rules.position import (
    PositionError,
    keys_of,
    keys_text,
    once_each,
    steps_of,
    steps_text,
)
from engine_service.rules.war.board import CELLS, HEIGHT, NAMES, WIDTH, cell_index, relative_rank
from engine_service.rules.war.pieces import (
    EMPTY,
    FLYING_MACHINES_PER_SIDE,
    KIND_OF_CODE,
    KING,
    LETTER_KINDS,
    NORTH,
    SIDE_LETTERS,
    SIDE_SPAN,
    SOUTH,
    TROOP,
    TROOP_MOVED,
    cells_holding,
    code,
    kind_of,
    letter_of,
    side_of,
)
from wargame.runtime.quoting import quoted

T = TypeVar("T")
TROOP_RANKS: Final = (2, 3)  # relative ranks where Troops stand at the start (3.1, 3.2)
_TOKEN_KEYS: Final = (
    "moved",
    "unmoved",
    "citadels",
    "ep",
    "huff",
    "quiet",
    "move",
    "hist",
    "histkeys",
)


class SetupError(ValueError):
    """A setup string that cannot be read; the message says which part and why."""


@dataclass
class Setup:
    """A position read from a setup string (codes per cell, a1 first)."""

    board: bytearray
    side: int
    reserves: tuple[int, int]
    citadels: tuple[int, int] | None = None
    ep: int = -1
    huffable: tuple[int, ...] = ()
    quiet: int = 0
    move: int = 1
    back: list[tuple[int, int]] = field(default_factory=list)  # history: steps back
    older: tuple[int, ...] = ()  # history: keys no step explains, newest first
    notes: list[str] = field(default_factory=list)

    def king_cells(self) -> tuple[int | None, int | None]:
        """The cell of each side's King (None when it has none or more than one)."""
        found: list[list[int]] = [[], []]
        for cell, piece in enumerate(bytes(self.board)):
            if piece and kind_of(piece) == KING:
                found[side_of(piece)].append(cell)
        south, north = (cells[0] if len(cells) == 1 else None for cells in found)
        return south, north


def starts_unmoved(side: int, cell: int) -> bool:
    """Whether a Troop on this cell reads as not yet moved when no token says otherwise."""
    return relative_rank(side, cell) in TROOP_RANKS


def _cells(text: str, what: str) -> tuple[int, ...]:
    cells = []
    for name in text.split(","):
        if not name.strip():
            continue
        cell = cell_index(name)
        if cell is None:
            raise SetupError(f"{what}: {quoted(name)} is not a square a1..j10")
        cells.append(cell)
    return tuple(cells)


def _count(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise SetupError(f"{what}: {quoted(text)} is not a whole number below 10^9")
    return int(text)


def _decoded(read: Callable[[str], T], text: str) -> T:
    try:
        return read(text)
    except PositionError as error:
        raise SetupError(str(error)) from None


# A board field, one character per cell ('.' empty), to cell codes and back; runs of
# empty cells are digits, longest first ("10" is an empty rank).
_LETTERS: Final = "." + "".join(letter_of(piece) for piece in range(1, 2 * SIDE_SPAN + 1))
_CHAR_OF_CODE: Final = bytes.maketrans(bytes(range(len(_LETTERS))), _LETTERS.encode("ascii"))
_UNMOVED: Final = [piece for piece in range(len(_LETTERS)) if KIND_OF_CODE[piece] != TROOP_MOVED]
_VALID: Final = "".join(_LETTERS[piece] for piece in _UNMOVED).encode("ascii")
_CODE_OF_CHAR: Final = bytes.maketrans(_VALID, bytes(_UNMOVED))  # T: a Troop not yet moved
_RUNS: Final = tuple(("." * n, str(n)) for n in range(WIDTH, 0, -1))
_TROOP_RANK_CELLS: Final = tuple(
    frozenset(cell for cell in range(CELLS) if starts_unmoved(side, cell))
    for side in (SOUTH, NORTH)
)


def _off_ranks() -> tuple[tuple[int, int, bytes], ...]:
    """The board cut into runs of cells off the Troop ranks of the same sides, each with the
    table that marks those sides' Troops there as moved (`parse_setup`)."""

    def sides_off(cell: int) -> tuple[int, ...]:
        return tuple(side for side in (SOUTH, NORTH) if cell not in _TROOP_RANK_CELLS[side])

    runs: list[tuple[int, int, bytes]] = []
    start = 0
    for cell in range(1, CELLS + 1):
        if cell == CELLS or sides_off(cell) != sides_off(start):
            sides = sides_off(start)
            unmoved = bytes(code(side, TROOP) for side in sides)
            moved = bytes(code(side, TROOP_MOVED) for side in sides)
            runs.append((start, cell, bytes.maketrans(unmoved, moved)))
            start = cell
    return tuple(runs)


_OFF_RANKS: Final = _off_ranks()


def _read_board(text: str) -> bytearray:
    """The cell codes of a board field (Troops as not moved; `parse_setup` decides)."""
    ranks = text.split("/")
    if len(ranks) != HEIGHT:
        raise SetupError(f"the board has {len(ranks)} ranks separated by '/', not {HEIGHT}")
    if "." in text:  # not a character of the grammar (it stands for an empty cell here)
        return _read_board_slowly(ranks)
    cells = text.replace("10", "." * 10)
    for runs, digit in _RUNS[1:]:
        cells = cells.replace(digit, runs)
    rows = cells.split("/")
    raw = "".join(reversed(rows)).encode("ascii", "replace")
    if len(raw) != CELLS or set(map(len, rows)) != {WIDTH} or raw.translate(None, _VALID):
        return _read_board_slowly(ranks)
    return bytearray(raw.translate(_CODE_OF_CHAR))


def _read_board_slowly(ranks: list[str]) -> bytearray:
    """A board field token by token, with the precise error for what is wrong in it."""
    board = bytearray(CELLS)
    for row, rank_text in enumerate(ranks):
        rank = HEIGHT - 1 - row
        file = 0
        for token in re.findall(r"10|[1-9]|.", rank_text):
            if token.isascii() and token.isdigit():
                file += int(token)
                continue
            kind = LETTER_KINDS.get(token.upper())
            if kind is None:
                raise SetupError(
                    f"rank {rank + 1}: {quoted(token)} is no piece letter (K G M C H T F, "
                    "upper case South, lower case North) or run of empty squares"
                )
            if file >= WIDTH:
                raise SetupError(
                    f"rank {rank + 1} ({quoted(rank_text)}) covers more than {WIDTH} files"
                )
            side = SOUTH if token.isupper() else NORTH
            board[rank * WIDTH + file] = code(side, kind)
            file += 1
        if file != WIDTH:
            raise SetupError(
                f"rank {rank + 1} ({quoted(rank_text)}) covers {file} files, not {WIDTH}"
            )
    return board


def _read_reserves(text: str) -> tuple[int, int]:
    south, sep, north = text.partition(":")
    if not sep:
        raise SetupError(f"reserves {quoted(text)}: expected South's F's, ':', North's f's (FF:ff)")
    counts = []
    for part, letter in ((south, "F"), (north, "f")):
        if part in ("", "-"):
            counts.append(0)
        elif part.isascii() and part.isdigit() and len(part) <= 9:
            counts.append(int(part))
        elif set(part) == {letter}:
            counts.append(len(part))
        else:
            raise SetupError(
                f"reserves {quoted(text)}: {quoted(part)} is not a run of {quoted(letter)} or '-'"
            )
        if counts[-1] > FLYING_MACHINES_PER_SIDE:
            raise SetupError(
                f"reserves {quoted(text)}: a side has {FLYING_MACHINES_PER_SIDE} Flying Machines"
            )
    return counts[0], counts[1]


def _token(token: str) -> tuple[str, str]:
    """An optional token's key (lower case) and value."""
    key, sep, value = token.partition("=")
    key = key.lower()
    if not sep or key not in _TOKEN_KEYS:
        raise SetupError(
            f"{quoted(token)} is not one of the optional tokens "
            + ", ".join(f"{k}=..." for k in _TOKEN_KEYS)
        )
    return key, value


def parse_setup(  # noqa: C901 (a flat checklist: each part of the 3.2 string in turn)
    text: str, *, initial: bool = False
) -> Setup:
    """Read a setup string; SetupError names the part that is wrong.

    With `initial` the string is an initial position (the `initial_position` option): every
    Troop in it has not moved (section 11), wherever it stands.
    """
    fields = text.split()
    if len(fields) < 3:
        raise SetupError(
            "a setup string has at least three fields: board, side to move (S or N) and "
            "reserves (FF:ff)"
        )
    board = _read_board(fields[0])
    side_text = fields[1].upper()
    if side_text not in SIDE_LETTERS:
        raise SetupError(f"side to move {quoted(fields[1])} is neither S nor N")
    setup = Setup(board, SIDE_LETTERS.index(side_text), _read_reserves(fields[2]))
    moved: tuple[int, ...] = ()
    unmoved: tuple[int, ...] = ()
    tokens = once_each(
        map(_token, fields[3:]), lambda key: SetupError(f"token {key}= appears twice")
    )
    for key, value in tokens:
        if key == "moved":
            moved = _cells(value, "moved")
        elif key == "unmoved":
            unmoved = _cells(value, "unmoved")
        elif key == "citadels":
            cells = _cells(value, "citadels")
            if len(cells) != 2 or cells[0] == cells[1]:
                raise SetupError("citadels= needs two different squares: South's, North's")
            setup.citadels = (cells[0], cells[1])
        elif key == "ep":
            cells = _cells(value, "ep")
            if len(cells) != 1:
                raise SetupError("ep= needs one square")
            setup.ep = cells[0]
        elif key == "huff":
            setup.huffable = tuple(sorted(set(_cells(value, "huff"))))
        elif key == "quiet":
            setup.quiet = _count(value, "quiet")
        elif key == "hist":
            setup.back = _decoded(steps_of, value)
        elif key == "histkeys":
            setup.older = _decoded(lambda text: keys_of(text, "histkeys"), value)
        else:
            setup.move = _count(value, "move")
            if setup.move < 1:
                raise SetupError("move= counts from 1")
    if initial and moved:
        raise SetupError("moved=: every Troop of an initial position has not moved (11)")
    both = set(moved) & set(unmoved)
    if both:
        raise SetupError(f"{NAMES[min(both)]} is listed both as moved and as unmoved")
    if not initial:  # a Troop off its side's Troop ranks reads as moved
        for start, stop, moved_off_ranks in _OFF_RANKS:
            board[start:stop] = board[start:stop].translate(moved_off_ranks)
    for token, cells, kind in (("moved", moved, TROOP_MOVED), ("unmoved", unmoved, TROOP)):
        for cell in cells:
            piece = board[cell]
            if not piece or kind_of(piece) > TROOP_MOVED:
                raise SetupError(f"{token}: {NAMES[cell]} holds no Troop")
            board[cell] = code(side_of(piece), kind)
    return setup


def board_text(board: bytes | bytearray | list[int]) -> str:
    """The board field of a setup string."""
    cells = bytes(board).translate(_CHAR_OF_CODE).decode("ascii")
    text = "/".join(cells[rank * WIDTH : (rank + 1) * WIDTH] for rank in range(HEIGHT - 1, -1, -1))
    for run, digits in _RUNS:
        text = text.replace(run, digits)
    return text


def format_setup(
    board: bytes | bytearray | list[int],
    side: int,
    reserves: tuple[int, int],
    *,
    citadels: tuple[int, int] | None = None,
    ep: int = -1,
    huffable: tuple[int, ...] = (),
    quiet: int = 0,
    move: int = 1,
    back: Sequence[tuple[int, int]] = (),
    older: Sequence[int] = (),
) -> str:
    """A setup string; `citadels` is written only when given (the caller decides)."""
    reserve_text = ("F" * reserves[0] or "-") + ":" + ("f" * reserves[1] or "-")
    parts = [board_text(board), SIDE_LETTERS[side], reserve_text]
    for token, kind, on_ranks in (("moved", TROOP_MOVED, True), ("unmoved", TROOP, False)):
        cells = [
            cell
            for side in (SOUTH, NORTH)
            for cell in cells_holding(board, code(side, kind))
            if (cell in _TROOP_RANK_CELLS[side]) == on_ranks
        ]
        if cells:
            parts.append(f"{token}=" + ",".join(NAMES[cell] for cell in sorted(cells)))
    if citadels is not None:
        parts.append(f"citadels={NAMES[citadels[0]]},{NAMES[citadels[1]]}")
    if ep >= 0:
        parts.append(f"ep={NAMES[ep]}")
    if huffable:
        parts.append("huff=" + ",".join(NAMES[c] for c in huffable))
    if quiet:
        parts.append(f"quiet={quiet}")
    if move != 1:
        parts.append(f"move={move}")
    if back:
        parts.append(f"hist={steps_text(back)}")
    if older:
        parts.append(f"histkeys={keys_text(older)}")
    return " ".join(parts)


def derived_setup_text(options: Options) -> str:
    """The initial position the options describe (section 3.2, 3.3, 16)."""
    given: str = options["initial_position"]
    if given:
        return given
    back: str = options["back_rank"]
    rear_files = (1, 3, 5, 7, 9) if options["troop_parity"] == "rear_bdfhj" else (0, 2, 4, 6, 8)
    south: dict[tuple[int, int], int] = {}
    for file, letter in enumerate(back):
        if letter != ".":
            south[(file, 0)] = LETTER_KINDS[letter]
    for file in range(WIDTH):
        south[(file, 1 if file in rear_files else 2)] = TROOP
    board = [EMPTY] * CELLS
    for (file, rank), kind in south.items():
        board[rank * WIDTH + file] = code(SOUTH, kind)
        if options["north_layout"] == "mirror":
            north_file, north_rank = file, HEIGHT - 1 - rank
        else:
            north_file, north_rank = WIDTH - 1 - file, HEIGHT - 1 - rank
        board[north_rank * WIDTH + north_file] = code(NORTH, kind)
    side = SOUTH if options["first_player"] == "south" else NORTH
    full = (FLYING_MACHINES_PER_SIDE, FLYING_MACHINES_PER_SIDE)
    return format_setup(board, side, full)
