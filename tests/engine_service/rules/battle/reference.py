"""A deliberately simple reference for the Game of Battle, written only for the tests.

Nothing here is fast or clever, and nothing is shared with the engine but the board file
and the option names: the board is rebuilt from `game_of_battle_board.json` by
coordinates, lines are walked square by square, exposure is recomputed from scratch for
every candidate position, and section 10's procedure is followed step by step. The tests
compare the engine's legal moves and outcomes with this on many positions.

A position is a dict {square number: (side, kind)} with sides "A"/"D" and kinds
"L", "I", "C", "A" (Artillery), "W" (Wagon), "T" (Citadel).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

BOARD_FILE = Path(__file__).parents[4] / "engine_service" / "rules" / "battle" / "board.json"
DATA: dict[str, Any] = json.loads(BOARD_FILE.read_text("utf-8"))

VECTORS = {
    "N": (0, 2),
    "S": (0, -2),
    "E": (2, 0),
    "W": (-2, 0),
    "NE": (1, 1),
    "NW": (-1, 1),
    "SE": (1, -1),
    "SW": (-1, -1),
}
OBLIQUE = ["NE", "NW", "SE", "SW"]
CORNERS = ["N", "S", "E", "W"]
BACK = {"N": "S", "S": "N", "E": "W", "W": "E", "NE": "SW", "SW": "NE", "NW": "SE", "SE": "NW"}

SQUARE_AT: dict[tuple[int, int], int] = {}
WHERE: dict[int, tuple[int, int]] = {}
BANK: dict[int, str] = {}
for entry in DATA["squares"]:
    SQUARE_AT[(entry["col"], entry["row"])] = entry["n"]
    WHERE[entry["n"]] = (entry["col"], entry["row"])
    BANK[entry["n"]] = entry["side"]
ENTRANCES: dict[int, list[str]] = {c["square"]: c["entrances"] for c in DATA["crossings"]}


@cache
def neighbour(square: int, direction: str) -> int | None:
    """The square one step away, if the step is allowed (river, crossings, edge)."""
    col, row = WHERE[square]
    dc, dr = VECTORS[direction]
    other = SQUARE_AT.get((col + dc, row + dr))
    if other is None:
        return None
    if {BANK[square], BANK[other]} == {"south", "north"}:
        return None
    if square in ENTRANCES and direction not in ENTRANCES[square]:
        return None
    if other in ENTRANCES and BACK[direction] not in ENTRANCES[other]:
        return None
    return other


def geometric_neighbour(square: int, direction: str) -> int | None:
    """The square one step away by coordinates only."""
    col, row = WHERE[square]
    dc, dr = VECTORS[direction]
    return SQUARE_AT.get((col + dc, row + dr))


@cache
def walk(square: int, direction: str, count: int) -> tuple[int, ...]:
    """Up to `count` squares in a line, stopping at the edge or river."""
    line: list[int] = []
    here = square
    for _ in range(count):
        nxt = neighbour(here, direction)
        if nxt is None:
            break
        line.append(nxt)
        here = nxt
    return tuple(line)


def enemy(side: str) -> str:
    """The other side."""
    return "D" if side == "A" else "A"


def distances(side: str, kind: str) -> dict[str, int]:
    """How far a piece goes in each direction (section 5)."""
    if kind == "L":
        forward = ["N", "NE", "NW"] if side == "D" else ["S", "SE", "SW"]
        return {d: (3 if d in forward else 2) for d in VECTORS}
    if kind == "I":
        return {d: 2 for d in VECTORS}
    if kind == "C":
        return {d: 3 for d in VECTORS}
    if kind == "A":
        return {d: 3 for d in OBLIQUE}
    if kind == "W":
        return {d: 2 for d in OBLIQUE}
    return {}


def can_take(kind: str, prey: str) -> bool:
    """Who may take what (section 5)."""
    if kind in ("L", "I", "C"):
        return True
    if kind == "A":
        return prey == "A"
    return False


DEFAULTS = {
    "first_player": "attacker",
    "forced_reply": "relieve_one",
    "duty_lapses_when_impossible": "true",
    "uncovering_rule": "all_moves",
    "capture_onto_commanded_square": "forbidden",
    "wagon_capture_cover": "any_attacking_battery",
    "wagon_occupancy": "as_figures",
    "wagon_forced_reply": "any_relieving_move",
    "citadel_duty": "take_block_or_threaten",
    "protection_adjacency": "oblique",
    "river_cuts_protection": "true",
    "artillery_blockers": "any_piece",
    "no_legal_move": "draw",
    "repetition_draw": "3",
    "no_capture_limit": "50",
    "multiple_duties": "discharge_any_one",
    "citadel_capture_ignores_uncovering": "true",
}


@dataclass
class Opts:
    """The options, as the specification names them."""

    values: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str:
        """The value of an option (its default unless given)."""
        return self.values.get(name, DEFAULTS[name])


Position = dict[int, tuple[str, str]]


def geometric_moves(pos: Position, side: str) -> list[tuple[int, int]]:
    """Every (from, to) by move patterns, path clear, capture-type rules."""
    moves = []
    for square, (owner, kind) in sorted(pos.items()):
        if owner != side:
            continue
        for direction, count in distances(owner, kind).items():
            for target in walk(square, direction, count):
                if target not in pos:
                    moves.append((square, target))
                    continue
                other_side, other_kind = pos[target]
                if other_side != side and can_take(kind, other_kind):
                    moves.append((square, target))
                break
    return moves


def blocks(piece: tuple[str, str], opts: Opts) -> bool:
    """Does this piece stop an artillery line (ruling 13)?"""
    if opts.get("artillery_blockers") == "figures_only":
        return piece[1] not in ("T", "W")
    return True


def range_of(pos: Position, gun: int, opts: Opts) -> set[int]:
    """Squares commanded by the battery on `gun`."""
    seen = set()
    for direction in OBLIQUE:
        for square in walk(gun, direction, 3):
            seen.add(square)
            if square in pos and blocks(pos[square], opts):
                break
    return seen


def guns(pos: Position, side: str) -> list[int]:
    """The squares of a side's Artillery."""
    return [s for s, (owner, kind) in pos.items() if owner == side and kind == "A"]


