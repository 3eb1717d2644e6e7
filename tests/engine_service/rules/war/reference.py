"""A deliberately simple Game of War move generator, written only to check the engine.

Nothing here is shared with `engine_service.rules.war`: squares are names ("e5"), the
position is a dict of squares, directions are (file, rank) steps, jump chains are plain
recursion, and every option is read by name from a dict of option texts. It is slow and
obvious on purpose; the tests compare its legal actions, outcomes and positions with the
engine's.

Actions are written in a neutral form: a tuple of parts, each part one of
`("huff", sq)`, `("place", sq)`, `("pass",)`, `("move", origin, (landing, ...))`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FILES = "abcdefghij"
SIDES = ("S", "N")

Part = tuple[object, ...]
RefAction = tuple[Part, ...]


def sq(file: int, rank: int) -> str:
    """Square name of 0-based file and rank."""
    return f"{FILES[file]}{rank + 1}"


def coords(square: str) -> tuple[int, int]:
    """0-based (file, rank) of a square name."""
    return FILES.index(square[0]), int(square[1:]) - 1


def on_board(file: int, rank: int) -> bool:
    """Whether the coordinates are on the 10 x 10 board."""
    return 0 <= file < 10 and 0 <= rank < 10


def other(side: str) -> str:
    """The opponent."""
    return "N" if side == "S" else "S"


def forward(side: str) -> int:
    """+1 rank for South, -1 for North."""
    return 1 if side == "S" else -1


def final_rank(side: str) -> int:
    """0-based rank where a side's Troops end: 9 for South, 0 for North."""
    return 9 if side == "S" else 0


def relative_rank(side: str, square: str) -> int:
    """1 on the side's own back rank .. 10 on its final rank."""
    rank = coords(square)[1]
    return rank + 1 if side == "S" else 10 - rank


@dataclass
class Man:
    """A man or a placed Flying Machine."""

    side: str
    kind: str  # K G M C H T F
    moved: bool = False


@dataclass
class RefPosition:
    """A position as a dict of squares plus the bookkeeping the rules need."""

    men: dict[str, Man]
    to_move: str
    reserve: dict[str, int]
    citadel: dict[str, str]
    ep: str | None = None
    huffable: frozenset[str] = frozenset()
    quiet: int = 0
    move_number: int = 1
    history: list[object] = field(default_factory=list)

    def copy(self) -> RefPosition:
        """An independent copy (men are copied too)."""
        return RefPosition(
            {s: Man(m.side, m.kind, m.moved) for s, m in self.men.items()},
            self.to_move,
            dict(self.reserve),
            dict(self.citadel),
            self.ep,
            self.huffable,
            self.quiet,
            self.move_number,
            list(self.history),
        )

    def signature(self) -> object:
        """What makes two positions "the same" for the repetition rule (A25)."""
        return (
            tuple(sorted((s, m.side, m.kind, m.moved) for s, m in self.men.items())),
            self.to_move,
            self.reserve["S"],
            self.reserve["N"],
            tuple(sorted(self.huffable)),
        )


