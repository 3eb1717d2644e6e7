"""Deployment (spec 5, 10.1, 10.2): fixed arrays, Attack at Dawn and Marching Orders.

**Attack at Dawn, commit_reveal (mode A).** A commitment is
`SHA-256(canonical_array_text(array).encode("ascii") || salt)` with a 32-byte salt (the
canonical text is defined in `setup.py`: `square=LETTER` items sorted by rank then file,
single spaces). Thin clients need not compute it: the notation `commit <array> salt <hex>`
makes the engine hash it, and `reveal <array> salt <hex>` reveals. A reveal that does not
match the commitment forfeits (DEPLOYMENT_FORFEIT); an honest but illegal array forfeits
too, or restarts the commit phase with `illegal_reveal = redeploy`. A reveal naming a cell
that is no square name at all (not even ASCII) is no array: it is refused (UNKNOWN_CELL).

**Attack at Dawn, sealed (mode B).** The engine checks each array on submission and keeps
only its ciphertext in the state: AES-256-GCM under a key derived from the engine's
`seal_key`, associated data binding the player and board, the plaintext padded to a
length that depends only on the army and board. The 96-bit nonce is random, so the same
array sealed twice (in two games, or twice in one) gives unrelated ciphertexts and nothing
can be learnt by comparing them; a Seal is therefore the one action whose result differs
from call to call. Arrays sealed before nonces were random (the nonce was derived from the
plaintext) have the same layout and open as before. Only when every array is in does the
engine open them and lay both out. Whoever serves
states to players must withhold the other players' ciphertexts as well as their
submissions until then (the engine is stateless and opens what it is given).

**Marching Orders.** Players place units alternately, `placements_per_turn` at a time;
when one has nothing left the other places the rest; then play begins with
`first_player`.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import secrets
from collections import Counter
from dataclasses import replace

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engine_service.rules.base import Event, EventKind, Outcome, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import (
    Commit,
    NapoleonicAction,
    Placements,
    Reveal,
    Seal,
)
from engine_service.rules.napoleonic.phases import dispose, players_out
from engine_service.rules.napoleonic.setup import (
    ArrayError,
    array_problems,
    canonical_array_text,
    canonical_placements,
    default_ids,
    parse_array,
    unit_id_for,
)
from engine_service.rules.napoleonic.state import (
    EMPTY_TURN,
    Deployment,
    NapoleonicState,
    Phase,
    Unit,
    position_key,
    sort_units,
    turn_opening,
)
from engine_service.rules.napoleonic.words import kind_name, side_title

RANDOM_SEEDS = 1000  # random players' commitments are derived from a seed below this
SALT_BYTES = 32
DIGEST_BYTES = 32
NONCE_BYTES = 12
_SEAL_CONTEXT = b"wargame napoleonic seal v1"
_SQUARE_NAME = re.compile(r"[a-z]{1,2}[0-9]{1,3}")  # as in array and move texts


def check_square_names(placements: Placements) -> None:
    """UNKNOWN_CELL when an array names a cell that is no square name at all (one or two
    letters and a number, in ASCII): no array text can name it, so a reveal of it is
    refused as unreadable rather than forfeited (and never hashed). The array is secret,
    so the message quotes none of it."""
    for square, _kind in placements:
        if not _SQUARE_NAME.fullmatch(square):
            raise RuleError(
                Reason.UNKNOWN_CELL,
                "the revealed array names a cell that is no square (a square is one or two "
                "letters and a number, as 'c3')",
                field="action.napoleonic.reveal.placements",
            )


def commitment(placements: Placements, salt: bytes) -> bytes:
    """SHA-256 over the canonical array text followed by the 32-byte salt (10.1)."""
    return hashlib.sha256(canonical_array_text(placements).encode("ascii") + salt).digest()


def deployment_cells(state: NapoleonicState, side: str) -> tuple[int, ...]:
    """The cells of a player's deployment rows (option deployment_rows, 10.5)."""
    edge, span = state.zone(side)
    return state.geo.deployment_cells(edge, state.rules.rows, span)


def array_problems_for(state: NapoleonicState, side: str, placements: Placements) -> list[str]:
    """Why `placements` is no legal array for `side` (composition, own rows, distinct)."""
    return array_problems(
        state.geo, placements, deployment_cells(state, side), state.army(side), side
    )


