"""The set-up text that gives any position of the Game of Battle: its position text.

Position text (docs/positions.md#the-game-of-battle), words separated by spaces::

    W129A126A131C125C130I113I127I128I132I133L85L87L101L103t19a9a14c10c15i7i8i11i12i13l39l41l43l45 a

- the pieces, each a kind letter and a square number, with no space between them: upper
  case for the attacker, lower case for the defender; L Light Infantry, I Infantry of the
  Line, C Cavalry, A Artillery, W Wagon (attacker only), T Citadel (defender only); the
  attacker's first, each side's Citadel or Wagon first and then by kind and square; `-` for
  no piece at all;
- the side to move: `a` (attacker) or `d` (defender);
- `quiet=<n>` (when not 0): moves made since the last capture, for `no_capture_limit`;
- `hist=<base64url>` and `histkeys=<base64url>`: the repetition history, the positions
  since the last capture, as the moves that lead back to them and as raw keys where no move
  does (`engine_service.rules.position`, "steps back"; `position.py`). Without them the
  history starts afresh at this position.

The set-up text of earlier versions still reads (sections separated by ";", in any order)::

    attacker to move; attacker: W129 A126 A131 C125 ...; defender: T19 A9 A14 ...; quiet: 4

with `<side> to move` optional (default: the `first_player` option) and `-` for a side
without pieces.

A set-up may hold fewer pieces than the armies (the plates' positions), never more. A
position missing the Citadel or the Wagon is a finished game (9.1).
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
)
from engine_service.rules.battle.position import history_of, history_parts
from engine_service.rules.battle.state import BattleState
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options
from engine_service.rules.position import (
    PositionError,
    count_of,
    keys_of,
    keys_text,
    steps_of,
    steps_text,
)
from wargame.runtime.quoting import quoted

# Order of the kinds in written set-ups: Citadel and Wagon first, then by weight.
WRITE_ORDER: Final = (CITADEL, WAGON, ARTILLERY, CAVALRY, INFANTRY_OF_THE_LINE, LIGHT_INFANTRY)
_PIECE: Final = re.compile(r"^([A-Za-z])([0-9]{1,3})$")
_PIECES: Final = re.compile(r"([A-Za-z])([0-9]{1,3})")
_PIECE_LIST: Final = re.compile(r"(?:[LICAWTlicawt][0-9]{1,3})+|-")
SIDE_LETTERS: Final = ("a", "d")
_TOKENS: Final = ("quiet", "hist", "histkeys")
FORMAT_HELP: Final = (
    "set-up text is '<attacker|defender> to move; attacker: <pieces>; defender: <pieces>"
    "[; quiet: <n>]', pieces written as a kind letter and a square number (L Light "
    "Infantry, I Infantry of the Line, C Cavalry, A Artillery, W Wagon, T Citadel), e.g. "
    "'attacker to move; attacker: W129 C125 L101; defender: T19 A9 I11'"
)


def _bad(message: str) -> RuleError:
    return RuleError(Reason.INVALID_SETUP, f"{message}; {FORMAT_HELP}", field="setup")


def parse_setup(text: str, options: Options, default_side: int) -> BattleState:
    """The position a set-up text describes (either form); INVALID_SETUP naming what is wrong."""
    first = text.split(None, 1)[0] if text.strip() else ""
    if _PIECE_LIST.fullmatch(first):
        return _parse_position(text, options)
    return _parse_sections(text, options, default_side)


def _parse_position(text: str, options: Options) -> BattleState:
    words = text.split()
    if len(words) < 2 or words[1] not in SIDE_LETTERS:
        raise _bad("after the pieces comes the side to move, a (attacker) or d (defender)")
    board = bytearray(SQUARES)
    counts: dict[tuple[int, int], int] = {}
    if words[0] != "-":
        for letter, number in _PIECES.findall(words[0]):
            owner = ATTACKER if letter.isupper() else DEFENDER
            _put(board, counts, owner, letter.upper(), int(number), token=f"{letter}{number}")
    quiet = 0
    back: list[tuple[int, int]] = []
    older: tuple[int, ...] = ()
    seen: set[str] = set()
    for word in words[2:]:
        key, sep, value = word.partition("=")
        if not sep or key not in _TOKENS or key in seen:
            raise _bad(
                f"{quoted(word)} is not one of the words {', '.join(k + '=' for k in _TOKENS)} "
                "(each once)"
            )
        seen.add(key)
        try:
            if key == "quiet":
                quiet = count_of(value, "quiet")
            elif key == "hist":
                back = steps_of(value)
            else:
                older = keys_of(value, "histkeys")
        except PositionError as error:
            raise _bad(str(error)) from None
    side = SIDE_LETTERS.index(words[1])
    board_bytes = bytes(board)
    if not back and not older:
        return BattleState(board_bytes, side, options, quiet)
    try:
        history = history_of(board_bytes, side, back, older)
    except PositionError as error:
        raise _bad(str(error)) from None
    steps = tuple(origin << 12 | landing for origin, landing in reversed(back))
    return BattleState(board_bytes, side, options, quiet, history, steps=steps)


def _put(
    board: bytearray,
    counts: dict[tuple[int, int], int],
    owner: int,
    letter: str,
    number: int,
    *,
    token: str,
) -> None:
    """Put one piece of a set-up on the board, refusing what section 3 does not allow."""
    kind = KIND_OF_LETTER.get(letter)
    if kind is None:
        raise _bad(f"{quoted(token)}: unknown kind letter {quoted(letter)}")
    if not 1 <= number <= SQUARES:
        raise _bad(f"{quoted(token)}: there is no square {number} (squares are 1..{SQUARES})")
    cell = number - 1
    if board[cell]:
        raise _bad(f"square {number} holds two pieces")
    if kind not in ARMY[owner]:
        raise _bad(f"{quoted(token)}: the {SIDE_IDS[owner]} has no {KIND_NAMES[kind]}")
    counts[owner, kind] = counts.get((owner, kind), 0) + 1
    if counts[owner, kind] > ARMY[owner][kind]:
        raise _bad(
            f"the {SIDE_IDS[owner]} has at most {ARMY[owner][kind]} {KIND_NAMES[kind]} (section 3)"
        )
    board[cell] = code(owner, kind)


def _parse_sections(text: str, options: Options, default_side: int) -> BattleState:
    """The set-up text of earlier versions (sections separated by ';')."""
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
            _put(board, counts, owner, match.group(1).upper(), int(match.group(2)), token=token)
    for name in SIDE_IDS:
        if name not in seen:
            raise _bad(f"the {name}'s pieces are missing (write '{name}: -' for none)")
    return BattleState(bytes(board), default_side if side is None else side, options, quiet)


# Every piece code's letter in a position text (upper case attacker, lower case defender),
# and the codes in the order they are written.
_LETTER_OF_CODE: Final = {
    code(owner, kind): KIND_LETTERS[kind] if owner == ATTACKER else KIND_LETTERS[kind].lower()
    for owner in (ATTACKER, DEFENDER)
    for kind in ARMY[owner]
}
_CODES_IN_ORDER: Final = tuple(
    code(owner, kind)
    for owner in (ATTACKER, DEFENDER)
    for kind in WRITE_ORDER
    if kind in ARMY[owner]
)


def setup_text_of(state: BattleState) -> str:
    """The position text of a state (what `parse_setup` reads back to an equal state)."""
    board = state.board
    pieces = []
    for piece in _CODES_IN_ORDER:
        at = board.find(piece)
        while at >= 0:
            pieces.append(f"{_LETTER_OF_CODE[piece]}{NAMES[at]}")
            at = board.find(piece, at + 1)
    parts = ["".join(pieces) or "-", SIDE_LETTERS[state.side]]
    if state.quiet:
        parts.append(f"quiet={state.quiet}")
    if len(state.history) > 1:
        back, older = history_parts(state)
        if back:
            parts.append(f"hist={steps_text(back)}")
        if older:
            parts.append(f"histkeys={keys_text(older)}")
    return " ".join(parts)
