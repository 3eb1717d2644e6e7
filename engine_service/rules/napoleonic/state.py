"""The Napoleonic Chess state: immutable values, copied on change.

A state holds the units on the board (sorted by id), the terrain, the phase of the turn
(spec 6) and the turn's scratch (moves made, attacks, supports, vacated squares), the
deployment in progress (10.1, 10.2) and, once the game is over, its outcome. Players are a
list and the turn order is general (10.6), so more players change no field.

Lookups by id and by square are O(1) through caches built on first use (never compared).
`position_key` is the key of a position for the repetition draw.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from engine_service.rules.base import Outcome
from engine_service.rules.napoleonic.board import Geometry
from engine_service.rules.napoleonic.options import Rules
from engine_service.rules.napoleonic.pieces import UnitStats
from engine_service.rules.napoleonic.scenarios import EDGES, SCENARIOS
from engine_service.rules.options import Options


class Phase(StrEnum):
    """The phases of spec 6 (resolution and end of turn are instantaneous, not phases)."""

    DEPLOY_COMMIT = "deploy_commit"  # 10.1 mode A: each player commits to a secret array
    DEPLOY_REVEAL = "deploy_reveal"  # 10.1 mode A: each player reveals it
    DEPLOY_SEALED = "deploy_sealed"  # 10.1 mode B: each player submits an array to seal
    PLACEMENT = "placement"  # 10.2 Marching Orders
    MOVEMENT = "movement"
    ATTACK_DECLARATION = "attack_declaration"
    DEFENCE = "defence"
    ADVANCE = "advance"
    GAME_OVER = "game_over"


ACTIVE_PHASES = (Phase.MOVEMENT, Phase.ATTACK_DECLARATION, Phase.ADVANCE)
DEPLOY_PHASES = (Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL, Phase.DEPLOY_SEALED, Phase.PLACEMENT)

Array = tuple[tuple[int, str], ...]  # a deployment array: (cell, unit type), by cell


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit on the board: stable id, owning player, type id and cell index."""

    id: str
    side: str
    kind: str
    cell: int


@dataclass(frozen=True, slots=True)
class Player:
    """A player (10.6): its alliance, the army it commands (a share of, with divided
    command; empty: its own), and whether it is out (its Guards fell) or surrendered."""

    id: str
    alliance: str
    army: str = ""
    out: bool = False
    surrendered: bool = False

    @property
    def army_id(self) -> str:
        """The army the player commands (its own id unless it shares one)."""
        return self.army or self.id


@dataclass(frozen=True, slots=True)
class Construction:
    """A redoubt site under construction (10.4)."""

    cell: int
    builder: str
    turns_done: int
    unit: str  # the unit that began it (redoubt_occupation = same_unit)


@dataclass(frozen=True)
class Terrain:
    """Hills, completed redoubts (cell, owner), redoubt sites and border obstacles."""

    hills: frozenset[int] = frozenset()
    redoubts: tuple[tuple[int, str], ...] = ()  # sorted by cell
    constructions: tuple[Construction, ...] = ()  # sorted by cell
    obstacles: frozenset[tuple[int, int]] = frozenset()  # edges (a, b) with a < b
    # Derived in __post_init__, not compared: owner by cell, hills and redoubts, sites.
    redoubt_owner: dict[int, str] = field(init=False, compare=False, repr=False)
    elevated: frozenset[int] = field(init=False, compare=False, repr=False)
    sites: dict[int, Construction] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        owners = dict(self.redoubts)
        object.__setattr__(self, "redoubt_owner", owners)
        object.__setattr__(self, "elevated", self.hills | frozenset(owners))
        object.__setattr__(self, "sites", {c.cell: c for c in self.constructions})

    def is_empty(self) -> bool:
        """True when the board has no terrain at all."""
        return not (self.hills or self.redoubts or self.constructions or self.obstacles)


NO_TERRAIN = Terrain()


@dataclass(frozen=True, slots=True)
class Vacancy:
    """A square vacated by the last resolution, who may advance into it, and who did."""

    cell: int
    eligible: tuple[str, ...]  # the attackers of the eliminated unit, in declaration order
    filled_by: str = ""


@dataclass(frozen=True, slots=True)
class Turn:
    """The scratch of the current player-turn, cleared at its end (spec 6)."""

    moved: frozenset[str] = frozenset()
    origins: tuple[tuple[str, int], ...] = ()  # split_two_square_moves: where movers began
    entered_elevation: frozenset[str] = frozenset()  # on a hill/redoubt entered this turn
    attacks: tuple[tuple[str, str], ...] = ()  # (attacker, target) in declaration order
    supports: tuple[tuple[str, str], ...] = ()  # (supporter, supported)
    pending_defenders: tuple[str, ...] = ()  # players still to allocate supports
    # 10.6: the players still to end the current active phase when more than the active
    # player have a part in it: in the attack declaration the active player and its allies;
    # with merged_side_turn the active army's commanders. Empty: the active player alone
    # (always so with two players).
    pending_players: tuple[str, ...] = ()
    eliminated: tuple[str, ...] = ()  # units eliminated this turn
    vacancies: tuple[Vacancy, ...] = ()


