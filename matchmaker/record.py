"""The session record: one game as stored, and its one mapping to the game's Redis hash.

`GameRecord` is the game hash (`keys.game`) read back. `FIELDS` is the only place an
attribute meets its hash field: each entry names both and the codec between them, so
`from_hash`, `to_hash` and `changed_fields` cannot disagree. A new game writes its whole
record (`to_hash`); every later commit writes exactly the fields its change touched
(`changed_fields(before)`), derived from the two records, never spelled by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from matchmaker.clocks import Clock
from matchmaker.ratings import pool
from matchmaker.states import compact
from wargame.v1 import game_pb2


class GameStatus(StrEnum):
    """Where a game is in its life."""

    OPEN = "open"  # waiting for players
    RUNNING = "running"
    FINISHED = "finished"  # played to an end, or closed before anyone joined


class Visibility(StrEnum):
    """Who can find a game: public games are listed, private ones joined by invite code."""

    PUBLIC = "public"
    PRIVATE = "private"


class SeatKind(StrEnum):
    """Who plays a seat."""

    HUMAN = "human"
    BOT = "bot"


class RatingStatus(StrEnum):
    """Where a rated game's rating update stands."""

    NONE = ""  # not finished, or not rated
    PENDING = "pending"  # finished and rated, not yet counted in both ratings
    DONE = "done"


BOT_PLAYER = "bot"  # the player id of every bot seat


@dataclass
class Seat:
    """One seat of a game: the side, who sits there (empty while open), their rating at the
    start of the game (for the rating update) and, once a rated game is settled, their
    rating before and after its result; an open seat may be kept for one player (the
    opponent offered a rematch)."""

    side: str
    player: str = ""
    name: str = ""
    kind: SeatKind = SeatKind.HUMAN
    rating: str = ""  # ratings.Rating text, "" for a new player
    reserved: str = ""  # the only player who may take this open seat ("" anyone)
    rating_before: str = ""  # the rating the game's result was applied to
    rating_after: str = ""  # the rating after it
    level: int = 0  # a bot seat's own level (1-5; 0: the game's `bot_level`)

    def to_dict(self) -> dict[str, str | int]:
        """The stored form (the later fields only when set)."""
        out: dict[str, str | int] = {
            "s": self.side,
            "p": self.player,
            "n": self.name,
            "k": self.kind,
            "r": self.rating,
        }
        for key, value in (
            ("rv", self.reserved),
            ("rb", self.rating_before),
            ("ra", self.rating_after),
            ("lv", self.level),
        ):
            if value:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Seat:
        """A seat from its stored form."""
        return cls(
            data["s"],
            data.get("p", ""),
            data.get("n", ""),
            SeatKind(data.get("k", SeatKind.HUMAN)),
            data.get("r", ""),
            data.get("rv", ""),
            data.get("rb", ""),
            data.get("ra", ""),
            int(data.get("lv", 0)),
        )


@dataclass(frozen=True)
class ActionEntry:
    """One committed action: who, its notation, what others see, and the action itself.

    The notations of a game live together in one field of its hash (`moves`, a JSON list
    of `[side, notation]`, or `[side, notation, public]` when the action hides something),
    read with the game on every call; the actions themselves (serialized wargame.v1.Action)
    in the actions list, read only for records.
    """

    side: str
    notation: str
    public: str  # equal to `notation` unless the action hides something
    action: bytes = b""  # serialized wargame.v1.Action, as the engine read it

    @property
    def hidden(self) -> bool:
        """True when others must see `public` instead of `notation` until the reveal."""
        return self.public != self.notation

    def row(self) -> list[str]:
        """The entry's row of the `moves` field."""
        return (
            [self.side, self.notation, self.public] if self.hidden else [self.side, self.notation]
        )


def moves_json(before: str, added: Sequence[ActionEntry]) -> str:
    """The `moves` field after appending entries (the earlier text is not parsed again)."""
    return rows_json(before, [entry.row() for entry in added])


def rows_json(before: str, added: Sequence[Sequence[str]]) -> str:
    """The `moves` field after appending rows."""
    rows = json.dumps(list(added), separators=(",", ":"), ensure_ascii=False)
    if before in ("", "[]"):
        return rows
    if rows == "[]":
        return before
    return before[:-1] + "," + rows[1:]


def parse_moves(raw: str) -> list[ActionEntry]:
    """The entries of a `moves` field. A row whose notation is sealed (a fourth item, see
    `Store.moves_after`) reads as its public notation until the store opens it."""
    entries = []
    for row in json.loads(raw or "[]"):
        public = row[2] if len(row) > 2 and row[2] else row[1]
        entries.append(ActionEntry(row[0], row[1] or public, public))
    return entries


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True)
class Codec:
    """How one attribute is written to its hash field and read back."""

    encode: Callable[[Any], str | bytes]
    decode: Callable[[bytes], Any]


