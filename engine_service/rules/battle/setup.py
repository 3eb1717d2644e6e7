"""The set-up text that gives any position of the Game of Battle.

Set-up text: sections separated by ";", in any order::

    attacker to move; attacker: W129 A126 A131 C125 ...; defender: T19 A9 A14 ...; quiet: 4

- `<side> to move` (optional; default: the `first_player` option);
- `attacker:` and `defender:` list the pieces (both required; `-` for none), each a kind
  letter and a square number: L Light Infantry, I Infantry of the Line, C Cavalry,
  A Artillery, W Wagon (attacker only), T Citadel (defender only);
- `quiet: N` (optional): moves made since the last capture, for `no_capture_limit`.

A set-up may hold fewer pieces than the armies (the plates' positions), never more. A
position missing the Citadel or the Wagon is a finished game (9.1). The repetition
history starts afresh at a set-up position.
"""

from __future__ import annotations

import re
from typing import Final

from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.pieces import (
    ARMY,
    ARTILLERY,
    ATTACKER,
    CAVALRY,
    CITADEL,
    DEFENDER,
    INFANTRY_OF_THE_LINE,
    KIND_LETTERS,
    KIND_NAMES,
    KIND_OF_LETTER,
    LIGHT_INFANTRY,
    SIDE_IDS,
    WAGON,
    code,
    kind_of,
    side_of,
)
from engine_service.rules.battle.state import BattleState
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from wargame.runtime.quoting import quoted

# Order of the kinds in written set-ups: Citadel and Wagon first, then by weight.
WRITE_ORDER: Final = (CITADEL, WAGON, ARTILLERY, CAVALRY, INFANTRY_OF_THE_LINE, LIGHT_INFANTRY)
_PIECE: Final = re.compile(r"^([A-Za-z])([0-9]{1,3})$")
FORMAT_HELP: Final = (
    "set-up text is '<attacker|defender> to move; attacker: <pieces>; defender: <pieces>"
    "[; quiet: <n>]', pieces written as a kind letter and a square number (L Light "
    "Infantry, I Infantry of the Line, C Cavalry, A Artillery, W Wagon, T Citadel), e.g. "
    "'attacker to move; attacker: W129 C125 L101; defender: T19 A9 I11'"
)


def _bad(message: str) -> RuleError:
    return RuleError(Reason.INVALID_SETUP, f"{message}; {FORMAT_HELP}", field="setup")


def parse_setup(text: str, options: Options, default_side: int) -> BattleState:
    """The position a set-up text describes; INVALID_SETUP naming what is wrong."""
    board = bytearray(SQUARES)
    side: int | None = None
    quiet = 0
    seen: set[str] = set()
    counts: dict[tuple[int, int], int] = {}
    for raw in text.split(";"):
        part = raw.strip()
        if not part:
            continue
        words = part.lower().split()
        if len(words) == 3 and words[1:] == ["to", "move"] and words[0] in SIDE_IDS:
            if "move" in seen:
                raise _bad("the side to move is given twice")
            seen.add("move")
            side = SIDE_IDS.index(words[0])
            continue
        head, colon, rest = part.partition(":")
        head = head.strip().lower()
        if not colon:
            raise _bad(f"cannot read {quoted(part)}")
        if head == "quiet":
            if "quiet" in seen:
                raise _bad("quiet is given twice")
            seen.add("quiet")
            if not (rest.strip().isascii() and rest.strip().isdigit() and len(rest.strip()) <= 9):
                raise _bad(f"quiet needs a number of moves, not {quoted(rest.strip())}")
            quiet = int(rest.strip())
            continue
        if head not in SIDE_IDS:
            raise _bad(f"unknown section {quoted(head)}")
        if head in seen:
            raise _bad(f"the {head}'s pieces are given twice")
        seen.add(head)
        owner = SIDE_IDS.index(head)
        tokens = rest.replace(",", " ").split()
        if tokens == ["-"]:
            continue
        for token in tokens:
            match = _PIECE.match(token)
            if not match:
                raise _bad(f"{quoted(token)} is no piece")
            letter, number = match.group(1).upper(), int(match.group(2))
            kind = KIND_OF_LETTER.get(letter)
            if kind is None:
                raise _bad(f"{quoted(token)}: unknown kind letter {quoted(letter)}")
            if not 1 <= number <= SQUARES:
                raise _bad(
                    f"{quoted(token)}: there is no square {number} (squares are 1..{SQUARES})"
                )
            cell = number - 1
            if board[cell]:
                raise _bad(f"square {number} holds two pieces")
            if kind not in ARMY[owner]:
                raise _bad(f"{quoted(token)}: the {head} has no {KIND_NAMES[kind]}")
            counts[owner, kind] = counts.get((owner, kind), 0) + 1
            if counts[owner, kind] > ARMY[owner][kind]:
                raise _bad(
                    f"the {head} has at most {ARMY[owner][kind]} {KIND_NAMES[kind]} (section 3)"
                )
            board[cell] = code(owner, kind)
    for name in SIDE_IDS:
        if name not in seen:
            raise _bad(f"the {name}'s pieces are missing (write '{name}: -' for none)")
    return BattleState(bytes(board), default_side if side is None else side, options, quiet)


def format_setup(state: BattleState) -> str:
    """The set-up text of a position (what `parse_setup` reads back)."""
    parts = [f"{SIDE_IDS[state.side]} to move"]
    for owner in (ATTACKER, DEFENDER):
        tokens = []
        for kind in WRITE_ORDER:
            tokens += [
                f"{KIND_LETTERS[kind]}{NAMES[cell]}"
                for cell, piece in enumerate(state.board)
                if piece and side_of(piece) == owner and kind_of(piece) == kind
            ]
        parts.append(f"{SIDE_IDS[owner]}: {' '.join(tokens) or '-'}")
    if state.quiet:
        parts.append(f"quiet: {state.quiet}")
    return "; ".join(parts)