class Reference:
    """The rules of the specification, read naively, under a dict of option texts."""

    def __init__(self, options: dict[str, str]) -> None:
        self.o = options

    def flag(self, name: str) -> bool:
        """A boolean option."""
        return self.o[name] == "true"

    # --- section 5: what may be captured ---------------------------------------------

    def capturable(self, pos: RefPosition, square: str, attacker: str) -> bool:
        """Section 5 and 7.8."""
        man = pos.men.get(square)
        if man is None or man.side == attacker:
            return False
        if man.kind == "F":
            return self.flag("flying_machine_capturable")
        if man.kind == "T" and coords(square)[1] == final_rank(man.side):
            return square == pos.citadel[attacker]
        return True

    def may_stop(self, pos: RefPosition, square: str, side: str, kind: str) -> bool:
        """A22: only the King may stand on his own Citadel when the option forbids it."""
        if self.flag("own_men_on_own_citadel") or kind == "K":
            return True
        return square != pos.citadel[side]

    # --- section 6 ---------------------------------------------------------------------

    def man_moves(self, pos: RefPosition, square: str, man: Man) -> list[RefAction]:
        """King, General, Mortar, Cannon and Horse."""
        f, r = coords(square)
        side = man.side
        out = []

        def target_ok(to: str) -> bool:
            """An empty square or a capturable enemy, where the man may stop."""
            if not self.may_stop(pos, to, side, man.kind):
                return False
            return to not in pos.men or self.capturable(pos, to, side)

        if man.kind == "K":
            for df in (-1, 0, 1):
                for dr in (-1, 0, 1):
                    if (df or dr) and on_board(f + df, r + dr) and target_ok(sq(f + df, r + dr)):
                        out.append(sq(f + df, r + dr))
        elif man.kind == "H":
            for df, dr in ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)):
                if not on_board(f + df, r + dr):
                    continue
                to = sq(f + df, r + dr)
                if not self.flag("horse_leaps_flying_machine"):
                    # the two squares next to both the start and the landing square
                    between = [
                        sq(a, b)
                        for a in range(f - 1, f + 2)
                        for b in range(r - 1, r + 2)
                        if on_board(a, b)
                        and (a, b) != (f, r)
                        and max(abs(a - f - df), abs(b - r - dr)) == 1
                    ]
                    assert len(between) == 2
                    if any(s in pos.men and pos.men[s].kind == "F" for s in between):
                        continue
                if target_ok(to):
                    out.append(to)
        else:
            straight = [(0, 1), (0, -1), (1, 0), (-1, 0)]
            diagonal = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
            ways = {"G": straight + diagonal, "M": straight, "C": diagonal}[man.kind]
            for df, dr in ways:
                a, b = f + df, r + dr
                while on_board(a, b):
                    to = sq(a, b)
                    if to not in pos.men:
                        if self.may_stop(pos, to, side, man.kind):
                            out.append(to)
                    else:
                        if target_ok(to):
                            out.append(to)
                        there = pos.men[to]
                        passes = there.kind == "F" and not self.flag(
                            "flying_machine_blocks_sliders"
                        )
                        if not passes:
                            break
                    a, b = a + df, b + dr
        return [(("move", square, (to,)),) for to in out]

    # --- section 7 ---------------------------------------------------------------------

    def troop_moves(self, pos: RefPosition, square: str, man: Man) -> list[RefAction]:
        """Step, double step, diagonal capture, en passant (no jumps)."""
        f, r = coords(square)
        side = man.side
        if r == final_rank(side):
            return []
        d = forward(side)
        out = []
        one = sq(f, r + d)
        if one not in pos.men:
            out.append(one)
        if not man.moved and on_board(f, r + 2 * d):
            rear_only = self.o["double_step"] == "rear_troops_only"
            if not rear_only or relative_rank(side, square) == 2:
                two = sq(f, r + 2 * d)
                first_free = one not in pos.men or (
                    pos.men[one].kind == "F" and not self.flag("flying_machine_blocks_sliders")
                )
                if first_free and two not in pos.men:
                    out.append(two)
        for df in (-1, 1):
            if on_board(f + df, r + d):
                to = sq(f + df, r + d)
                if to in pos.men:
                    if self.capturable(pos, to, side):
                        out.append(to)
                elif to == pos.ep:
                    out.append(to)
        return [(("move", square, (to,)),) for to in out]

    def jumpable(self, pos: RefPosition, square: str, side: str) -> bool:
        """7.4 / A16."""
        if not self.capturable(pos, square, side):
            return False
        return pos.men[square].kind == "T" or self.flag("jump_over_non_troops")

    def jump_directions(self, side: str) -> list[tuple[int, int]]:
        """7.4, 7.6 / A15."""
        d = forward(side)
        ways = [(-1, d), (1, d)]
        if self.flag("backward_jumps"):
            ways += [(-1, -d), (1, -d)]
        return ways

    def jumps_from(self, pos: RefPosition, square: str, side: str) -> list[tuple[str, str]]:
        """(jumped, landing) pairs available from `square` in `pos`."""
        f, r = coords(square)
        if r == final_rank(side):
            return []
        out = []
        for df, dr in self.jump_directions(side):
            if on_board(f + 2 * df, r + 2 * dr):
                over, land = sq(f + df, r + dr), sq(f + 2 * df, r + 2 * dr)
                if (
                    self.jumpable(pos, over, side)
                    and land not in pos.men
                    and self.may_stop(pos, land, side, "T")
                ):
                    out.append((over, land))
        return out

    def chains(self, pos: RefPosition, square: str) -> list[RefAction]:
        """Every complete jump chain of the Troop on `square` (7.5, 7.9)."""
        man = pos.men[square]
        result: list[RefAction] = []

        def go(p: RefPosition, at: str, path: list[str]) -> None:
            """Extend the chain `path` from `at` in every possible way."""
            options = self.jumps_from(p, at, man.side)
            if not options:
                if path:
                    result.append((("move", square, tuple(path)),))
                return
            for over, land in options:
                q = p.copy()
                del q.men[over]
                q.men[land] = q.men.pop(at)
                if coords(land)[1] == final_rank(man.side):
                    result.append((("move", square, (*path, land)),))
                else:
                    go(q, land, [*path, land])

        go(pos, square, [])
        return result

    # --- section 11 --------------------------------------------------------------------

    def pieces(self, pos: RefPosition) -> tuple[list[RefAction], list[RefAction]]:
        """All moves of the side to move's men, and all its jump chains."""
        moves: list[RefAction] = []
        chains: list[RefAction] = []
        for square, man in sorted(pos.men.items()):
            if man.side != pos.to_move or man.kind == "F":
                continue
            if man.kind == "T":
                moves += self.troop_moves(pos, square, man)
                chains += self.chains(pos, square)
            else:
                moves += self.man_moves(pos, square, man)
        return moves, chains

    def victim(self, pos: RefPosition, move: Part) -> str | None:
        """The first man a move captures."""
        _, origin, path = move
        assert isinstance(origin, str) and isinstance(path, tuple)
        man = pos.men[origin]
        to = path[0]
        (f, r), (tf, tr) = coords(origin), coords(to)
        if man.kind == "T" and abs(tf - f) == 2:
            return sq((f + tf) // 2, (r + tr) // 2)
        if to in pos.men:
            return str(to)
        if man.kind == "T" and tf != f:
            return sq(tf, tr - forward(man.side))  # en passant
        return None

    def exposed(self, pos: RefPosition, side: str) -> dict[str, set[str]]:
        """For each Troop of `side` with a first jump: the men it could jump (J)."""
        found: dict[str, set[str]] = {}
        for square, man in pos.men.items():
            if man.side == side and man.kind == "T":
                victims = {over for over, _ in self.jumps_from(pos, square, side)}
                if victims:
                    found[square] = victims
        return found

    def allowed(self, pos: RefPosition, j: set[str]) -> set[str]:
        """J plus, under A12, the enemy man on one's own Citadel."""
        allowed = set(j)
        own = pos.citadel[pos.to_move]
        if (
            self.flag("citadel_defence_overrides_compulsion")
            and own in pos.men
            and pos.men[own].side != pos.to_move
        ):
            allowed.add(own)
        return allowed

    def plain_actions(self, pos: RefPosition) -> list[RefAction]:
        """Legal actions without huffs."""
        moves, chains = self.pieces(pos)
        j = {over for victims in self.exposed(pos, pos.to_move).values() for over in victims}
        if chains and self.flag("longest_jump_required"):
            longest = max(len(c[0][2]) for c in chains)  # type: ignore[arg-type]
            chains = [c for c in chains if len(c[0][2]) == longest]  # type: ignore[arg-type]
        huff = self.o["compulsion"] == "huff"
        if j and not huff:
            allowed = self.allowed(pos, j)
            return [m for m in moves if self.victim(pos, m[0]) in allowed] + chains
        actions = moves + chains
        if self.flag("passing_allowed"):
            actions.append((("pass",),))
        may_place = pos.reserve[pos.to_move] > 0 and (
            self.flag("placement_first_turn") or pos.move_number > 1
        )
        if may_place:
            for file in range(10):
                for rank in range(10):
                    square = sq(file, rank)
                    if square in pos.men or square in pos.citadel.values():
                        continue
                    if self.flag("placement_uses_turn"):
                        actions.append((("place", square),))
                        continue
                    after = pos.copy()
                    after.men[square] = Man(pos.to_move, "F")
                    m2, c2 = self.pieces(after)
                    if c2 and self.flag("longest_jump_required"):
                        longest = max(len(c[0][2]) for c in c2)  # type: ignore[arg-type]
                        c2 = [c for c in c2 if len(c[0][2]) == longest]  # type: ignore[arg-type]
                    follow = m2 + c2
                    actions += [(("place", square), *m) for m in follow]
                    if not follow or self.flag("passing_allowed"):
                        actions.append((("place", square),))
        return actions

    def actions_ignoring_end(self, pos: RefPosition) -> list[RefAction]:
        """Every action the movement rules allow, with the huffs."""
        actions = self.plain_actions(pos)
        for h in sorted(pos.huffable):
            after = pos.copy()
            del after.men[h]
            if after.ep is not None:
                f, r = coords(after.ep)
                if sq(f, r - forward(pos.to_move)) == h:
                    after.ep = None
            actions += [(("huff", h), *a) for a in self.plain_actions(after)]
        return actions

    def outcome(
        self, pos: RefPosition, actions: list[RefAction] | None = None
    ) -> tuple[str | None, str] | None:
        """(winner side or None, reason) or None while the game goes on.

        `actions` may pass `actions_ignoring_end(pos)` when the caller has it already.
        """
        me, foe = pos.to_move, other(pos.to_move)
        occupier = pos.men.get(pos.citadel[foe])
        if occupier is not None and occupier.side == me:
            return me, "CITADEL_HELD"
        if actions is None:
            actions = self.actions_ignoring_end(pos)
        if not actions:
            mine = pos.men.get(pos.citadel[me])
            if mine is not None and mine.side == foe:
                return foe, "CITADEL_HELD"
            if self.o["no_legal_move"] == "draw":
                return None, "NO_LEGAL_MOVE"
            return foe, "NO_LEGAL_MOVE"
        repetition = 0 if self.o["repetition_draw"] == "off" else int(self.o["repetition_draw"])
        if repetition and pos.history.count(pos.signature()) >= repetition:
            return None, "REPETITION"
        limit = 0 if self.o["no_progress_limit"] == "off" else int(self.o["no_progress_limit"])
        if limit and pos.quiet >= 2 * limit:
            return None, "NO_PROGRESS"
        return None

    def legal(self, pos: RefPosition) -> list[RefAction]:
        """Legal actions; none once the game is over."""
        actions = self.actions_ignoring_end(pos)
        return [] if self.outcome(pos, actions) is not None else actions

    # --- making an action ----------------------------------------------------------------

    def apply(self, pos: RefPosition, action: RefAction) -> RefPosition:
        """The position after a legal action."""
        new = pos.copy()
        me = pos.to_move
        new.ep = None
        progress = False
        parts = list(action)
        if parts[0][0] == "huff":
            square = str(parts.pop(0)[1])
            del new.men[square]
            progress = True
        offenders = self.exposed(new, me) if self.o["compulsion"] == "huff" else {}
        start = new.copy()
        captured = None
        mover = landing = None
        for part in parts:
            if part[0] == "place":
                new.men[str(part[1])] = Man(me, "F")
                new.reserve[me] -= 1
                progress = True
            elif part[0] == "move":
                _, origin, path = part
                assert isinstance(origin, str) and isinstance(path, tuple)
                captured = self.victim(new, part)
                man = new.men.pop(origin)
                mover, landing = origin, path[-1]
                if man.kind == "T":
                    progress = True
                    f, r = coords(origin)
                    at = origin
                    for land in path:
                        (a, b), (c, e) = coords(at), coords(land)
                        if abs(c - a) == 2:
                            del new.men[sq((a + c) // 2, (b + e) // 2)]
                        elif land in new.men:
                            del new.men[land]
                        elif c != a:
                            del new.men[sq(c, e - forward(me))]
                        elif abs(e - b) == 2 and self.o["en_passant"] == "displacement_only":
                            new.ep = sq(f, r + forward(me))
                        at = land
                    man.moved = True
                elif landing in new.men:
                    del new.men[str(landing)]
                    progress = True
                new.men[str(landing)] = man
        huffable: set[str] = set()
        if offenders:
            j = {over for victims in offenders.values() for over in victims}
            start.to_move = me
            if captured not in self.allowed(start, j):
                huffable = {str(landing) if o == mover else o for o in offenders}
        new.huffable = frozenset(huffable)
        new.quiet = 0 if progress else pos.quiet + 1
        first = "S" if self.o["first_player"] == "south" else "N"
        if me != first:
            new.move_number += 1
        new.to_move = other(me)
        new.history = [*pos.history, new.signature()]
        return new


def perft(ref: Reference, pos: RefPosition, depth: int) -> int:
    """Action sequences of exactly `depth` actions (the last level is counted, not made)."""
    actions = ref.legal(pos)
    if depth <= 1:
        return len(actions) if depth == 1 else 1
    return sum(perft(ref, ref.apply(pos, action), depth - 1) for action in actions)
