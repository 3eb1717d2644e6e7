"""Move notation with the book's square numbers: `36-51` (a move), `36x51` (a capture).

Accepted input:

- `36-51`, `36x51` (also `36 51`, `36:51`): origin and destination; `-` only onto an
  empty square, `x` only onto an enemy piece (the separator is checked, so a slip reads as
  an error, not as another move);
- short forms, resolved among the legal moves: `51`, `-51`, `x51`, and with a kind letter
  `C51`, `Cx51`, `L-51` (L, I, C, A, W as in the set-up text).
"""

from __future__ import annotations

import re
from typing import Final

from engine_service.rules.battle.actions import Move, move_of
from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.pieces import (
    KIND_NAMES,
    KIND_OF_LETTER,
    SIDE_IDS,
    kind_of,
    side_of,
)
from engine_service.rules.errors import Reason, RuleError
from wargame.runtime.quoting import quoted

_FULL: Final = re.compile(r"^([0-9]{1,3})\s*([-x:×]|\s)\s*([0-9]{1,3})$", re.IGNORECASE)
_SHORT: Final = re.compile(r"^([LICAW])?\s*([-x])?\s*([0-9]{1,3})$", re.IGNORECASE)
HELP: Final = (
    "write a move as <from>-<to> or a capture as <from>x<to> with square numbers 1..139 "
    "(e.g. 36-51, 36x51), or just the destination with an optional kind letter "
    "(51, x51, C51, Cx51)"
)


def format_move(board: bytes, move: Move) -> str:
    """`36-51` or `36x51` (a capture when the destination is occupied)."""
    separator = "x" if board[move.destination] else "-"
    return f"{NAMES[move.origin]}{separator}{NAMES[move.destination]}"


def _square(text: str) -> int:
    number = int(text)
    if not 1 <= number <= SQUARES:
        raise RuleError(
            Reason.UNKNOWN_CELL,
            f"there is no square {number}: squares are 1..{SQUARES}",
            accepted=HELP,
        )
    return number - 1


def parse_action(board: bytes, side: int, legal: list[Move], text: str) -> Move:
    """The move `text` names for `side` on `board`; `legal` resolves the short forms."""
    words = text.strip()
    full = _FULL.match(words)
    if full:
        origin, destination = _square(full.group(1)), _square(full.group(3))
        separator = full.group(2).lower()
        piece = board[origin]
        if not piece:
            raise RuleError(Reason.NO_PIECE, f"there is no piece on {NAMES[origin]}")
        if side_of(piece) != side:
            raise RuleError(
                Reason.NO_PIECE,
                f"the {KIND_NAMES[kind_of(piece)]} on {NAMES[origin]} is the "
                f"{SIDE_IDS[side_of(piece)]}'s, not the {SIDE_IDS[side]}'s",
            )
        target = board[destination]
        if target and side_of(target) == side:
            raise RuleError(
                Reason.DESTINATION_OCCUPIED,
                f"{words}: {NAMES[destination]} holds the {SIDE_IDS[side]}'s own "
                f"{KIND_NAMES[kind_of(target)]}",
            )
        if separator in ("x", "×") and not target:
            raise RuleError(
                Reason.NOTATION_INVALID,
                f"{words}: {NAMES[destination]} is empty, so this is no capture; write "
                f"{NAMES[origin]}-{NAMES[destination]}",
            )
        if separator == "-" and target:
            raise RuleError(
                Reason.NOTATION_INVALID,
                f"{words}: {NAMES[destination]} is occupied; a capture is written "
                f"{NAMES[origin]}x{NAMES[destination]}",
            )
        return move_of(origin, destination)
    short = _SHORT.match(words)
    if not short:
        raise RuleError(Reason.NOTATION_INVALID, f"cannot read {quoted(words)}", accepted=HELP)
    destination = _square(short.group(3))
    letter = (short.group(1) or "").upper()
    kind = KIND_OF_LETTER.get(letter) if letter else None
    separator = (short.group(2) or "").lower()
    matches = [
        move
        for move in legal
        if move.destination == destination
        and (kind is None or kind_of(board[move.origin]) == kind)
        and (separator != "x" or board[destination])
        and (separator != "-" or not board[destination])
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        what = KIND_NAMES[kind] if kind else "piece"
        article = "an" if what[0] in "AEIOU" else "a"
        raise RuleError(
            Reason.ILLEGAL_ACTION,
            f"no legal move of {article} {what} of the {SIDE_IDS[side]} goes to "
            f"{NAMES[destination]}",
        )
    raise RuleError(
        Reason.NOTATION_AMBIGUOUS,
        f"{quoted(words)} fits {len(matches)} legal moves; give the origin square",
        alternatives=tuple(format_move(board, move) for move in matches),
    )