EMPTY_TURN = Turn()


@dataclass(frozen=True, slots=True)
class Deployment:
    """A deployment in progress: Attack at Dawn (either mode) or Marching Orders.

    A server shows each player only its own arrays until they are laid out; the copy it
    gives others keeps every entry but lists the hidden ones in `withheld` (their array or
    ciphertext empty), so the phase still says who has acted.
    """

    mode: str  # "commit_reveal" | "sealed" | "marching_orders"
    commitments: tuple[tuple[str, bytes], ...] = ()  # (player, SHA-256), in arrival order
    reveals: tuple[tuple[str, Array], ...] = ()  # (player, revealed array)
    sealed: tuple[tuple[str, bytes], ...] = ()  # (player, AEAD ciphertext)
    next_placer: str = ""  # Marching Orders
    placed_this_turn: int = 0  # Marching Orders
    withheld: frozenset[str] = frozenset()  # players whose reveal or seal is left out


@dataclass(frozen=True)
class NapoleonicState:
    """One Napoleonic Chess position with everything needed to continue it."""

    options: Options
    rules: Rules = field(compare=False, repr=False)
    geo: Geometry = field(compare=False, repr=False)
    scenario: str = "standard"
    width: int = 8
    height: int = 8
    players: tuple[Player, ...] = ()
    turn_order: tuple[str, ...] = ()
    armies: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (player, unit types) per player
    units: tuple[Unit, ...] = ()  # on the board, sorted by id
    terrain: Terrain = NO_TERRAIN
    phase: Phase = Phase.MOVEMENT
    active: str = ""  # the player whose turn it is
    turn_number: int = 0  # player-turns completed
    turn: Turn = EMPTY_TURN
    turns_since_elimination: int = 0
    position_history: tuple[int, ...] = ()  # keys of earlier positions (repetition_draw)
    deployment: Deployment | None = None
    outcome: Outcome | None = None

    # -- O(1) lookups (built on first use, never compared) -------------------------------

    def by_id(self) -> dict[str, Unit]:
        """Units by id."""
        cached: dict[str, Unit] | None = self.__dict__.get("_by_id")
        if cached is None:
            cached = {u.id: u for u in self.units}
            object.__setattr__(self, "_by_id", cached)
        return cached

    def at(self) -> list[Unit | None]:
        """The unit on each cell, or None."""
        cached: list[Unit | None] | None = self.__dict__.get("_at")
        if cached is None:
            cached = [None] * (self.width * self.height)
            for u in self.units:
                if 0 <= u.cell < len(cached):
                    cached[u.cell] = u
            object.__setattr__(self, "_at", cached)
        return cached

    def unit(self, unit_id: str) -> Unit | None:
        """The unit with this id, if it is on the board."""
        return self.by_id().get(unit_id)

    def stats(self, unit: Unit) -> UnitStats:
        """A unit's effective values under this game's options."""
        return self.rules.types[unit.kind]

    def army(self, side: str) -> tuple[str, ...]:
        """A player's order of battle."""
        for player, kinds in self.armies:
            if player == side:
                return kinds
        return ()

    def side_index(self, side: str) -> int:
        """The edge a player deploys from (`scenarios.EDGES`: 0 south, 1 north, 2 west,
        3 east); deployment rows count from there."""
        return self.zone(side)[0]

    def zone(self, side: str) -> tuple[int, tuple[int, int] | None]:
        """A player's deployment edge and its stretch of that edge (10.5, 10.6): the
        scenario's, or else south for the first player and north for the others."""
        found = SCENARIOS[self.scenario].player(side) if self.scenario in SCENARIOS else None
        if found is not None:
            return EDGES.index(found.edge), found.span
        return (0 if self.players and side == self.players[0].id else 1), None

    def player(self, side: str) -> Player | None:
        """The player with this id, if it plays."""
        return next((p for p in self.players if p.id == side), None)

    def multiplayer(self) -> bool:
        """More than two players (10.6): alliances win together, one player may be out."""
        return len(self.players) > 2

    def alliance_of(self, side: str) -> str:
        """A player's alliance (its own id if it is no player)."""
        found = self.player(side)
        return found.alliance if found is not None else side

    def in_game(self, side: str) -> bool:
        """Whether a player plays and is not out."""
        found = self.player(side)
        return found is not None and not found.out

    def allies(self, side: str) -> tuple[str, ...]:
        """The other players of `side`'s alliance still in the game, in turn order."""
        alliance = self.alliance_of(side)
        return tuple(
            p
            for p in self.turn_order
            if p != side and self.in_game(p) and self.alliance_of(p) == alliance
        )

    def commanders(self, side: str) -> tuple[str, ...]:
        """The players in the game commanding (a share of) `side`'s army, in turn order."""
        found = self.player(side)
        if found is None:
            return (side,)
        army = found.army_id
        return tuple(
            p.id
            for p in sorted(self.players, key=lambda q: self.turn_order.index(q.id))
            if p.army_id == army and not p.out
        ) or (side,)

    def merged(self) -> bool:
        """Divided command with one merged side-turn per army (divided_command_turns)."""
        return self.rules.merged_side_turn and any(p.army for p in self.players)

    def acting(self) -> tuple[str, ...]:
        """The players whose units move and advance this turn: the active player, or with
        merged_side_turn every commander of its army."""
        return self.commanders(self.active) if self.merged() else (self.active,)

    def enemies(self, side: str) -> tuple[str, ...]:
        """The players of other alliances (cached: the players never change in a game)."""
        cache: dict[str, tuple[str, ...]] | None = self.__dict__.get("_enemies")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_enemies", cache)
        found = cache.get(side)
        if found is None:
            alliance = next((p.alliance for p in self.players if p.id == side), side)
            found = tuple(p.id for p in self.players if p.alliance != alliance)
            cache[side] = found
        return found

    def next_player(self, side: str) -> str:
        """The player after `side` in the turn order who is still in the game (with
        merged_side_turn: the first commander of the next army)."""
        order = self.turn_order
        start = order.index(side)
        current = self.player(side)
        army = current.army_id if current is not None else side
        for step in range(1, len(order) + 1):
            candidate = order[(start + step) % len(order)]
            player = self.player(candidate)
            if player is None or player.out:
                continue
            if self.merged():
                if player.army_id == army:
                    continue
                return self.commanders(candidate)[0]
            return candidate
        return side

    # -- copies ----------------------------------------------------------------------------
    # A state is copied on every action, so copies bypass `dataclasses.replace` (which
    # re-runs __init__ field by field): the instance dict is copied and the lookup caches
    # are kept when the units do not change.

    def evolve(self, **changes: Any) -> NapoleonicState:
        """A copy with some fields changed (lookup caches dropped if the units change)."""
        fields = dict(self.__dict__)
        if "units" in changes:
            fields.pop("_by_id", None)
            fields.pop("_at", None)
        fields.update(changes)
        new = object.__new__(NapoleonicState)
        object.__setattr__(new, "__dict__", fields)
        return new

    def with_units(self, units: tuple[Unit, ...], **changes: Any) -> NapoleonicState:
        """A copy with another set of units (sorted by id by the caller)."""
        return self.evolve(units=units, **changes)

    def with_moved_unit(self, old: Unit, new: Unit, **changes: Any) -> NapoleonicState:
        """A copy where one unit changed cell; the lookups are updated, not rebuilt."""
        units = self.units
        i = 0
        while units[i] is not old:
            i += 1
        by_id = dict(self.by_id())
        by_id[new.id] = new
        at = list(self.at())
        at[old.cell] = None
        at[new.cell] = new
        fields = dict(self.__dict__)
        fields.update(changes)
        fields["units"] = (*units[:i], new, *units[i + 1 :])
        fields["_by_id"] = by_id
        fields["_at"] = at
        state = object.__new__(NapoleonicState)
        object.__setattr__(state, "__dict__", fields)
        return state