TEXT = Codec(str, bytes.decode)
NUMBER = Codec(str, lambda raw: int(raw) if raw else 0)
FLAG = Codec(lambda value: "1" if value else "0", lambda raw: raw == b"1")
BLOB = Codec(bytes, bytes)


def _compact_state(raw: bytes) -> bytes:
    """A serialized GameState in its compact form (`states.compact`): a state is stored as
    its position and summary, whatever view it was given with."""
    if not raw:
        return raw
    state = game_pb2.GameState.FromString(raw)
    kept = compact(state)
    return raw if kept is state else kept.SerializeToString()


STATE = Codec(_compact_state, bytes)
SEATS = Codec(
    lambda seats: _compact([seat.to_dict() for seat in seats]),
    lambda raw: [Seat.from_dict(item) for item in json.loads(raw or b"[]")],
)
CLOCK = Codec(
    lambda clock: "" if clock is None else clock.to_json(),
    lambda raw: Clock.from_json(raw) if raw else None,
)
OPTIONS = Codec(_compact, json.loads)
TIMES = Codec(lambda value: _compact(value) if value else "", lambda raw: json.loads(raw or b"{}"))
READINGS = Codec(
    lambda value: _compact(value) if value else "", lambda raw: json.loads(raw or b"{}")
)


def _enum(kind: type[StrEnum]) -> Codec:
    return Codec(str, lambda raw: kind(raw.decode()))


@dataclass(frozen=True)
class Field:
    """One attribute of `GameRecord` and the hash field that stores it."""

    attribute: str
    name: str  # the hash field
    codec: Codec
    default: Any  # the value of a field the hash does not hold
    on_every_load: bool = True  # False: read only for the full record (`Store.load(full=True)`)


# Every attribute but `id` (the key itself), in one table. `version` is written by
# `commit.lua` (the compare-and-set), never by the fields a commit sends.
FIELDS: tuple[Field, ...] = (
    Field("version", "version", NUMBER, 0),
    Field("ruleset", "game", TEXT, ""),
    Field("status", "status", _enum(GameStatus), GameStatus.OPEN),
    Field("visibility", "visibility", _enum(Visibility), Visibility.PUBLIC),
    Field("rated", "rated", FLAG, False),
    Field("created_ms", "created_ms", NUMBER, 0),
    Field("updated_ms", "updated_ms", NUMBER, 0),
    Field("acted_ms", "acted_ms", NUMBER, 0),
    Field("started_ms", "started_ms", NUMBER, 0),
    Field("ended_ms", "ended_ms", NUMBER, 0, on_every_load=False),
    Field("seats", "seats", SEATS, []),
    Field("state_bytes", "state", STATE, b""),
    Field("initial_bytes", "initial", STATE, b"", on_every_load=False),
    Field("clock", "clock", CLOCK, None),
    Field("invite", "invite", TEXT, ""),
    Field("bot_ms", "bot_ms", NUMBER, 0),
    Field("rating_status", "rating", _enum(RatingStatus), RatingStatus.NONE),
    Field("closed", "closed", TEXT, ""),
    Field("moves_raw", "moves", TEXT, "[]"),
    Field("options", "options", OPTIONS, {}, on_every_load=False),
    Field("preset", "preset", TEXT, "", on_every_load=False),
    Field("setup", "setup", TEXT, "", on_every_load=False),
    Field("bot_level", "bot_level", NUMBER, 0),
    Field("away", "away", TIMES, {}),
    Field("warned", "warned", TIMES, {}),
    Field("readings", "readings", READINGS, {}),
    Field("ending", "ending", BLOB, b""),
    Field("rematch", "rematch", TEXT, ""),
    Field("rematch_of", "rematch_of", TEXT, ""),
)
VERSION = "version"
# Fields a new game writes even at their default: scripts and index checks read them alone.
ALWAYS_WRITTEN = frozenset({VERSION, "status"})
# The hash fields read with a game on every call, and those of the full record.
LOAD_FIELDS = tuple(entry.name for entry in FIELDS if entry.on_every_load)
FULL_FIELDS = tuple(entry.name for entry in FIELDS)