def units_of_array(state: NapoleonicState, side: str, placements: Placements) -> list[Unit]:
    """The units of a legal array, with the engine's ids (10.1)."""
    ids = default_ids(side, placements)
    index = state.geo.index
    return [
        Unit(unit_id, side, kind, index[square])
        for unit_id, (square, kind) in zip(ids, placements, strict=True)
    ]


def read_placements(text: str) -> Placements:
    """The canonical placements of an array text (ids ignored); ArrayError if unreadable."""
    return canonical_placements((item.square, item.kind) for item in parse_array(text))


def random_placements(state: NapoleonicState, side: str, rng: random.Random) -> Placements:
    """A uniformly random legal array of a player's army."""
    cells = list(deployment_cells(state, side))
    army = list(state.army(side))
    chosen = rng.sample(cells, len(army))
    names = state.geo.names
    return canonical_placements((names[c], k) for c, k in zip(chosen, army, strict=True))


def random_player_array(state: NapoleonicState, side: str, seed: int) -> tuple[Placements, bytes]:
    """The array and salt a random player derives from a small seed (so it can reveal)."""
    rng = random.Random(f"napoleonic random deployment {side} {seed}")
    placements = random_placements(state, side, rng)
    salt = hashlib.sha256(f"napoleonic random salt {side} {seed}".encode()).digest()
    return placements, salt


def random_deployment(state: NapoleonicState, side: str, rng: random.Random) -> NapoleonicAction:
    """A random player's action in a secret deployment phase (arrays are never listed)."""
    if state.phase is Phase.DEPLOY_SEALED:
        return Seal(side, random_placements(state, side, rng))
    if state.phase is Phase.DEPLOY_COMMIT:
        placements, salt = random_player_array(state, side, rng.randrange(RANDOM_SEEDS))
        return Commit(side, commitment(placements, salt))
    assert state.deployment is not None
    committed = dict(state.deployment.commitments)[side]
    for seed in range(RANDOM_SEEDS):
        placements, salt = random_player_array(state, side, seed)
        if commitment(placements, salt) == committed:
            return Reveal(side, placements, salt)
    return Reveal(side, random_placements(state, side, rng), rng.randbytes(32))


# --- sealing (mode B) -----------------------------------------------------------------------


class Sealer:
    """Seals and opens arrays with keys derived from the engine-held `seal_key`."""

    def __init__(self, seal_key: bytes) -> None:
        self._aead = AESGCM(hmac.new(seal_key, _SEAL_CONTEXT + b" key", "sha256").digest())

    @staticmethod
    def _context(state: NapoleonicState, side: str) -> bytes:
        return b"|".join((_SEAL_CONTEXT, side.encode(), f"{state.width}x{state.height}".encode()))

    @staticmethod
    def _padded(state: NapoleonicState, side: str, text: str) -> bytes:
        # Every item is 'square=L'; pad to the longest possible text of this army.
        longest = max(len(name) for name in state.geo.names) + 3
        size = longest * max(1, len(state.army(side)))
        return text.encode("ascii").ljust(size, b" ")

    def seal(self, state: NapoleonicState, side: str, placements: Placements) -> bytes:
        """The ciphertext (a random nonce first) of a player's array."""
        context = self._context(state, side)
        plaintext = self._padded(state, side, canonical_array_text(placements))
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, context)

    def open(self, state: NapoleonicState, side: str, sealed: bytes) -> Placements:
        """The array inside a ciphertext; INVALID_STATE if it was not sealed by this key."""
        try:
            plaintext = self._aead.decrypt(
                sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], self._context(state, side)
            )
            return read_placements(plaintext.decode("ascii"))
        except (InvalidTag, ValueError, ArrayError, UnicodeDecodeError):
            raise RuleError(
                Reason.INVALID_STATE,
                f"{side}'s sealed deployment does not open with this engine's key",
                field="state.napoleonic.deployment.sealed",
            ) from None


# --- laying out -------------------------------------------------------------------------------


