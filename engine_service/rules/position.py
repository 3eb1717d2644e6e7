"""Position texts: a whole game as one line of text, like FEN is for chess.

Each game has its own grammar (docs/positions.md, and the game's `position.py`): its set-up
text, grown to write every field of its state, so that one text serves set-ups, records
and states. Words, sections, quoting and base64url are `wargame.position_text`'s (the
matchmaker reads texts with it too); what else the three grammars share is written here:

- the options a text carries: only those off their defaults (the text is self-contained
  and stays small);
- the part `Game` adds: `ply=<n>` (actions played), `offer=<side>` (the standing draw
  offer), `accepted=<side>,<side>` (in games of more than two sides, who has accepted
  it so far) and `end=<how>` (an ending by the players' hands: `resign:<side>`,
  `timeout:<side>`, `abandon:<side>` for the side that gave up, or `agreed`); each is
  written only when it is not 0 or empty;
- position keys (64-bit) and counts, in base64url and decimal;
- each key (of a `key=value` word, of a section) given once at the most (`once_each`).

A game's `position_style` says where its options and the `Game` part go: appended as words
after its own text (War, Battle), or as the sections `options: ...` and `game: ...`
(Napoleonic Chess). `write_position` and `read_position` put the parts together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset, Outcome, OutcomeReason, PositionStyle
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import AGREED, FORFEIT_TEXT, Game, forfeit
from engine_service.rules.options import Options
from wargame.position_text import (
    Pair,
    PositionError,
    b64,
    head_and_body,
    pair_of,
    pairs_text,
    quote,
    sections,
    unb64,
    unquote,
    words,
)
from wargame.runtime.quoting import quoted

# With the shared grammar of `wargame.position_text`, which the games' modules import here.
__all__ = [
    "AGREED_WORD",
    "GAME_KEYS",
    "GAME_SECTION",
    "MAX_PLY",
    "OPTIONS_SECTION",
    "Pair",
    "PositionError",
    "Reversal",
    "b64",
    "count_of",
    "game_pairs",
    "history_from_steps",
    "keys_of",
    "keys_text",
    "option_names",
    "option_pairs",
    "options_from",
    "pair_of",
    "pairs_text",
    "quote",
    "read_position",
    "sections",
    "split_position",
    "steps_back",
    "steps_of",
    "steps_text",
    "unb64",
    "unquote",
    "words",
    "write_position",
]

GAME_KEYS: Final = ("ply", "offer", "accepted", "end")
OPTIONS_SECTION: Final = "options"
GAME_SECTION: Final = "game"
AGREED_WORD: Final = "agreed"
MAX_PLY: Final = 2**31 - 1
_FORFEITS: Final = {word: reason for reason, word in FORFEIT_TEXT.items()}


def keys_text(keys: Sequence[int]) -> str:
    """Position keys (64-bit), each as 8 bytes big-endian, all in one base64url text."""
    return b64(b"".join(key.to_bytes(8, "big") for key in keys))


def keys_of(text: str, what: str) -> tuple[int, ...]:
    """The 64-bit keys of a `keys_text`."""
    data = unb64(text, what)
    if len(data) % 8:
        raise PositionError(f"{what}: {len(data)} bytes is not a whole number of 8-byte keys")
    return tuple(int.from_bytes(data[i : i + 8], "big") for i in range(0, len(data), 8))


def count_of(text: str, what: str, most: int = MAX_PLY) -> int:
    """A whole number 0..most written in decimal; PositionError naming `what`."""
    if not text.isdigit() or len(text) > 10 or int(text) > most:
        raise PositionError(f"{what}: {quoted(text[:24])} is not a whole number 0..{most}")
    return int(text)


Value = TypeVar("Value")


def once_each(
    pairs: Iterable[tuple[str, Value]], twice: Callable[[str], Exception]
) -> Iterator[tuple[str, Value]]:
    """The (key, value) pairs of a text in their order (`key=value` words, a setup's
    sections); `twice(key)` is raised at a key given again."""
    seen: set[str] = set()
    for key, value in pairs:
        if key in seen:
            raise twice(key)
        seen.add(key)
        yield key, value


# --- options ----------------------------------------------------------------------------------


@memo(256)  # keyed by the options of a game: few distinct ones, each met again and again
def option_pairs(ruleset: AnyRuleset, options: Options) -> tuple[Pair, ...]:
    """The fewest options, in declaration order, that resolve to `options` (those off their
    defaults; a Napoleonic scenario's own values count as its defaults)."""
    target = options.as_text()
    given: dict[str, str] = {}
    for name, text in target.items():
        if ruleset.resolve_options(given).as_text()[name] != text:
            given[name] = text
    if ruleset.resolve_options(given) != options:  # a layering this walk cannot see
        given = target
    return tuple(given.items())


@memo(16)  # keyed by the ruleset: one entry per game
def option_names(ruleset: AnyRuleset) -> frozenset[str]:
    """The names of a game's options (the words of a text that give an option)."""
    return frozenset(spec.name for spec in ruleset.option_specs)


def options_from(ruleset: AnyRuleset, pairs: Sequence[Pair]) -> Options:
    """The options a text gives (the rest at their defaults)."""
    given = dict(pairs)
    if len(given) != len(pairs):
        raise PositionError("an option is given twice")
    return ruleset.resolve_options(given)


# --- the part Game adds -----------------------------------------------------------------------


def game_pairs(game: Game[Any]) -> list[Pair]:
    """`ply=`, `offer=` and `end=` of a game, each only when it says something."""
    pairs: list[Pair] = []
    if game.ply:
        pairs.append(("ply", str(game.ply)))
    if game.draw_offer:
        pairs.append(("offer", game.draw_offer))
    if game.draw_accepted:
        pairs.append(("accepted", ",".join(game.draw_accepted)))
    ended = game.ended
    if ended is not None:
        if ended.reason is OutcomeReason.AGREEMENT:
            pairs.append(("end", AGREED_WORD))
        else:
            loser = next(info.id for info in game.ruleset.sides if info.id != ended.winner)
            pairs.append(("end", f"{FORFEIT_TEXT[ended.reason]}:{loser}"))
    return pairs


def _ending(ruleset: AnyRuleset, text: str) -> Outcome:
    if text == AGREED_WORD:
        return AGREED
    word, _sep, side = text.partition(":")
    reason = _FORFEITS.get(word)
    if reason is None or side not in {info.id for info in ruleset.sides}:
        words_known = ", ".join(f"{w}:<side>" for w in _FORFEITS)
        raise PositionError(f"end={quoted(text)} is none of {words_known}, {AGREED_WORD}")
    return forfeit(ruleset, side, reason)


# --- whole texts ------------------------------------------------------------------------------


def write_position(game: Game[Any]) -> str:
    """The position text of a game: the game's own text, its options, the `Game` part."""
    ruleset = game.ruleset
    body = ruleset.setup_text(game.state)
    options = option_pairs(ruleset, ruleset.options_of(game.state))
    meta = game_pairs(game)
    if ruleset.position_style is PositionStyle.WORDS:
        parts = [body]
        if options:
            parts.append(pairs_text(options))
        if meta:
            parts.append(pairs_text(meta))
        return " ".join(parts)
    text = body
    if options:
        text += f"; {OPTIONS_SECTION}: {pairs_text(options)}"
    if meta:
        text += f"; {GAME_SECTION}: {pairs_text(meta)}"
    return text


def split_position(ruleset: AnyRuleset, text: str) -> tuple[str, list[Pair], list[Pair]]:
    """A position text's own part, its options and its `Game` part (not yet checked)."""
    options: list[Pair] = []
    meta: list[Pair] = []
    if ruleset.position_style is PositionStyle.WORDS:
        names = option_names(ruleset)
        body: list[str] = []
        for word in words(text):
            key = word.partition("=")[0]
            if key in names:
                options.append(pair_of(word))
            elif key in GAME_KEYS:
                meta.append(pair_of(word))
            else:
                body.append(word)
        return " ".join(body), options, meta
    kept: list[str] = []
    for section in sections(text):
        head, rest = head_and_body(section)
        if head in (OPTIONS_SECTION, GAME_SECTION):
            (options if head == OPTIONS_SECTION else meta).extend(
                pair_of(word) for word in words(rest)
            )
        else:
            kept.append(section)
    return "; ".join(kept), options, meta


def read_position(ruleset: AnyRuleset, text: str, *, checked: bool = True) -> Game[Any]:
    """The game a position text describes; INVALID_STATE (field `position`) naming what is
    wrong, every problem `check_state` finds included (`checked` False: a text the engine
    wrote itself, parsed in full but not checked again; `engine_service.convert.tags`)."""
    try:
        body, option_words, meta = split_position(ruleset, text)
        options = options_from(ruleset, option_words)
        state = ruleset.new_game(options, body, checked=checked)
        ply, offer, ended = 0, None, None
        accepted: tuple[str, ...] = ()
        for key, value in once_each(meta, lambda key: PositionError(f"{key}= is given twice")):
            if key == "ply":
                ply = count_of(value, "ply")
            elif key == "offer":
                ruleset.check_side(state, value)
                offer = value
            elif key == "accepted":
                accepted = tuple(value.split(","))
                for side in accepted:
                    ruleset.check_side(state, side)
                if len(set(accepted)) != len(accepted):
                    raise PositionError(f"accepted={quoted(value)} names a side twice")
            else:
                ended = _ending(ruleset, value)
    except PositionError as error:
        raise RuleError(Reason.INVALID_STATE, str(error), field="position") from None
    except RuleError as error:
        message = error.message
        for prefix in ("setup: ", "set-up: "):
            message = message.removeprefix(prefix)
        raise RuleError(Reason.INVALID_STATE, message, field="position") from None
    by_rules = ruleset.outcome(state) if ended is not None else None
    if by_rules is not None and ended is not None:
        raise RuleError(
            Reason.INVALID_STATE,
            f"the game ended by the rules ({by_rules.message}), so it cannot also end "
            f"by {ended.reason.lower()}",
            field="position",
        )
    if accepted and (offer is None or offer in accepted):
        raise RuleError(
            Reason.INVALID_STATE,
            "accepted= names who accepted a standing draw offer, and there is none from "
            "another side",
            field="position",
        )
    return Game(ruleset, state, ended=ended, draw_offer=offer, draw_accepted=accepted, ply=ply)


# --- the repetition history as steps back ---------------------------------------------------


@dataclass(frozen=True)
class Reversal:
    """How a game's position key changes when a reversible move is taken back.

    War and Battle keep the keys of the positions since the last irreversible action (the
    repetition draw). Each of those positions is the current one with some moves taken back,
    so a text writes the moves (3 bytes each: `origin << 12 | landing`, "the man now on
    `landing` stood on `origin`", origin = landing for a pass), newest first, and the reader
    works the keys out again. A key no move explains (a client's own history, or huff rights
    in an earlier position) is written as it is, and so is every older one.
    """

    piece_keys: Sequence[Sequence[int]]  # [code][cell] -> the key part of a piece there
    cells_by_key: Sequence[Mapping[int, int]]  # [code] -> {key part: cell}
    turn_key: int  # XORed in on every ply (the side to move changes)
    mover: Callable[[int], int]  # code -> the side that owns it, -1 if it cannot move back
    passes: bool = False  # the game's history may hold a pass (War, passing_allowed)
    movers: tuple[int, ...] = field(init=False, repr=False)  # `mover` of every code

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "movers", tuple(self.mover(code) for code in range(len(self.piece_keys)))
        )


