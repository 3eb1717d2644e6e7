"""What the player typed, read against the engine's legal actions when the engine refused it.

Chess players bring habits: a destination alone (`c3`), the chess letter of a piece
(`Nb1-c3` where the Game of War writes `Hb1-c3`), a slip of the keyboard (`mvoes`). The
client keeps no rules, so it reads these only against what the engine says is legal now
(`ListLegalActions`, each with its notation) and the board's cell names and piece letters
(`DescribeGame`):

- a destination alone is played when exactly one legal action ends on that cell;
- otherwise a legal action over the same cells, in the same order, is suggested
  ("did you mean Hb1-c3?"), and so is the nearest word the client or the notation knows;
  a suggestion never changes the piece the player named (`Nf3` is never "F@f3"): when no
  legal action of that piece matches, the hint says what can go there, or nothing;
- a chess letter over cells no legal action takes (`Nb1-c3` in the opening, where c3 is
  taken) is rewritten with the game's letter of the piece drawn with that chess piece's
  glyph (`Hb1-c3`), for the engine to say why that is not legal.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wargame.v1 import board_pb2

MAX_LISTED = 4
WORD_CUTOFF = 0.7
# Chess's piece letters and the glyphs of their pieces (either colour).
CHESS_GLYPHS = {"K": "♔♚", "Q": "♕♛", "R": "♖♜", "B": "♗♝", "N": "♘♞", "P": "♙♟"}


@dataclass(frozen=True)
class Reading:
    """What to do with a refused text: play another action, or say something."""

    play: str = ""  # the one legal action it can only mean
    hint: str = ""  # a suggestion to add to the refusal
    replaces: bool = False  # the hint says it all (the engine's words add nothing)
    instead: str = ""  # the text in the game's own piece letter, for the engine to judge


class Cells:
    """Finds a board's cell names inside action texts."""

    def __init__(self, board: board_pb2.BoardDescription) -> None:
        names = sorted({cell.name.lower() for cell in board.cells}, key=len, reverse=True)
        self.names = frozenset(names)
        # A number (Battle's 36) is no cell inside a longer one (136); a name that begins
        # with a letter is a cell after a digit too (`e2e4`: e2, e4).
        lettered = [re.escape(name) for name in names if not name[:1].isdigit()]
        numbered = [re.escape(name) for name in names if name[:1].isdigit()]
        parts = [f"(?:{'|'.join(lettered)})"] if lettered else []
        parts += [f"(?<![0-9])(?:{'|'.join(numbered)})"] if numbered else []
        self._pattern = re.compile(rf"(?:{'|'.join(parts) or '(?!)'})(?![0-9])")
        self.letters = {kind.letter.upper(): kind.name for kind in board.piece_kinds}
        self.drawn_as: dict[str, list[str]] = {}  # a glyph -> the letters of its kinds
        for kind in board.piece_kinds:
            self.drawn_as.setdefault(kind.glyph, []).append(kind.letter.upper())

    def of(self, text: str) -> list[str]:
        """The cells named in a text, in order ("Hb1-c3" -> b1, c3)."""
        return self._pattern.findall(text.lower())


def _listed(notations: Sequence[str]) -> str:
    shown = list(notations[:MAX_LISTED])
    more = " …" if len(notations) > MAX_LISTED else ""
    return ", ".join(shown) + more


def _letter_note(typed: str, suggestion: str, cells: Cells) -> str:
    """ " (H is the Horse here)" when the suggestion's piece letter is not the one typed."""
    mine, theirs = typed.strip()[:1].upper(), suggestion.strip()[:1]
    if theirs in cells.letters and mine != theirs.upper():
        return f" ({theirs} is the {cells.letters[theirs]} here)"
    return ""


