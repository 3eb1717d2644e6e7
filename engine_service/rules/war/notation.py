"""Notation (section 2): the text of every action, printed and read back.

Printed forms (piece letter for every man but the Troop):

- `e3-e4`, `e3-e5` a Troop's step and double step; `Md1-d5`, `Hb1-c3` other men's moves;
- `c5xd6`, `Md1xd6` displacement captures (`e7xd8` also en passant);
- `a3:c5:e7` a jump chain, every landing square in order;
- `F@e5` a Flying-Machine placement; `F@e5 d2-d4` placement then move
  (placement_uses_turn = false);
- `pass` (passing_allowed); `huff c5 e3-e4` huffing the Troop on c5 first
  (compulsion = huff);
- `#C` is appended to the move after which a Citadel occupation has held (the game is won).

Reading is forgiving: any case, an optional piece letter (`Te3-e4`, `md1xd6`), `-`, `x`
or `:` between squares (or none: `e3e4`), and a chain may be given by its first and last
squares (`a3:e7`) when that names one chain. Annotations `#C`, `+`, `!`, `?` are ignored.
`parse_action` reads text against a position; text that names no legal action is
`explain.explain_text`'s to refuse, with the legal moves of the man concerned.
"""

from __future__ import annotations

import re
from typing import Final

from engine_service.memo import memo
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.war.actions import PLACE, Action, ActionParts, join_action, split_action
from engine_service.rules.war.board import JUMPED, NAMES, WIDTH, cell_index
from engine_service.rules.war.check import is_legal
from engine_service.rules.war.flying_machines import with_machine
from engine_service.rules.war.legal import legal_in
from engine_service.rules.war.pieces import (
    KIND_LETTERS,
    KIND_NAMES,
    LETTER_KINDS,
    SIDE_NAMES,
    SIDE_SPAN,
    TROOP_MOVED,
    kind_of,
    side_of,
)
from engine_service.rules.war.state import WarState
from wargame.runtime.quoting import quoted

_CELL: Final = r"[a-j](?:10|[1-9])"
_MOVE: Final = re.compile(rf"^([kgmcht])?({_CELL})((?:[-x:]?{_CELL})+)$", re.IGNORECASE)
_LANDING: Final = re.compile(rf"[-x:]?({_CELL})", re.IGNORECASE)
_PLACE: Final = re.compile(rf"^f?@({_CELL})$", re.IGNORECASE)
_ANNOTATION: Final = re.compile(r"(#c|[+!?#])+$", re.IGNORECASE)

FORMS_HELP: Final = (
    "moves like e3-e4 (Troop), Md1-d5 (piece letter K G M C H), captures like c5xd6 or "
    "Md1xd6, jump chains like a3:c5:e7, placements like F@e5, 'pass' where passing is "
    "allowed, and 'huff c5 <action>' under compulsion = huff"
)


def format_move(board: bytes, side: int, move: Action) -> str:
    """The text of a move (origin, landing, ...) by the man on its origin."""
    origin, to = move[0], move[1]
    piece = board[origin]
    kind = kind_of(piece) if piece else 0
    names = [NAMES[c] for c in move]
    if kind <= TROOP_MOVED:
        if JUMPED[origin * 100 + to] >= 0:
            return ":".join(names)
        capture = bool(board[to]) or (to - origin) % WIDTH != 0
        return f"{names[0]}{'x' if capture else '-'}{names[1]}"
    sep = "x" if board[to] else "-"
    return f"{KIND_LETTERS[kind]}{names[0]}{sep}{names[1]}"


def format_action_text(state: WarState, action: Action, *, ends_by_citadel: bool = False) -> str:
    """The notation of `action` in `state` (without checking that it is legal)."""
    if action[0] < PLACE and len(action) > 1:  # a plain move, the common case
        text = format_move(state.board, state.side, action)
        return text + "#C" if ends_by_citadel else text
    parts = split_action(action)
    board = state.board
    words = []
    if parts.huff is not None:
        words.append(f"huff {NAMES[parts.huff]}")
        board = board[: parts.huff] + b"\x00" + board[parts.huff + 1 :]
    if parts.place is not None:
        words.append(f"F@{NAMES[parts.place]}")
        board = with_machine(board, state.side, parts.place)
    if parts.passes:
        words.append("pass")
    elif parts.origin is not None:
        words.append(format_move(board, state.side, (parts.origin, *parts.path)))
    text = " ".join(words)
    return text + "#C" if ends_by_citadel else text