def steps_back(
    how: Reversal, board: bytes, side: int, history: Sequence[int], first: int = 0
) -> tuple[list[tuple[int, int]], list[int]]:
    """The steps back that explain `history` (oldest key first, the current last) and the
    older keys they do not, both newest first; `first` is XORed into the first step's key
    (War: the current position's huff rights)."""
    work = bytearray(board)
    key = history[-1] ^ first
    steps: list[tuple[int, int]] = []
    piece_keys, cells_by_key, movers = how.piece_keys, how.cells_by_key, how.movers
    men: tuple[list[int], list[int]] = ([], [])  # each side's cells that may move back
    for cell, piece in enumerate(board):
        if piece and movers[piece] >= 0:
            men[movers[piece]].append(cell)
    for done, earlier in enumerate(reversed(history[:-1])):
        wanted = earlier ^ key ^ how.turn_key
        cells = men[1 - side if len(steps) % 2 == 0 else side]
        found: tuple[int, int] | None = None
        if wanted == 0 and how.passes:
            found = (0, 0)
        else:
            for index, landing in enumerate(cells):
                piece = work[landing]
                origin = cells_by_key[piece].get(wanted ^ piece_keys[piece][landing], -1)
                if origin >= 0 and not work[origin]:
                    found = (origin, landing)
                    cells[index] = origin
                    break
        if found is None:
            return steps, list(reversed(history[: len(history) - 1 - done]))
        origin, landing = found
        if origin != landing:
            work[origin], work[landing] = work[landing], 0
        steps.append(found)
        key = earlier
    return steps, []