def begin_play(
    state: NapoleonicState, arrays: dict[str, Placements], events: list[Event]
) -> NapoleonicState:
    """Lay out every revealed array and start the first turn (first player, movement). The
    array of a player who left after revealing it (10.6) goes as on_commander_loss says,
    as its army would have gone from the board."""
    units: list[Unit] = list(state.units)
    for side in (p.id for p in state.players):
        if side in arrays:
            units += units_of_array(state, side, arrays[side])
    # The first player still in the game: one who forfeited its deployment (10.6) is out.
    first = next(p for p in state.turn_order if state.in_game(p))
    if arrays:
        events.append(
            Event(
                EventKind.DEPLOYMENT_REVEALED,
                "Every deployment is revealed and laid out.",
                cells=tuple(state.geo.names[u.cell] for u in units),
            )
        )
        state = state.with_units(sort_units(units))
        for surrendered in (True, False):
            gone = [
                p.id
                for p in state.players
                if p.out and p.surrendered is surrendered and p.id in arrays
            ]
            if gone:
                state = dispose(state, gone, events, surrendered=surrendered)
        units = list(state.units)
    events.append(
        Event(
            EventKind.PHASE_CHANGED,
            f"Deployment is complete: {first} moves first (movement).",
            side=first,
        )
    )
    state = state.with_units(
        sort_units(units),
        phase=Phase.MOVEMENT,
        active=first,
        deployment=None,
        turn=EMPTY_TURN,
    )
    if state.rules.repetition:
        state = state.evolve(position_history=(position_key(state),))
    return turn_opening(state)


def forfeit(state: NapoleonicState, side: str, why: str, events: list[Event]) -> NapoleonicState:
    """The game lost by `side` at deployment (10.1); in a game of alliances (10.6) only
    `side` (with its army's other commanders) is out, and the deployment goes on."""
    if state.multiplayer():
        events.append(Event(EventKind.PHASE_CHANGED, f"{why}.", side=side))
        state = players_out(
            state, (side,), events, surrendered=False, cause="has forfeited its deployment"
        )
        return state if state.outcome is not None else after_leaving(state, None)
    winner = state.enemies(side)[0]
    outcome = Outcome(winner, OutcomeReason.DEPLOYMENT_FORFEIT, f"{why}; {winner} wins")
    events.append(Event(EventKind.GAME_OVER, outcome.message, side=winner))
    return state.evolve(phase=Phase.GAME_OVER, outcome=outcome, deployment=None)


# --- the deployment actions -------------------------------------------------------------------


def apply_commit(
    state: NapoleonicState, side: str, digest: bytes, events: list[Event]
) -> NapoleonicState:
    """Store a commitment; when every player has committed, the reveal phase opens."""
    deployment = state.deployment
    assert deployment is not None
    if len(digest) != DIGEST_BYTES:
        raise RuleError(
            Reason.DEPLOYMENT_INVALID,
            f"a commitment is a {DIGEST_BYTES}-byte SHA-256 digest, not {len(digest)} bytes",
        )
    commitments = (*deployment.commitments, (side, digest))
    events.append(
        Event(
            EventKind.DEPLOYMENT_COMMITTED,
            f"{side_title(side)} commits to a secret deployment.",
            side=side,
        )
    )
    phase = Phase.DEPLOY_COMMIT
    if _complete(state, commitments):
        phase = Phase.DEPLOY_REVEAL
        events.append(
            Event(EventKind.PHASE_CHANGED, "Every player has committed: reveal the arrays.")
        )
    return state.evolve(deployment=replace(deployment, commitments=commitments), phase=phase)


