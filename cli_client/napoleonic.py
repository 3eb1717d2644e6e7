"""Napoleonic Chess on the screen: the turn's phases explained, and secret deployments.

`NapoleonicHooks` is what the game adds to the game loop (see `hooks.py`).

A turn is small actions (`move`, `attack`, `support`, `advance`, `end`) that the engine
checks one by one; this module only says which phase the state is in, whose part it is,
what `end` does there, and takes its examples from the player's legal actions in the
position shown (an example is something the player could type now).

Attack at Dawn (commit-reveal): the player builds the array here; the engine hashes it
(`ParseAction` of `commit <array> salt <hex>` answers `commit <digest>`), and only that
digest goes to the matchmaker. The array and salt stay in the private identity file until
the reveal phase, when the client sends `reveal <array> salt <hex>` by itself.
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from collections.abc import Callable, Sequence

from cli_client.commands import Command
from cli_client.connection import Connection
from cli_client.details import PHASE_NAMES
from cli_client.errors import ClientError
from cli_client.hooks import GameHooks, Table
from cli_client.identity import Store
from cli_client.notation import Cells
from cli_client.render.panel import combat_head
from cli_client.session import GameSession
from wargame.v1 import game_pb2, napoleonic_pb2

Phase = napoleonic_pb2.NapoleonicPhase
_PLACEMENT = re.compile(r"^([a-z]{1,2}\d{1,3})=([A-Za-z])$")

DEPLOYMENT_PHASES = frozenset(
    {
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
        napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT,
    }
)


def is_napoleonic(state: game_pb2.GameState) -> bool:
    """Whether the state is a Napoleonic Chess state."""
    return state.WhichOneof("detail") == "napoleonic"


def example(
    legal: Sequence[str], keyword: str, onward: Callable[[str], float] = lambda text: 0.0
) -> str:
    """The legal action starting with `keyword` that goes furthest `onward` (the first of
    those), e.g. `move c7-c6`; "" when there is none."""
    return max((text for text in legal if text.split(" ", 1)[0] == keyword), key=onward, default="")


def onward(session: GameSession) -> Callable[[str], float]:
    """How far an action goes toward the opponent's pieces (rows of the board, from its
    first cell to its last), for the player's side."""
    y_of = {cell.name.lower(): cell.y for cell in session.board.cells}
    cells = Cells(session.board)
    own = [y_of[p.cell.lower()] for p in session.state.pieces if p.side == session.your_side]
    other = [y_of[p.cell.lower()] for p in session.state.pieces if p.side != session.your_side]
    if not own or not other:
        return lambda text: 0.0
    direction = 1.0 if sum(other) / len(other) > sum(own) / len(own) else -1.0

    def distance(text: str) -> float:
        named = [y_of[name] for name in cells.of(text) if name in y_of]
        return (named[-1] - named[0]) * direction if len(named) >= 2 else 0.0

    return distance


def _such_as(text: str) -> str:
    """An example in brackets after a sentence (nothing without one)."""
    return f" (`{text}`)" if text else ""


def phase_label(session: GameSession) -> str:
    """The phase in a few words ("movement", "defence")."""
    return PHASE_NAMES.get(session.state.napoleonic.phase, "")


def guidance(session: GameSession, legal: Callable[[], Sequence[str]] = tuple) -> str:
    """What the player does in this phase and what `end` does ("" when it is not their part);
    its example is the first of the player's `legal` actions of the phase's kind."""
    if not session.my_turn:
        return ""
    phase = session.state.napoleonic.phase

    def such_as(keyword: str) -> str:
        return _such_as(example(legal(), keyword, onward(session)))

    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_MOVEMENT:
        return (
            f"Movement: move any of your units{such_as('move')}; "
            "an attack ends movement too; `end` finishes moving and starts the attacks."
        )
    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION:
        return (
            f"Attacks: declare each attack{such_as('attack')}; "
            "`end` sends them to the defender (with no attacks, `end` passes the turn)."
        )
    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEFENCE:
        return (
            "Defence: support your attacked units with units not under attack"
            f"{such_as('support')}; `end` resolves the combats."
        )
    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_ADVANCE:
        return (
            f"Advance: an attacker may move into a vacated square{such_as('advance')}; "
            "`end` finishes the turn."
        )
    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT:
        return f"Placement: place a unit in your rows{such_as('place')}."
    if phase in (
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
    ):
        return (
            "Attack at Dawn: set up your army in secret in the marked rows. Type placements "
            "such as `a2=A b2=C` (again to change them), `army` to see what is left, `clear` to "
            "start again, and `commit` when all are placed."
        )
    if phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL:
        return "Both armies are committed: revealing yours."
    return ""


