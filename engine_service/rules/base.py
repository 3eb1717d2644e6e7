"""The one interface every game implements, and the plain values it speaks.

A game is a `Ruleset`: pure functions over immutable states and actions of its own types
(no gRPC, no protobuf, no I/O). The service's conversion layer turns these values into the
contract's messages and back; nothing else in the engine knows the wire format.
States are immutable in one of three forms, chosen by how hot the game's search loop is:
War a `NamedTuple` (cheapest to build and compare), Battle a `__slots__` class whose only
mutable slots cache its legal-move analysis (equality and hash ignore them), Napoleonic a
frozen dataclass (many named fields). A role behind the interface has one function name in
every game that has it: `new_game`, `setup_text_of`, `parse_action`, `play`, `decided`,
`rules_of`.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from engine_service.memo import memo
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options, OptionSpec, resolve_options
from wargame.runtime.quoting import quoted

RESOLVED_OPTIONS_KEPT = 768  # distinct option sets remembered (all games together)
S = TypeVar("S")  # a game's state: an immutable value
A = TypeVar("A")  # a game's action: an immutable, hashable value


class OutcomeReason(StrEnum):
    """Why a game ended (`wargame.v1.OutcomeReason` without its prefix)."""

    CITADEL_HELD = "CITADEL_HELD"  # Game of War 9: entered and held through the reply
    CITADEL_CAPTURED = "CITADEL_CAPTURED"  # Game of Battle 9.1
    WAGON_CAPTURED = "WAGON_CAPTURED"  # Game of Battle 9.1
    ONLY_ARTILLERY_LEFT = "ONLY_ARTILLERY_LEFT"  # Game of Battle 9.2
    GUARDS_ELIMINATED = "GUARDS_ELIMINATED"  # Napoleonic Chess 8
    NO_LEGAL_MOVE = "NO_LEGAL_MOVE"
    REPETITION = "REPETITION"
    NO_PROGRESS = "NO_PROGRESS"  # no-progress / no-capture / no-elimination limits
    TURN_LIMIT = "TURN_LIMIT"
    INSUFFICIENT_FORCE = "INSUFFICIENT_FORCE"
    DEPLOYMENT_FORFEIT = "DEPLOYMENT_FORFEIT"  # Napoleonic 10.1: a bad reveal
    AGREEMENT = "AGREEMENT"
    RESIGNATION = "RESIGNATION"
    TIME = "TIME"  # lost on time (recorded by the matchmaker)
    ABANDONED = "ABANDONED"  # left the game (recorded by the matchmaker)
    ENEMIES_OUT = "ENEMIES_OUT"  # Napoleonic 10.6: every enemy player out or surrendered
    ABORTED = "ABORTED"  # aborted before any side's second turn (recorded by the matchmaker)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the winning side (None for a draw), why, and a sentence; in games
    of alliances (Napoleonic 10.6) the winner is the alliance and `winners` its players."""

    winner: str | None
    reason: OutcomeReason
    message: str
    winners: tuple[str, ...] = ()

    @property
    def winning_sides(self) -> tuple[str, ...]:
        """Every winning player: `winners`, or the one winner (none for a draw)."""
        return self.winners or ((self.winner,) if self.winner else ())


def require_ongoing(outcome: Outcome | None) -> None:
    """Raise GAME_OVER, with how the game ended, when there is an outcome."""
    if outcome is not None:
        raise RuleError(Reason.GAME_OVER, f"the game is over: {outcome.message}")


class EventKind(StrEnum):
    """What happened when an action was applied (`wargame.v1.EventKind`)."""

    MOVED = "MOVED"
    CAPTURED = "CAPTURED"
    PLACED = "PLACED"  # a Flying Machine or a unit put on the board
    HUFFED = "HUFFED"  # Game of War, compulsion = huff
    CITADEL_ENTERED = "CITADEL_ENTERED"
    EXPOSED = "EXPOSED"  # Game of Battle: a figure stands in check
    CITADEL_COMMANDED = "CITADEL_COMMANDED"
    PHASE_CHANGED = "PHASE_CHANGED"
    ATTACK_DECLARED = "ATTACK_DECLARED"
    SUPPORT_ALLOCATED = "SUPPORT_ALLOCATED"
    COMBAT_RESOLVED = "COMBAT_RESOLVED"
    ELIMINATED = "ELIMINATED"
    ADVANCED = "ADVANCED"
    REDOUBT_STARTED = "REDOUBT_STARTED"
    REDOUBT_PROGRESS = "REDOUBT_PROGRESS"
    REDOUBT_COMPLETED = "REDOUBT_COMPLETED"
    REDOUBT_ABANDONED = "REDOUBT_ABANDONED"
    DEPLOYMENT_COMMITTED = "DEPLOYMENT_COMMITTED"
    DEPLOYMENT_SEALED = "DEPLOYMENT_SEALED"
    DEPLOYMENT_REVEALED = "DEPLOYMENT_REVEALED"
    TURN_ENDED = "TURN_ENDED"
    DRAW_OFFERED = "DRAW_OFFERED"
    DRAW_DECLINED = "DRAW_DECLINED"
    GAME_OVER = "GAME_OVER"
    PLAYER_OUT = "PLAYER_OUT"  # Napoleonic 10.6: one player out, the others play on