def crowd(players: tuple[str, ...]) -> tuple[str, ...]:
    """`Turn.pending_players` for a group: empty when it is the active player alone."""
    return players if len(players) > 1 else ()


def turn_opening(state: NapoleonicState) -> NapoleonicState:
    """The start of a player-turn in movement: with merged_side_turn every commander of
    the active army moves until each has ended its movement (10.6)."""
    if not state.merged():
        return state
    return state.evolve(turn=replace(state.turn, pending_players=crowd(state.acting())))


def sort_units(units: list[Unit] | tuple[Unit, ...]) -> tuple[Unit, ...]:
    """Units in the state's canonical order (by id)."""
    return tuple(sorted(units, key=lambda u: u.id))


def position_key(state: NapoleonicState) -> int:
    """A stable 64-bit key of units, terrain and the side to move (repetition_draw)."""
    units = sorted((u.cell, u.side, u.kind) for u in state.units)
    terrain = state.terrain
    text = "|".join(
        (
            state.active,
            ",".join(f"{c}:{s}:{k}" for c, s, k in units),
            ",".join(str(c) for c in sorted(terrain.hills)),
            ",".join(f"{c}:{o}" for c, o in terrain.redoubts),
            ",".join(f"{s.cell}:{s.builder}:{s.turns_done}" for s in terrain.constructions),
            ",".join(f"{a}-{b}" for a, b in sorted(terrain.obstacles)),
        )
    )
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