def apply_reveal(
    state: NapoleonicState,
    side: str,
    placements: Placements,
    salt: bytes,
    events: list[Event],
) -> NapoleonicState:
    """Check a reveal against its commitment and the array rules; lay out when all are in."""
    deployment = state.deployment
    assert deployment is not None
    check_square_names(placements)
    committed = dict(deployment.commitments)[side]
    if len(salt) != SALT_BYTES or not hmac.compare_digest(commitment(placements, salt), committed):
        return forfeit(
            state,
            side,
            f"{side}'s revealed array and salt do not match its commitment, so {side} forfeits",
            events,
        )
    problems = array_problems_for(state, side, placements)
    if problems:
        if state.options["illegal_reveal"] == "redeploy":
            events.append(
                Event(
                    EventKind.PHASE_CHANGED,
                    f"{side_title(side)}'s revealed array is illegal ({'; '.join(problems)}): "
                    "every player commits again (illegal_reveal = redeploy).",
                    side=side,
                )
            )
            return state.evolve(phase=Phase.DEPLOY_COMMIT, deployment=Deployment(deployment.mode))
        return forfeit(
            state,
            side,
            f"{side}'s revealed array is illegal ({'; '.join(problems)}), so {side} forfeits",
            events,
        )
    reveals = (*deployment.reveals, (side, _cells(state, placements)))
    events.append(
        Event(
            EventKind.DEPLOYMENT_REVEALED,
            # The array itself is shown only when every array is laid out (10.1).
            f"{side_title(side)} reveals its deployment; it matches the commitment.",
            side=side,
        )
    )
    if not _complete(state, reveals):
        return state.evolve(deployment=replace(deployment, reveals=reveals))
    names = state.geo.names
    arrays = {p: tuple((names[c], k) for c, k in array) for p, array in reveals}
    return begin_play(state, arrays, events)


def _complete(state: NapoleonicState, entries: tuple[tuple[str, object], ...]) -> bool:
    """Whether every player still in the game has its entry (10.1, 10.6)."""
    done = {player for player, _x in entries}
    return all(p.id in done for p in state.players if not p.out)


def after_leaving(state: NapoleonicState, sealer: Sealer | None) -> NapoleonicState:
    """A deployment once a player has left a game of alliances (10.6): the phase goes on
    without it, and ends if it was the last one awaited."""
    dep = state.deployment
    assert dep is not None
    events: list[Event] = []
    if not state.in_game(state.active):
        # The active player of a deployment is the one who will move first: the first
        # player of the turn order still in the game (as `begin_play` will start with).
        state = state.evolve(active=next(p for p in state.turn_order if state.in_game(p)))
    if state.phase is Phase.DEPLOY_COMMIT and _complete(state, dep.commitments):
        return state.evolve(phase=Phase.DEPLOY_REVEAL)
    if state.phase is Phase.DEPLOY_REVEAL and _complete(state, dep.reveals):
        if dep.withheld:
            raise RuleError(
                Reason.INVALID_STATE,
                "this copy of the state withholds a deployment, so the arrays cannot be laid "
                "out from it; send the whole state",
                field="state",
            )
        names = state.geo.names
        arrays = {
            p: tuple((names[c], k) for c, k in array)
            for p, array in dep.reveals
            if state.in_game(p)
        }
        return begin_play(state, arrays, events)
    if state.phase is Phase.DEPLOY_SEALED and _complete(state, dep.sealed):
        if sealer is None or dep.withheld:
            raise RuleError(
                Reason.SEAL_KEY_UNAVAILABLE,
                "the sealed arrays cannot be opened here (no seal key, or withheld arrays)",
            )
        arrays = {p: sealer.open(state, p, data) for p, data in dep.sealed if state.in_game(p)}
        return begin_play(state, arrays, events)
    if state.phase is Phase.PLACEMENT and not state.in_game(dep.next_placer):
        others = [p.id for p in state.players if not p.out and pool(state, p.id).total()]
        if not others:
            return begin_play(state, {}, events)
        after = state.next_player(dep.next_placer)
        placer = after if after in others else others[0]
        return state.evolve(deployment=replace(dep, next_placer=placer, placed_this_turn=0))
    return state


def _cells(state: NapoleonicState, placements: Placements) -> tuple[tuple[int, str], ...]:
    index = state.geo.index
    return tuple((index[square], kind) for square, kind in placements)


def check_array(state: NapoleonicState, side: str, placements: Placements) -> None:
    """DEPLOYMENT_INVALID naming every problem of an array, if it has any: to its sender,
    who may see its own squares; the logs count the problems and name no square."""
    problems = array_problems_for(state, side, placements)
    if problems:
        raise RuleError(
            Reason.DEPLOYMENT_INVALID,
            f"{side}'s array is illegal: " + "; ".join(problems),
            logged=f"{side}'s array is illegal ({len(problems)} problems, told to its sender)",
        )