def chess_letter(typed: str, cells: Cells) -> str:
    """`Nb1-c3` in the game's letter (`Hb1-c3`), or "" when the text is no such habit.

    The letter must be chess's and not the game's, a cell must follow it, and exactly one
    of the game's pieces must be drawn with that chess piece's glyph."""
    letter, rest = typed[:1].upper(), typed[1:]
    if letter in cells.letters or letter not in CHESS_GLYPHS:
        return ""
    route = cells.of(rest)
    if not route or not rest.lower().startswith(route[0]):
        return ""
    kinds = {mine for glyph in CHESS_GLYPHS[letter] for mine in cells.drawn_as.get(glyph, [])}
    return f"{kinds.pop()}{rest}" if len(kinds) == 1 else ""


def named_piece(typed: str, route: Sequence[str], cells: Cells) -> str:
    """The game's letter of the piece a text names before its first cell (`Hb1-c3`: H;
    chess's `Nb1-c3`: the game's letter of the piece drawn as a knight, else N), or ""."""
    letter = typed[:1]
    if not (letter.isalpha() and letter.isupper()) or not route:
        return ""
    if not typed[1:].lower().startswith(route[0]):
        return ""
    if letter in cells.letters:
        return letter
    game_letter = chess_letter(typed, cells)[:1]
    return game_letter or letter


def piece_of(notation: str, cells: Cells, standing: Mapping[str, str] | None = None) -> str:
    """The piece letter an action's notation begins with; in a notation that names no
    piece (Battle's `34-35`, Napoleonic's `move a1-a2`), the letter of the piece `standing`
    on its first cell (cell -> letter); "" when neither says."""
    letter = notation[:1]
    if letter.isupper() and letter in cells.letters:
        return letter
    route = cells.of(notation)
    return (standing or {}).get(route[0], "") if route else ""


def read(
    text: str,
    legal: Sequence[str],
    cells: Cells,
    words: Sequence[str],
    standing: Mapping[str, str] | None = None,
) -> Reading:
    """What a refused `text` may have meant, given the legal actions and the client's words
    (and the letter of the piece standing on each cell, for a notation that names none)."""
    typed = " ".join(text.split())
    if typed.lower() in cells.names:
        going = [notation for notation in legal if cells.of(notation)[-1:] == [typed.lower()]]
        if len(going) == 1:
            return Reading(play=going[0])
        if going:
            return Reading(
                hint=f"more than one action goes to {typed}: {_listed(going)}", replaces=True
            )
        return Reading(hint=f"no legal action goes to {typed}", replaces=True)
    route = cells.of(typed)
    if route:
        same = [notation for notation in legal if cells.of(notation) == route]
        piece = named_piece(typed, route, cells)
        if piece:  # only that piece's actions: a suggestion never changes the piece
            same = [n for n in same if piece_of(n, cells, standing) == piece]
            if not same:  # the engine judges it in the game's letter; and what can go
                hint = _what_goes(route[-1], legal, cells, piece)
                return Reading(hint=hint, instead=chess_letter(typed, cells))
        if len(same) == 1:
            note = _letter_note(typed, same[0], cells)
            return Reading(hint=f"did you mean {same[0]}?{note}")
        if same:
            return Reading(hint=f"did you mean one of {_listed(same)}?")
        return Reading(instead=chess_letter(typed, cells))
    keywords = {notation.split()[0] for notation in legal if notation.split()[0].isalpha()}
    vocabulary = sorted({*words, *keywords})
    head = typed.split()[0].lower() if typed else ""
    close = difflib.get_close_matches(head, vocabulary, n=1, cutoff=WORD_CUTOFF)
    if close and close[0] != head:
        return Reading(hint=f"did you mean `{close[0]}`?")
    return Reading()


def _what_goes(cell: str, legal: Sequence[str], cells: Cells, piece: str) -> str:
    """What can go to `cell` when the piece named cannot ("" when nothing can)."""
    going = [notation for notation in legal if cells.of(notation)[-1:] == [cell]]
    name = cells.letters.get(piece, piece)
    if not going:
        return ""
    return f"no {name} of yours can go to {cell}; what can: {_listed(going)}"