def in_enemy_range(pos: Position, square: int, side: str, opts: Opts) -> bool:
    """Is `square` commanded by an Artillery of `side`'s enemy?"""
    return any(square in range_of(pos, gun, opts) for gun in guns(pos, enemy(side)))


def touching(square: int, gun: int, opts: Opts) -> bool:
    """Is `square` the first square next to the battery on `gun`?"""
    directions = list(OBLIQUE)
    if opts.get("protection_adjacency") == "oblique_and_corner":
        directions += CORNERS
    step = neighbour if opts.get("river_cuts_protection") == "true" else geometric_neighbour
    return any(step(gun, d) == square for d in directions)


def protected(pos: Position, square: int, side: str, opts: Opts) -> bool:
    """Next to an own battery and next to no enemy battery."""
    mine = any(touching(square, gun, opts) for gun in guns(pos, side))
    theirs = any(touching(square, gun, opts) for gun in guns(pos, enemy(side)))
    return mine and not theirs


def is_exposed(pos: Position, square: int, side: str, opts: Opts) -> bool:
    """Is a figure or the Wagon of `side` on `square` exposed?"""
    return in_enemy_range(pos, square, side, opts) and not protected(pos, square, side, opts)


def exposed_set(pos: Position, side: str, opts: Opts) -> set[int]:
    """Every exposed figure and Wagon of `side` (enemy ranges computed once)."""
    commanded: set[int] = set()
    for gun in guns(pos, enemy(side)):
        commanded |= range_of(pos, gun, opts)
    return {
        s
        for s, (owner, kind) in pos.items()
        if owner == side
        and kind in ("L", "I", "C", "W")
        and s in commanded
        and not protected(pos, s, side, opts)
    }


def after(pos: Position, move: tuple[int, int]) -> Position:
    """The position after a move (capture by replacement)."""
    new = dict(pos)
    new[move[1]] = new.pop(move[0])
    return new


def wagon_literal_forbidden(pos: Position, square: int, side: str, opts: Opts) -> bool:
    """Ruling 8's literal text for the Wagon standing on `square` in `pos`."""
    own, foe = guns(pos, side), guns(pos, enemy(side))
    if any(touching(square, g, opts) for g in own) and any(touching(square, g, opts) for g in foe):
        return True
    second_or_third = any(square in walk(g, d, 3)[1:] for g in own for d in OBLIQUE)
    return second_or_third and in_enemy_range(pos, square, side, opts)