class Deployment:
    """The secret array being built (Attack at Dawn), and its keeping until the reveal."""

    def __init__(self, session: GameSession, store: Store, connection: Connection) -> None:
        self.session = session
        self.store = store
        self.connection = connection
        self.draft: dict[str, str] = {}
        kinds = session.board.piece_kinds
        self.letter_of = {kind.id: kind.letter.upper() for kind in kinds}
        self.kind_of = {kind.letter.upper(): kind.id for kind in kinds}

    @property
    def key(self) -> str:
        """Where the secret is kept in the identity file."""
        session = self.session
        return f"{self.connection.addresses.matchmaker}/{session.game_id}/{session.your_side}"

    def rows(self) -> set[str]:
        """The player's deployment cells (from the board's tags)."""
        tag = f"deployment:{self.session.your_side}"
        return {cell.name for cell in self.session.board.cells if tag in cell.tags}

    def army(self) -> Counter[str]:
        """The player's army as letters."""
        for army in self.session.state.napoleonic.armies:
            if army.player == self.session.your_side:
                return Counter(self.letter_of.get(kind, "?") for kind in army.unit_types)
        return Counter()

    def remaining(self) -> Counter[str]:
        """Letters not yet placed."""
        left = self.army()
        left.subtract(Counter(self.draft.values()))
        return +left

    def summary(self) -> str:
        """What is placed and what is left, in one line."""
        left = self.remaining()
        placed = self.array_text() or "nothing yet"
        rest = " ".join(f"{count}×{letter}" for letter, count in sorted(left.items())) or "nothing"
        return f"placed: {placed} · to place: {rest}"

    def add(self, text: str) -> None:
        """Add placements `cell=LETTER ...` (a cell placed again moves to the new letter)."""
        cells = {cell.name for cell in self.session.board.cells}
        for word in text.replace(",", " ").split():
            match = _PLACEMENT.match(word.strip())
            if not match:
                raise ClientError(f"'{word}' is not a placement like a2=A")
            cell, letter = match.group(1).lower(), match.group(2).upper()
            if cell not in cells:
                raise ClientError(f"{cell} is not a square of this board")
            if letter not in self.kind_of:
                raise ClientError(
                    f"{letter} is not a unit letter ({' '.join(sorted(self.kind_of))})"
                )
            self.draft[cell] = letter

    def clear(self) -> None:
        """Start the array again."""
        self.draft.clear()

    def array_text(self) -> str:
        """The draft as `cell=LETTER` items."""
        return " ".join(
            f"{cell}={letter}" for cell, letter in sorted(self.draft.items(), key=_square_order)
        )

    def pieces(self) -> list[game_pb2.Piece]:
        """The draft as pieces to draw."""
        side = self.session.your_side
        return [
            game_pb2.Piece(kind=self.kind_of[letter], side=side, cell=cell)
            for cell, letter in self.draft.items()
        ]

    def commitment(self) -> str:
        """The commit action text with only the digest: the engine hashes array and salt.

        The array and salt are kept in the identity file for the reveal.
        """
        array = self.array_text()
        if not array:
            raise ClientError("place your army first (placements like a2=A b2=C)")
        salt = secrets.token_hex(32)
        reply = self.connection.parse_action(
            self.session.state, f"commit {array} salt {salt}", self.session.your_side
        )
        notation = reply.notation.strip()
        if not notation.startswith("commit ") or "=" in notation or salt in notation:
            raise ClientError("the engine did not answer with a digest; nothing was sent")
        self.store.set_secret(self.key, {"array": array, "salt": salt, "commit": notation})
        return notation

    def sealed(self) -> str:
        """The seal action text (sealed mode: the engine encrypts the array)."""
        array = self.array_text()
        if not array:
            raise ClientError("place your army first (placements like a2=A b2=C)")
        return f"seal {array}"

    def reveal_text(self) -> str | None:
        """The reveal action text from the kept secret, if there is one."""
        secret = self.store.secret(self.key)
        if not secret or "array" not in secret or "salt" not in secret:
            return None
        return f"reveal {secret['array']} salt {secret['salt']}"

    def forget(self) -> None:
        """Drop the kept secret (after the reveal)."""
        self.store.set_secret(self.key, None)

    def revealed(self) -> bool:
        """Whether the player's array is already revealed."""
        deployment = self.session.state.napoleonic.deployment
        return any(array.player == self.session.your_side for array in deployment.reveals)


def _square_order(item: tuple[str, str]) -> tuple[int, str]:
    cell = item[0]
    digits = "".join(ch for ch in cell if ch.isdigit())
    return (int(digits or 0), cell)


# Phases in which `end` is sent for the player when it is the only legal action.
AUTO_END = {
    napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION: "attack",
    napoleonic_pb2.NAPOLEONIC_PHASE_ADVANCE: "advance",
}
COMBAT_PHASES = (
    napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION,
    napoleonic_pb2.NAPOLEONIC_PHASE_DEFENCE,
)
PREVIEW_STEPS = 3