class Parsed:
    """What a text says, before it is matched against the legal actions."""

    __slots__ = ("huff", "letter", "passes", "path", "place", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.huff: int | None = None
        self.place: int | None = None
        self.passes = False
        self.letter: str | None = None
        self.path: tuple[int, ...] = ()

    def action(self) -> Action:
        """The action tuple this text spells out literally."""
        origin = self.path[0] if self.path else None
        return join_action(ActionParts(self.huff, self.place, origin, self.path[1:], self.passes))


def _invalid(text: str, why: str) -> RuleError:
    return RuleError(Reason.NOTATION_INVALID, f"{quoted(text)}: {why}", accepted=FORMS_HELP)


def _cell(text: str, whole: str) -> int:
    cell = cell_index(text)
    if cell is None:
        raise RuleError(
            Reason.UNKNOWN_CELL,
            f"{quoted(whole)}: {quoted(text)} is not a square of the board (a1..j10)",
        )
    return cell


@memo(4096)  # keyed by text a client sends
def read_text(text: str) -> Parsed:
    """Split a text into huff, placement, pass and move; NOTATION_INVALID if it is none.

    Cached: the same texts come back in position after position (treat results as frozen).
    """
    cleaned = _ANNOTATION.sub("", text.strip())
    words = cleaned.replace(",", " ").replace(";", " ").split()
    parsed = Parsed(text)
    if not words:
        raise _invalid(text, "empty")
    if words[0].lower() == "huff":
        if len(words) < 3:
            raise _invalid(text, "a huff names the Troop's square and then the action")
        parsed.huff = _cell(words[1], text)
        words = words[2:]
    placement = _PLACE.match(words[0])
    if placement:
        parsed.place = _cell(placement.group(1), text)
        words = words[1:]
    if not words:
        return parsed
    if len(words) > 1:
        raise _invalid(text, f"unexpected {quoted(' '.join(words[1:]))} after {quoted(words[0])}")
    word = words[0]
    if word.lower() == "pass":
        parsed.passes = True
        return parsed
    move = _MOVE.match(word)
    if not move:
        for square in re.findall(r"[a-z]\d+", word, re.IGNORECASE):
            if cell_index(square) is None:
                raise RuleError(
                    Reason.UNKNOWN_CELL,
                    f"{quoted(text)}: {quoted(square)} is not a square of the board (a1..j10)",
                )
        raise _invalid(text, f"{quoted(word)} is no move")
    letter, origin, rest = move.groups()
    parsed.letter = letter.upper() if letter else None
    parsed.path = (_cell(origin, text), *(_cell(c, text) for c in _LANDING.findall(rest)))
    return parsed


def man_on(board: bytes, cell: int) -> str:
    """'Mortar', 'Troop' ... for the man on `cell` (or 'nothing')."""
    piece = board[cell]
    return KIND_NAMES[kind_of(piece)] if piece else "nothing"


def letter_matches(board: bytes, side: int, cell: int, letter: str | None) -> bool:
    """Whether an optional piece letter agrees with the man of `side` on `cell`."""
    if letter is None:
        return True
    piece = board[cell]
    base = 1 + SIDE_SPAN * side
    return base <= piece < base + SIDE_SPAN and KIND_LETTERS[kind_of(piece)] == letter


def _same_frame(parsed: Parsed, action: Action) -> bool:
    parts = split_action(action)
    return (
        parts.huff == parsed.huff
        and parts.place == parsed.place
        and not parts.passes
        and parts.origin == parsed.path[0]
    )


def parse_action(state: WarState, text: str, side: int) -> Action:
    """The action `text` names for `side`: the legal action it names when `side` is to move.

    Otherwise the literal action is returned: for the side not to move (whoever applies
    it then says it is not that side's turn), or when the text names no legal action
    (`explain.explain_text` says why).
    """
    parsed = read_text(text)
    literal = parsed.action()
    if side != state.side:
        return literal
    if parsed.path and parsed.letter is not None:
        board = state.board
        origin = parsed.path[0]
        if not letter_matches(board, side, origin, parsed.letter):
            raise RuleError(
                Reason.NOTATION_INVALID,
                f"{quoted(text)}: the piece letter {parsed.letter} means a "
                f"{KIND_NAMES[LETTER_KINDS[parsed.letter]]}, but {NAMES[origin]} holds "
                f"{_holding(state, origin)}",
            )
    if is_legal(state, literal):
        return literal
    if len(parsed.path) == 2:
        # A chain named by its first and last squares ("a3:e7").
        chains = [
            a
            for a in legal_in(state)[0]
            if _same_frame(parsed, a)
            and split_action(a).path[-1] == parsed.path[1]
            and len(split_action(a).path) > 1
        ]
        if len(chains) == 1:
            return chains[0]
        if len(chains) > 1:
            raise RuleError(
                Reason.NOTATION_AMBIGUOUS,
                f"{quoted(text)} fits several jump chains; write every landing square",
                alternatives=tuple(format_action_text(state, a) for a in chains),
            )
    return literal


def _holding(state: WarState, cell: int) -> str:
    piece = state.board[cell]
    if not piece:
        return "nothing"
    owner = SIDE_NAMES[side_of(piece)]
    return f"{owner}'s {man_on(state.board, cell)}"