def statically_legal(
    pos: Position, side: str, move: tuple[int, int], opts: Opts, e0: set[int] | None = None
) -> bool:
    """The per-move tests of section 10 (A.1, Wagon cover, A.2) for a geometric move."""
    origin, target = move
    kind = pos[origin][1]
    if e0 is None:
        e0 = exposed_set(pos, side, opts)
    new = after(pos, move)
    now = exposed_set(new, side, opts)
    capture = target in pos
    if capture and pos[target][1] == "T":
        if opts.get("citadel_capture_ignores_uncovering") == "true":
            return True
        return (now - {target}) <= (e0 - {origin})
    wagon_cover = opts.get("wagon_capture_cover") == "any_attacking_battery"
    if (
        capture
        and pos[target][1] == "W"
        and wagon_cover
        and in_enemy_range(new, target, side, opts)
    ):
        return False
    if kind in ("L", "I", "C", "W"):
        if kind == "W" and opts.get("wagon_occupancy") == "literal_text":
            bad = wagon_literal_forbidden(new, target, side, opts)
        else:
            bad = is_exposed(new, target, side, opts)
        if bad and not (capture and opts.get("capture_onto_commanded_square") == "allowed"):
            return False
    uncovering_counts = opts.get("uncovering_rule") == "all_moves" or kind == "A"
    return not uncovering_counts or (now - {target}) <= (e0 - {origin})


def commands(pos: Position, gun: int, square: int, opts: Opts) -> bool:
    """Does the battery on `gun` command `square`?"""
    return square in range_of(pos, gun, opts)


def citadel_square(pos: Position) -> int | None:
    """The Citadel's square, if it is on the board."""
    return next((s for s, (o, k) in pos.items() if k == "T" and o == "D"), None)


def wagon_square(pos: Position) -> int | None:
    """The Wagon's square, if it is on the board."""
    return next((s for s, (o, k) in pos.items() if k == "W" and o == "A"), None)


def citadel_answered(
    pos: Position, move: tuple[int, int], opts: Opts, commanding: list[int]
) -> bool:
    """Ruling 10 for a defender move in a position where the Citadel is commanded."""
    if move[1] in commanding:
        return True
    new = after(pos, move)
    citadel = citadel_square(new)
    still = [g for g in guns(new, "A") if citadel is not None and commands(new, g, citadel, opts)]
    if not still:
        return True
    if opts.get("citadel_duty") != "take_block_or_threaten":
        return False
    e0 = exposed_set(new, "D", opts)
    for m in geometric_moves(new, "D"):
        if m[1] in still and statically_legal(new, "D", m, opts, e0):
            return True
    return False


def legal_moves(pos: Position, side: str, opts: Opts) -> list[tuple[int, int]]:
    """Section 10, step by step."""
    e0 = exposed_set(pos, side, opts)
    citadel = citadel_square(pos)
    commanding = []
    if side == "D" and citadel is not None:
        commanding = [g for g in guns(pos, "A") if commands(pos, g, citadel, opts)]
    duty_cit = bool(commanding)
    if opts.get("forced_reply") == "lose_figure":
        duty = {s for s in e0 if pos[s][1] == "W"}
    else:
        duty = set(e0)

    legal = [m for m in geometric_moves(pos, side) if statically_legal(pos, side, m, opts, e0)]
    wins = [m for m in legal if m[1] in pos and pos[m[1]][1] == "T"]

    def followed(squares: set[int], m: tuple[int, int]) -> set[int]:
        return {m[1] if s == m[0] else s for s in squares}

    exposed_after = {m: exposed_set(after(pos, m), side, opts) for m in legal}

    def adds_nothing(m: tuple[int, int]) -> bool:
        return exposed_after[m] <= followed(e0, m)

    def relieves(m: tuple[int, int]) -> bool:
        if not duty or not adds_nothing(m):
            return False
        return bool(followed(duty, m) - exposed_after[m])

    def answers(m: tuple[int, int]) -> bool:
        return adds_nothing(m) and citadel_answered(pos, m, opts, commanding)

    tiers: list[list[tuple[int, int]]] = []
    wagon = wagon_square(pos)
    if side == "A" and wagon in duty and opts.get("wagon_forced_reply") == "capture_battery_first":
        checking = [g for g in guns(pos, "D") if commands(pos, g, wagon, opts)]
        tiers.append(
            [
                m
                for m in legal
                if m[1] in checking and adds_nothing(m) and wagon not in exposed_after[m]
            ]
        )
        tiers.append(
            [m for m in legal if m[0] == wagon and adds_nothing(m) and m[1] not in exposed_after[m]]
        )
    if duty_cit and opts.get("multiple_duties") == "citadel_first":
        tiers.append([m for m in legal if answers(m)])
        tiers.append([m for m in legal if relieves(m)])
    elif duty_cit:
        tiers.append([m for m in legal if answers(m) or relieves(m)])
    elif duty:
        tiers.append([m for m in legal if relieves(m)])
    if not tiers:
        return sorted(legal)
    for tier in tiers:
        if tier or wins:
            return sorted(set(tier) | set(wins))
    return sorted(legal) if opts.get("duty_lapses_when_impossible") == "true" else []


