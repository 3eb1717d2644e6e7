"""A position of the Game of Battle as one immutable value.

`BattleState` holds the board (139 bytes, one piece code per square), the side to move,
the moves since the last capture and the keys of the positions since then (current
last), plus its options. Equality and hashing use those alone; the legal moves, once
computed, are kept on the value so that `legal_actions`, `outcome` and `apply` on the
same state share one computation, and so are the moves that lead back through the
history when they are known (`steps`), which its position text writes.

Position keys (for the repetition rule, ruling 19) are Zobrist keys from a table drawn
with `random.Random(SEED)`, whose generator is specified by Python, so every process on
every machine computes the same 64-bit key for the same position; keys can therefore
travel in a GameState and be checked by any engine replica.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Final

from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.options import Rules, rules_of
from engine_service.rules.battle.pieces import (
    CODE_COUNT,
    DEFENDER,
    KIND_LETTERS,
    KIND_OF_CODE,
    SIDE_IDS,
    SIDE_OF_CODE,
)
from engine_service.rules.options import Options

if TYPE_CHECKING:
    from engine_service.rules.battle.legal import Analysis, Quick


SEED: Final = 0x1866_BA77
_RANDOM: Final = random.Random(SEED)
# PIECE_KEYS[code][cell]; code 0 (empty) contributes nothing.
PIECE_KEYS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(0 if piece == 0 else _RANDOM.getrandbits(64) for _ in range(SQUARES))
    for piece in range(CODE_COUNT)
)
DEFENDER_TO_MOVE: Final = _RANDOM.getrandbits(64)


def position_key(board: bytes, side: int) -> int:
    """The key of a board and side to move, computed from scratch."""
    key = DEFENDER_TO_MOVE if side == DEFENDER else 0
    for cell, piece in enumerate(board):
        if piece:
            key ^= PIECE_KEYS[piece][cell]
    return key


class BattleState:
    """Board, side to move, no-capture count and position history, with the options."""

    __slots__ = (
        "_analysis",
        "_quick",
        "board",
        "history",
        "options",
        "quiet",
        "rules",
        "side",
        "steps",
    )

    board: bytes
    side: int
    quiet: int
    history: tuple[int, ...]
    options: Options
    rules: Rules
    # The moves (`origin << 12 | destination`, oldest first) that lead back through the
    # newest entries of `history`, one each, when known; None: worked out from the keys.
    steps: tuple[int, ...] | None
    _analysis: Analysis | None
    _quick: Quick | None  # what judging one move needs (`legal.quick_of`)

    def __init__(
        self,
        board: bytes,
        side: int,
        options: Options,
        quiet: int = 0,
        history: tuple[int, ...] | None = None,
        *,
        steps: tuple[int, ...] | None = None,
        rules: Rules | None = None,
    ) -> None:
        self.board = bytes(board)
        self.side = side
        self.quiet = quiet
        self.history = history if history is not None else (position_key(self.board, side),)
        self.steps = () if history is None else steps
        self.options = options
        # `rules` given (by `make`, `play`): the options' own, not looked up again.
        self.rules = rules if rules is not None else rules_of(options)
        self._analysis = None
        self._quick = None

    @classmethod
    def make(
        cls,
        board: bytes,
        side: int,
        quiet: int,
        history: tuple[int, ...],
        *,
        options: Options,
        rules: Rules,
        steps: tuple[int, ...] | None = None,
    ) -> BattleState:
        """A state of every field given, nothing recomputed (`play` makes its own)."""
        return cls(board, side, options, quiet, history, steps=steps, rules=rules)

    @property
    def key(self) -> int:
        """The Zobrist key of this position and side to move."""
        return self.history[-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BattleState):
            return NotImplemented
        return (
            self.board == other.board
            and self.side == other.side
            and self.quiet == other.quiet
            and self.history == other.history
            and self.options == other.options
        )

    def __hash__(self) -> int:
        return hash((self.history[-1], self.quiet, len(self.history)))

    def __repr__(self) -> str:
        # The pieces by cell, without `setup.format_setup` (which builds states: a cycle).
        pieces = " ".join(
            f"{KIND_LETTERS[KIND_OF_CODE[code]]}{NAMES[cell]}/{SIDE_IDS[SIDE_OF_CODE[code]][0]}"
            for cell, code in enumerate(self.board)
            if code
        )
        return f"BattleState({SIDE_IDS[self.side]} to move, quiet {self.quiet}: {pieces})"

    def __reduce__(self) -> tuple[Any, ...]:
        fields = (self.board, self.side, self.options, self.quiet, self.history)
        return (_restored, (fields, self.steps))


def _restored(
    fields: tuple[bytes, int, Options, int, tuple[int, ...]], steps: tuple[int, ...] | None
) -> BattleState:
    """A pickled state, unpickled."""
    return BattleState(*fields, steps=steps)