@dataclass
class GameRecord:
    """A game as stored: meta fields, seats, current and initial state, clock, moves."""

    id: str
    ruleset: str
    status: GameStatus
    version: int
    visibility: Visibility
    rated: bool
    created_ms: int
    updated_ms: int  # last commit
    acted_ms: int  # last game action (or start): abandonment counts from here
    seats: list[Seat]
    state_bytes: bytes
    initial_bytes: bytes
    clock: Clock | None
    invite: str
    bot_ms: int
    rating_status: RatingStatus
    closed: str = ""  # why an open game was closed without being played
    moves_raw: str = "[]"  # the `moves` field as stored
    ended_ms: int = 0  # when the game finished
    options: dict[str, str] = field(default_factory=dict)  # as asked for at creation
    preset: str = ""
    setup: str = ""
    bot_level: int = 0  # the bot's level (1-5; 0: the matchmaker's default)
    # When the game started (its last seat taken; 0 while open): a player seated then
    # counts as present for a presence lifetime before its first stream (presence.py).
    started_ms: int = 0
    # Presence (presence.py): sides known to have left (side -> since, ms), and sides to
    # act warned that they lose as abandoned unless they come back (side -> when, ms).
    away: dict[str, int] = field(default_factory=dict)
    warned: dict[str, int] = field(default_factory=dict)
    # The clock readings of a timed game that allows takebacks, after each commit of
    # actions (number of actions then -> side -> ms left): a takeback returns to them.
    readings: dict[str, dict[str, int]] = field(default_factory=dict)
    # An ending the matchmaker decided without an action of the engine's (serialized
    # wargame.v1.Outcome): both clocks out at once.
    ending: bytes = b""
    rematch: str = ""  # the game offered as this one's rematch
    rematch_of: str = ""  # the game this one is the rematch of
    _state: game_pb2.GameState | None = field(default=None, compare=False, repr=False)
    _moves: list[ActionEntry] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_hash(cls, game_id: str, raw: Mapping[bytes, bytes]) -> GameRecord:
        """A record from the game hash (HGETALL, or HMGET of some fields)."""
        values: dict[str, Any] = {}
        for entry in FIELDS:
            stored = raw.get(entry.name.encode())
            values[entry.attribute] = (
                copy(entry.default) if stored is None else entry.codec.decode(stored)
            )
        return cls(id=game_id, **values)

    def to_hash(self) -> dict[str, str | bytes]:
        """The whole record as hash fields (a new game's first commit): the fields at their
        default are left out (they read back as it), so a game stores only what it says."""
        return {
            entry.name: entry.codec.encode(value)
            for entry in FIELDS
            if (value := getattr(self, entry.attribute)) != entry.default
            or entry.name in ALWAYS_WRITTEN
        }

    def changed_fields(self, before: GameRecord) -> dict[str, str | bytes]:
        """The hash fields this record changes relative to `before` (the commit of a change)."""
        return {
            entry.name: entry.codec.encode(getattr(self, entry.attribute))
            for entry in FIELDS
            if getattr(self, entry.attribute) != getattr(before, entry.attribute)
        }

    @property
    def moves(self) -> list[ActionEntry]:
        """Every committed action's notations (parsed once)."""
        if self._moves is None:
            self._moves = parse_moves(self.moves_raw)
        return self._moves

    @property
    def state(self) -> game_pb2.GameState:
        """The current state in its compact form (`states.compact`: the position and the
        summary; parsed once)."""
        if self._state is None:
            self._state = game_pb2.GameState.FromString(self.state_bytes)
        return self._state

    def outcome(self) -> game_pb2.Outcome | None:
        """How the game ended (by the engine's rules and actions, or the matchmaker's own
        ending); None while it goes on or when it was closed unplayed."""
        if self.state_bytes and self.state.HasField("outcome"):
            return self.state.outcome
        if self.ending:
            return game_pb2.Outcome.FromString(self.ending)
        return None

    @property
    def initial(self) -> game_pb2.GameState:
        """The initial state (only loaded with the full record)."""
        return game_pb2.GameState.FromString(self.initial_bytes)

    def seat_of(self, player_id: str) -> Seat | None:
        """The seat a player holds here, if any."""
        if not player_id:
            return None
        return next((seat for seat in self.seats if seat.player == player_id), None)

    def seat_for(self, side: str) -> Seat | None:
        """The seat of a side."""
        return next((seat for seat in self.seats if seat.side == side), None)

    def keeps_others_waiting(self) -> bool:
        """Whether a person who leaves on its turn keeps another person waiting (two or
        more seats are people's). Against the bot alone nobody waits: the game waits for
        its player, and only its clock, if it has one, runs meanwhile."""
        return sum(seat.kind == SeatKind.HUMAN for seat in self.seats) > 1

    def allows_takebacks(self) -> bool:
        """Whether the game's person may take actions back: an unrated game against the
        bot alone (`takeback.py`)."""
        return not self.rated and not self.keeps_others_waiting()

    def opponent(self, side: str) -> Seat | None:
        """The other seat of a two-sided game."""
        return next((seat for seat in self.seats if seat.side != side), None)

    @property
    def rating_pool(self) -> str:
        """Where the game's ratings are kept (`ratings.pool`)."""
        return pool(self.ruleset, len(self.seats))

    def to_act(self) -> tuple[str, ...]:
        """The sides that may act now (none unless running)."""
        return tuple(self.state.to_act) if self.status == GameStatus.RUNNING else ()

    def seated_to_act(self, kind: SeatKind) -> Seat | None:
        """The first seat of `kind` whose side may act now."""
        to_act = self.to_act()
        return next(
            (seat for seat in self.seats if seat.kind == kind and seat.side in to_act), None
        )


def mapped_attributes() -> set[str]:
    """The record's attributes that a hash field must hold (all but the key and caches)."""
    return {item.name for item in fields(GameRecord) if item.compare} - {"id"}