def resolve_now(connection: Connection, state: game_pb2.GameState) -> list[game_pb2.CombatTally]:
    """The tallies the declared combats would have if every acting side ended its part now.

    The engine resolves them on a copy of the state (ApplyActions stores nothing), so the
    sums are the rules' own: attack values, terrain, the supports allocated so far.
    """
    for _ in range(PREVIEW_STEPS):
        if state.napoleonic.phase not in COMBAT_PHASES or not state.to_act:
            return []
        ends = [game_pb2.Action(side=side, notation="end") for side in state.to_act]
        reply = connection.apply_actions(state, ends)
        tallies = [
            event.combat
            for event in reply.events
            if event.kind == game_pb2.EVENT_KIND_COMBAT_RESOLVED and event.combat.target
        ]
        if tallies:
            return tallies
        state = reply.state
    return []


class NapoleonicHooks(GameHooks):
    """Phase guidance, running combat sums, `end` when nothing else is legal, deployments."""

    def __init__(self, table: Table) -> None:
        super().__init__(table)
        self.deployment = Deployment(table.session, table.store, table.connection)
        self._revealing = False
        self._ended_at = -1

    @property
    def deploying(self) -> bool:
        """Whether the player is building a secret array."""
        state = self.session.state
        return (
            not self.table.spectator
            and state.napoleonic.phase
            in (
                napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
                napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
            )
            and self.session.my_turn
        )

    def marked(self) -> set[str]:
        """The deployment rows while the array is built."""
        return self.deployment.rows() if self.deploying else set()

    def extra_pieces(self) -> list[game_pb2.Piece]:
        """The array being built."""
        return self.deployment.pieces() if self.deploying else []

    def prompt_label(self) -> str:
        """The phase."""
        return phase_label(self.session)

    def guidance(self) -> str:
        """What the player does in this phase, with one of their legal actions as example."""
        return guidance(self.session, self.table.legal_notations)

    def announce(self) -> list[str]:
        """The phase's guidance, and the array so far while deploying."""
        lines = super().announce()
        if self.deploying:
            lines.append(self.deployment.summary())
        return lines

    def handle(self, command: Command) -> bool:
        """The deployment words: placements, `army`, `clear`, `commit`."""
        table = self.table
        if command.name == "army":
            table.note(self.deployment.summary())
        elif command.name == "clear":
            self.deployment.clear()
            table.show_board()
        elif command.name == "place":
            self.deployment.add(command.argument)
            table.show_board()
            table.note(self.deployment.summary())
        elif command.name == "commit":
            if command.argument:
                self.deployment.add(command.argument)
            self.commit()
        else:
            return False
        return True

    def commit(self) -> None:
        """Send the secret array's commitment (sealed mode: the array, for the engine to seal)."""
        table = self.table
        table.check_turn()
        phase = self.session.state.napoleonic.phase
        if phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED:
            text = self.deployment.sealed()
        else:
            text = self.deployment.commitment()
            table.note(
                "Committed: only the digest was sent; your array stays here until the reveal."
            )
        table.submit([game_pb2.Action(side=self.session.your_side, notation=text)])

    def changed(self) -> None:
        """The running sums of the declared attacks, for the side panel."""
        self.session.extra = self.combat_sums()

    def combat_sums(self) -> list[str]:
        """One line per attacked unit: attack against defence if combat came now."""
        state = self.session.state
        if state.napoleonic.phase not in COMBAT_PHASES or not state.napoleonic.turn.attacks:
            return []
        try:
            tallies = resolve_now(self.table.connection, state)
        except ClientError:
            return []
        declaring = state.napoleonic.phase == napoleonic_pb2.NAPOLEONIC_PHASE_ATTACK_DECLARATION
        when = "before supports" if declaring else "with the supports so far"
        return [
            f"{combat_head(tally, self.session.board)}: attack {tally.attack_total} vs "
            f"defence {tally.defence_total} ({when})"
            for tally in tallies
        ]

    def automatic(self) -> None:
        """Reveal a committed array; send `end` when it is all the player can do."""
        self._reveal()
        self._end_if_only_end()

    def _end_if_only_end(self) -> None:
        session, table = self.session, self.table
        phase = session.state.napoleonic.phase
        if table.spectator or not session.my_turn or phase not in AUTO_END:
            return
        if self._ended_at == session.version:
            return
        self._ended_at = session.version
        try:
            if table.legal_notations() != ["end"]:
                return
            table.note(f"Nothing else is legal in the {AUTO_END[phase]} phase: `end` sent.")
            table.submit([game_pb2.Action(side=session.your_side, notation="end")])
        except ClientError as error:
            table.error(error.message)

    def _reveal(self) -> None:
        state = self.session.state
        table = self.table
        if (
            table.spectator
            or self._revealing
            or state.napoleonic.phase != napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL
            or not self.session.my_turn
            or self.deployment.revealed()
        ):
            return
        text = self.deployment.reveal_text()
        if text is None:
            table.error(
                "your committed array is not on this computer; it cannot be revealed from here"
            )
            self._revealing = True
            return
        self._revealing = True
        try:
            table.note("Revealing your array.")
            table.submit([game_pb2.Action(side=self.session.your_side, notation=text)])
            self.deployment.forget()
        except ClientError as error:
            table.error(error.message)
        finally:
            self._revealing = False