def history_from_steps(
    how: Reversal,
    board: bytes,
    side: int,
    key: int,
    *,
    steps: Sequence[tuple[int, int]],
    older: Sequence[int],
    first: int = 0,
) -> tuple[int, ...]:
    """The history (oldest first, `key` last) that `steps_back` wrote; PositionError if a
    step cannot be taken back on this board."""
    work = bytearray(board)
    keys = [key]
    key ^= first
    for number, (origin, landing) in enumerate(steps, start=1):
        moving = 1 - side if number % 2 else side
        if origin == landing:
            if not how.passes:
                raise PositionError(f"hist: step {number} is a pass, which this game has not")
        else:
            piece = work[landing] if landing < len(work) else 0
            if origin >= len(work) or work[origin] or not piece or how.movers[piece] != moving:
                raise PositionError(
                    f"hist: step {number} takes back no move of the side that made it"
                )
            table = how.piece_keys[piece]
            key ^= table[landing] ^ table[origin]
            work[origin], work[landing] = piece, 0
        key ^= how.turn_key
        keys.append(key)
    keys.extend(older)
    keys.reverse()
    return tuple(keys)


def steps_text(steps: Sequence[tuple[int, int]]) -> str:
    """Steps back as base64url, 3 bytes each."""
    return b64(b"".join(((o << 12) | c).to_bytes(3, "big") for o, c in steps))


def steps_of(text: str) -> list[tuple[int, int]]:
    """The steps back of a `steps_text`."""
    data = unb64(text, "hist")
    if len(data) % 3:
        raise PositionError(f"hist: {len(data)} bytes is not a whole number of 3-byte steps")
    values = (int.from_bytes(data[i : i + 3], "big") for i in range(0, len(data), 3))
    return [(v >> 12, v & 0xFFF) for v in values]