@dataclass(frozen=True, slots=True)
class Contribution:
    """One unit's part in a combat: its attack or support value, and why it is that."""

    unit: str  # unit id
    kind: str  # piece kind id ("artillery")
    cell: str  # where it stands
    value: int
    note: str = ""  # e.g. "attacks at 1 into a redoubt"


@dataclass(frozen=True, slots=True)
class CombatTally:
    """Napoleonic Chess 7.3: one attacked unit's sums and fate, term by term."""

    target: str  # unit id
    target_kind: str
    cell: str
    attackers: tuple[Contribution, ...]
    defence: int  # the target's own defence value
    supports: tuple[Contribution, ...]
    bonuses: tuple[tuple[str, int], ...]  # ("hill", 1), ("obstacle", 1)
    attack_total: int
    defence_total: int
    eliminated: bool


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened, for a client to show; `text` is a full sentence."""

    kind: EventKind
    text: str
    side: str | None = None
    cells: tuple[str, ...] = ()
    piece: str | None = None  # piece kind id
    unit: str | None = None  # unit id where the game has them
    combat: CombatTally | None = None


# --- Board descriptions (DescribeGame) ------------------------------------------------


class CellShape(StrEnum):
    """How a cell is drawn."""

    SQUARE = "SQUARE"
    DIAMOND = "DIAMOND"


@dataclass(frozen=True, slots=True)
class CellInfo:
    """One cell for drawing: its name, centre (x right, y up, one unit per cell) and tags.

    Tags are words a client may colour by: "dark"/"light", "citadel", "ford", "bridge",
    "bank:south", "hill", "redoubt", "deployment:red", "station" (Flying-Machine circle).
    """

    name: str
    x: float
    y: float
    shape: CellShape
    tags: tuple[str, ...] = ()
    label: str = ""  # a number or letter printed on the cell, if any


@dataclass(frozen=True, slots=True)
class Feature:
    """A drawing feature that is not a cell: a river line, a river cell, an obstacle edge."""

    kind: str  # "river", "river_cell", "obstacle", "closed_side"
    points: tuple[tuple[float, float], ...]  # polyline in cell coordinates
    cells: tuple[str, ...] = ()  # cells it belongs to, if any
    label: str = ""


@dataclass(frozen=True, slots=True)
class PieceKind:
    """A kind of piece: id, name, one-letter code, Unicode glyph and what it does."""

    id: str
    name: str
    letter: str
    glyph: str
    summary: str


@dataclass(frozen=True, slots=True)
class SideInfo:
    """A side of the game: id used everywhere, display name, a drawing colour and its
    alliance (empty: the side is its own alliance)."""

    id: str
    name: str
    colour: str
    alliance: str = ""


@dataclass(frozen=True, slots=True)
class ScenarioInfo:
    """A named battle of a game with its players, for lobbies (Napoleonic Chess)."""

    name: str
    title: str
    description: str
    sides: tuple[SideInfo, ...]


@dataclass(frozen=True, slots=True)
class BoardDescription:
    """Everything a client needs to draw this game's board without knowing its rules."""

    game: str
    title: str
    width: float  # drawing extent in cell units
    height: float
    cells: tuple[CellInfo, ...]
    features: tuple[Feature, ...]
    piece_kinds: tuple[PieceKind, ...]
    sides: tuple[SideInfo, ...]
    summary: str  # a short rules summary (plain text, a few paragraphs)
    notation: str  # how to type actions, with examples


# --- Pieces as every client sees them -------------------------------------------------


@dataclass(frozen=True, slots=True)
class PieceView:
    """A piece on the board as the contract's common `Piece` carries it."""

    kind: str
    side: str
    cell: str
    id: str = ""  # unit id where the game has them (Napoleonic Chess)
    moved: bool = False  # Game of War: a Troop that has moved (no double step)
    tags: tuple[str, ...] = ()  # "van"/"rear" (cosmetic), "immobile", "exposed"