def apply_seal(
    state: NapoleonicState,
    sealer: Sealer,
    side: str,
    placements: Placements,
    events: list[Event],
) -> NapoleonicState:
    """Seal a checked array into the state; open and lay out all arrays when all are in."""
    deployment = state.deployment
    assert deployment is not None
    check_array(state, side, placements)
    sealed = (*deployment.sealed, (side, sealer.seal(state, side, placements)))
    # The event says nothing of the array: it stays secret until every array is in.
    events.append(
        Event(
            EventKind.DEPLOYMENT_SEALED,
            f"{side_title(side)}'s deployment is sealed by the engine.",
            side=side,
        )
    )
    if not _complete(state, sealed):
        return state.evolve(deployment=replace(deployment, sealed=sealed))
    arrays = {
        player: sealer.open(state, player, data) for player, data in sealed if state.in_game(player)
    }
    for player, array in arrays.items():
        check_array(state, player, array)
    return begin_play(state, arrays, events)


def pool(state: NapoleonicState, side: str) -> Counter[str]:
    """Marching Orders: the unit types a player has still to place."""
    left = Counter(state.army(side))
    left.subtract(u.kind for u in state.units if u.side == side)
    return +left


def check_place(state: NapoleonicState, side: str, kind: str, square: str) -> int:
    """The cell of a legal Marching Orders placement; RuleError naming the rule (10.2)."""
    if pool(state, side)[kind] <= 0:
        raise RuleError(Reason.DEPLOYMENT_INVALID, f"{side} has no {kind_name(kind)} left to place")
    cell = state.geo.index.get(square)
    if cell is None:
        raise RuleError(Reason.DESTINATION_OFF_BOARD, f"{square} is not a square of this board")
    if cell not in deployment_cells(state, side):
        raise RuleError(
            Reason.DEPLOYMENT_INVALID,
            f"{square} is not on {side}'s deployment rows {state.options['deployment_rows']}",
        )
    if state.at()[cell] is not None:
        raise RuleError(Reason.DESTINATION_OCCUPIED, f"{square} already holds a unit")
    return cell


def apply_place(
    state: NapoleonicState, side: str, kind: str, cell: int, events: list[Event] | None
) -> NapoleonicState:
    """Place a unit, pass the placement on (10.2) and start play once all are placed."""
    deployment = state.deployment
    assert deployment is not None
    army = state.army(side)
    number = sum(1 for u in state.units if u.side == side and u.kind == kind) + 1
    unit = Unit(unit_id_for(side, kind, number, army.count(kind)), side, kind, cell)
    units = sort_units((*state.units, unit))
    name = state.geo.names[cell]
    log: list[Event] = events if events is not None else []
    log.append(
        Event(
            EventKind.PLACED,
            f"{side_title(side)} places {kind_name(kind)} on {name}.",
            side=side,
            cells=(name,),
            piece=kind,
            unit=unit.id,
        )
    )
    state = state.with_units(units)
    mine = pool(state, side).total()
    others = [
        p.id for p in state.players if p.id != side and not p.out and pool(state, p.id).total()
    ]
    if not mine and not others:
        return begin_play(state, {}, log)
    placed = deployment.placed_this_turn + 1
    next_placer = side
    if placed >= int(state.options["placements_per_turn"]) or not mine:
        placed = 0
        next_placer = _next_placer(state, state.next_player(side), others) or side
    return state.evolve(
        deployment=replace(deployment, next_placer=next_placer, placed_this_turn=placed)
    )


def _next_placer(state: NapoleonicState, after: str, others: list[str]) -> str | None:
    """Who places next (10.2): `after` (the next player in the turn order) if it has units
    left to place, else the first player with some after it in the turn order."""
    order = state.turn_order
    start = order.index(after)
    for step in range(len(order)):
        candidate = order[(start + step) % len(order)]
        if candidate in others:
            return candidate
    return None


def legal_placements(state: NapoleonicState, side: str) -> list[tuple[str, int]]:
    """Every legal (unit type, cell) placement for `side` now."""
    kinds = sorted(pool(state, side))
    at = state.at()
    cells = [c for c in deployment_cells(state, side) if at[c] is None]
    return [(kind, cell) for kind in kinds for cell in cells]