def has_figures(pos: Position, side: str) -> bool:
    """Has `side` a Light Infantry, Infantry of the Line or Cavalry?"""
    return any(o == side and k in ("L", "I", "C") for o, k in pos.values())


def outcome(
    pos: Position, side: str, opts: Opts, history: list[int], quiet: int
) -> tuple[str | None, str] | None:
    """(winner, reason) or None; `history` are position keys (current last)."""
    if citadel_square(pos) is None:
        return ("attacker", "CITADEL_CAPTURED")
    if wagon_square(pos) is None:
        return ("defender", "WAGON_CAPTURED")
    for loser in (side, enemy(side)):
        if not has_figures(pos, loser):
            return ("defender" if loser == "A" else "attacker", "ONLY_ARTILLERY_LEFT")
    repetition = int(opts.get("repetition_draw").replace("off", "0"))
    if repetition and history.count(history[-1]) >= repetition:
        return (None, "REPETITION")
    limit = int(opts.get("no_capture_limit").replace("off", "0"))
    if limit and quiet >= 2 * limit:
        return (None, "NO_PROGRESS")
    if not legal_moves(pos, side, opts):
        if opts.get("no_legal_move") == "loss":
            return ("defender" if side == "A" else "attacker", "NO_LEGAL_MOVE")
        return (None, "NO_LEGAL_MOVE")
    return None


def lost_after(pos: Position, side: str, move: tuple[int, int], opts: Opts) -> set[int]:
    """forced_reply=lose_figure: the mover's figures exposed before and after the move."""
    if opts.get("forced_reply") != "lose_figure":
        return set()
    e0 = {s for s in exposed_set(pos, side, opts) if pos[s][1] in ("L", "I", "C")}
    moved = {move[1] if s == move[0] else s for s in e0}
    return moved & exposed_set(after(pos, move), side, opts)


def position_key(pos: Position, side: str) -> tuple[frozenset[tuple[int, tuple[str, str]]], str]:
    """A key for the repetition rule: the pieces and the side to move."""
    return (frozenset(pos.items()), side)


def perft(
    pos: Position,
    side: str,
    opts: Opts,
    depth: int,
    *,
    history: list[Any] | None = None,
    quiet: int = 0,
) -> int:
    """The number of move sequences of `depth` moves (none once the game is over)."""
    history = history if history is not None else [position_key(pos, side)]
    if depth == 0:
        return 1
    if citadel_square(pos) is None or wagon_square(pos) is None:
        return 0
    if not has_figures(pos, "A") or not has_figures(pos, "D"):
        return 0
    repetition = int(opts.get("repetition_draw").replace("off", "0"))
    if repetition and history.count(history[-1]) >= repetition:
        return 0
    limit = int(opts.get("no_capture_limit").replace("off", "0"))
    if limit and quiet >= 2 * limit:
        return 0
    moves = legal_moves(pos, side, opts)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        new = after(pos, move)
        lost = lost_after(pos, side, move, opts)
        for square in lost:
            del new[square]
        taken = move[1] in pos or bool(lost)
        key = position_key(new, enemy(side))
        total += perft(
            new,
            enemy(side),
            opts,
            depth - 1,
            history=[key] if taken else [*history, key],
            quiet=0 if taken else quiet + 1,
        )
    return total