class PositionStyle(StrEnum):
    """Where a game's position text carries its options and the part `Game` adds
    (`engine_service.rules.position`)."""

    WORDS = "words"  # appended as `key=value` words (War, Battle)
    SECTIONS = "sections"  # as the sections `options: ...` and `game: ...` (Napoleonic)


class Ruleset(ABC, Generic[S, A]):
    """One game's rules as pure functions over its own immutable states and actions.

    Conventions every game keeps:
    - `legal_actions` lists only game actions (no resign/draw; `game.py` adds those) and is
      empty once the game is over; perft counts sequences of `legal_actions`.
    - `apply` checks everything and raises `RuleError` naming the rule; `play` is the
      fast path for actions known to be legal (perft, search) and checks nothing.
    - Sides and cells are the strings of `describe()`; states carry their options.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    sides: ClassVar[tuple[SideInfo, ...]]
    option_specs: ClassVar[tuple[OptionSpec, ...]]
    presets: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    position_style: ClassVar[PositionStyle] = PositionStyle.WORDS

    def __init__(self, seal_key: bytes | None = None) -> None:
        """A ruleset; `seal_key` is the engine's key for hidden information (Napoleonic
        Chess's sealed deployment), which games without any ignore."""

    # -- options and set-up ----------------------------------------------------------

    def resolve_options(self, given: Mapping[str, str], preset: str | None = None) -> Options:
        """Checked options from text values and an optional preset name.

        Every request carries its options as text, so the answers are remembered: the same
        text always gives the same immutable `Options`.
        """
        return _resolved_options(self, tuple(sorted(given.items())), preset)

    def read_options(self, given: Mapping[str, str], preset: str | None) -> Options:
        """Checked options from text, uncached (games that layer scenario defaults override it)."""
        return resolve_options(self.option_specs, given, presets=self.presets, preset=preset)

    @abstractmethod
    def new_game(self, options: Options, setup: str | None = None, *, checked: bool = True) -> S:
        """The initial state, or the state a set-up text describes.

        `setup` is None for the options' own initial position, or a set-up text: the game's
        position grammar (docs/positions.md), which writes a whole state (`setup_text`) and
        still reads every set-up text of earlier versions. INVALID_SETUP names what is wrong,
        including every problem `check_state` finds; with `checked` False (a text the engine
        wrote itself, its integrity tag verified) `check_state` is not asked.
        """

    @abstractmethod
    def options_of(self, state: S) -> Options:
        """The options a state was created with."""

    @abstractmethod
    def setup_text(self, state: S) -> str:
        """The whole state as the game's position text, without its options (the canonical
        text: one state, one text); `new_game` reads it back to an equal state."""

    # -- play ------------------------------------------------------------------------

    @abstractmethod
    def to_act(self, state: S) -> tuple[str, ...]:
        """The sides that may send a game action now (empty when the game is over)."""

    @abstractmethod
    def legal_actions(self, state: S) -> list[A]:
        """Every legal game action in `state` for the side(s) to act."""

    @abstractmethod
    def apply(self, state: S, action: A) -> tuple[S, list[Event]]:
        """Check `action` and return the new state and what happened; raise RuleError."""

    @abstractmethod
    def play(self, state: S, action: A) -> S:
        """The new state after an action already known to be legal (no checks, no events)."""

    def random_action(self, state: S, rng: random.Random) -> A | None:
        """A uniformly random legal action, None when there is none.

        Games with actions that cannot all be listed (a secret deployment's commitment)
        override this so random players and playouts can still get through them.
        """
        actions = self.legal_actions(state)
        return rng.choice(actions) if actions else None

    def validate(self, state: S, action: A) -> None:
        """Raise RuleError when `action` is illegal in `state`."""
        self.apply(state, action)

    @abstractmethod
    def actor(self, state: S, action: A) -> str:
        """The side that performs `action`."""

    def check_turn(self, state: S, side: str, action: A) -> None:
        """Raise NOT_YOUR_TURN when `side` may not send `action` now.

        Games with phases override this to say WRONG_PHASE where that is the truer reason
        (Napoleonic Chess T25: a move sent while the defender allocates supports).
        """
        to_act = self.to_act(state)
        if side not in to_act:
            raise RuleError(
                Reason.NOT_YOUR_TURN, f"it is not {side}'s turn: {' and '.join(to_act)} to act"
            )
        actor = self.actor(state, action)
        if actor != side:
            raise RuleError(Reason.NOT_YOUR_TURN, f"{side} cannot act for {actor}")

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """How the game ended, or None while it goes on."""

    # -- notation --------------------------------------------------------------------

    @abstractmethod
    def format_action(self, state: S, action: A) -> str:
        """The action's notation in `state` (the text `parse_action` reads back)."""

    @abstractmethod
    def parse_action(self, state: S, text: str, side: str | None = None) -> A:
        """The action `text` names in `state` for `side` (default: the side to act)."""

    def public_notation(self, state: S, action: A) -> str | None:
        """What other players may see of `action` until the rules reveal it.

        None when the action hides nothing (others see its notation); games whose actions
        carry hidden information (a sealed deployment) override this to leave it out.
        """
        return None

    # -- inspection ------------------------------------------------------------------

    @abstractmethod
    def check_state(self, state: S) -> list[str]:
        """Every inconsistency of a state that could not arise in play; empty if none."""

    @abstractmethod
    def pieces(self, state: S) -> list[PieceView]:
        """The pieces on the board, as every client draws them."""

    @abstractmethod
    def describe(self, options: Options) -> BoardDescription:
        """The board, piece kinds, sides and rules summary for drawing."""

    # -- shared ------------------------------------------------------------------------

    def perft(self, state: S, depth: int) -> int:
        """The number of action sequences of exactly `depth` actions from `state`."""
        if depth == 0:
            return 1
        actions = self.legal_actions(state)
        if depth == 1:
            # Leaves are still made (like with like: python-chess makes every leaf too).
            play = self.play
            for action in actions:
                play(state, action)
            return len(actions)
        return sum(self.perft(self.play(state, action), depth - 1) for action in actions)

    def divide(self, state: S, depth: int) -> list[tuple[str, int]]:
        """perft split by first action: (notation, count) for each legal action."""
        return [
            (self.format_action(state, action), self.perft(self.play(state, action), depth - 1))
            for action in self.legal_actions(state)
        ]

    def require_ongoing(self, state: S) -> None:
        """Raise GAME_OVER if the game has ended."""
        require_ongoing(self.outcome(state))

    def scenarios(self) -> tuple[ScenarioInfo, ...]:
        """The game's named battles with their players (none for games without them)."""
        return ()

    def sides_of(self, options: Options) -> tuple[SideInfo, ...]:
        """The sides of a game under these options (a scenario may have more than two)."""
        return self.sides

    def players_of(self, state: S) -> tuple[str, ...]:
        """The ids of the sides of the game `state` belongs to."""
        return tuple(info.id for info in self.sides)

    def check_side(self, state: S, side: str) -> None:
        """ILLEGAL_ACTION naming the game's sides when `side` is none of them."""
        players = self.players_of(state)
        if side not in players:
            known = ", ".join(players)
            raise RuleError(Reason.ILLEGAL_ACTION, f"unknown side {quoted(side)}; sides: {known}")

    def remaining(self, state: S) -> tuple[str, ...]:
        """The sides still in the game (all of them, except in games where one player of
        several may be out while the game goes on)."""
        return self.players_of(state)

    def surrender(self, state: S, side: str, reason: OutcomeReason) -> S | None:
        """The state after `side` alone leaves the game (resigns, loses on time, abandons)
        while its allies play on, or None when its leaving ends the game (two-sided games)."""
        return None

    def side_index(self, side: str) -> int:
        """The position of a side id in `sides`; ILLEGAL_ACTION naming the sides if unknown."""
        for index, info in enumerate(self.sides):
            if info.id == side:
                return index
        known = ", ".join(info.id for info in self.sides)
        raise RuleError(Reason.ILLEGAL_ACTION, f"unknown side {quoted(side)}; sides: {known}")


AnyRuleset = Ruleset[Any, Any]


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One game as every layer of the engine finds it, declared once in its own package.

    The rules stay pure: the parts outside them (the converter to the wire format, the
    AI) are named as "module:attribute" and loaded by the layer that uses them.
    """

    ruleset: type[AnyRuleset]  # made with the engine's seal key
    converter: str  # its `GameConverter` class (engine_service.convert)
    ai: str  # its AI: a function of the ruleset giving a `Strategy` (engine_service.ai)

    @property
    def id(self) -> str:
        """The game's id."""
        return self.ruleset.id


@memo(RESOLVED_OPTIONS_KEPT)
def _resolved_options(
    ruleset: AnyRuleset, given: tuple[tuple[str, str], ...], preset: str | None
) -> Options:
    return ruleset.read_options(dict(given), preset)
