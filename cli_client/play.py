"""The game loop: draw, read what the player types, send it, show what the matchmaker streams.

One thread (`live.Watcher`) follows the game; this loop drains what it reports, reads keys
without blocking (`terminal.Terminal`), and talks to the engine (moves, hints, notation) and
the matchmaker (actions, draws, resignation). The same loop serves spectators.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence

from rich.text import Text

from cli_client import commands, napoleonic
from cli_client.commands import Command
from cli_client.connection import Connection
from cli_client.errors import ClientError, UnreachableError
from cli_client.identity import Store
from cli_client.live import Ended, Failed, Lost, Reconnected, Update, Watcher, transient
from cli_client.render import panel
from cli_client.render.theme import Theme
from cli_client.session import GameSession
from cli_client.terminal import Terminal
from wargame.v1 import game_pb2, matchmaker_pb2, napoleonic_pb2

SUBMIT_RETRY_SECONDS = 30.0
POLL_SECONDS = 0.1
HINT_SECONDS = 1.0
MAX_CONFLICTS = 3
INTRO = (
    "Type your actions in the game's notation; `moves` lists the legal ones (`moves e3`: "
    "from one square), `hint` suggests one, `help` shows the rest."
)
CATCH_UP_SECONDS = 2.0


def _position(state: game_pb2.GameState) -> bytes:
    """The state without the standing draw offer: what a player's decision rests on."""
    copy = game_pb2.GameState()
    copy.CopyFrom(state)
    copy.ClearField("draw_offer")
    return copy.SerializeToString(deterministic=True)


class Play:
    """One game on the screen, for a player or a spectator."""

    def __init__(
        self,
        connection: Connection,
        store: Store,
        session: GameSession,
        terminal: Terminal,
        *,
        spectator: bool = False,
        invite_code: str = "",
    ) -> None:
        self.connection = connection
        self.store = store
        self.session = session
        self.terminal = terminal
        self.theme: Theme = terminal.theme
        self.spectator = spectator or not session.your_side
        self.invite_code = invite_code
        self.deployment = napoleonic.Deployment(session, store, connection)
        self._pending_version = 0
        self._announced: tuple[object, ...] = ()
        self._revealing = False
        self.watcher: Watcher | None = None

    # -- the loop --------------------------------------------------------------------

    def run(self) -> int:
        """Play until the game ends or the player leaves; returns the exit status."""
        watcher = Watcher(self.connection, self.session.game_id, self.session.version).start()
        self.watcher = watcher
        try:
            with self.terminal.session():
                self.show_board()
                if not self.spectator and not self.session.finished:
                    self.note(INTRO)
                self.announce()
                try:
                    return self._loop(watcher)
                except KeyboardInterrupt:
                    self._left("interrupted")
                    return 130
        finally:
            watcher.stop()

    def _loop(self, watcher: Watcher) -> int:
        while True:
            ended = self._drain(watcher)
            if self.session.finished:
                self.finish()
                return 0
            if ended:
                return 1
            self._automatic()
            self._prompt()
            for line in self.terminal.read(POLL_SECONDS):
                try:
                    leaving = self.handle(commands.parse(line, deploying=self.deploying))
                except ClientError as error:
                    self.error(error.message)
                    continue
                if leaving:
                    self._left("")
                    return 0
                if self._over():
                    break
            if self.terminal.at_eof:
                self._left("end of input")
                return 0
            self.terminal.tick()

    def _over(self) -> bool:
        return self.session.finished

    def _left(self, why: str) -> None:
        if self.spectator:
            self.terminal.print(Text("Stopped watching."))
            return
        game_id = self.session.game_id
        prefix = f"{why}: " if why else ""
        back = f"`wargame resume {game_id}` to return"
        self.terminal.print(Text(f"{prefix}you left game {game_id}; it goes on — {back}."))

    # -- what the watcher reports ------------------------------------------------------

    def _drain(self, watcher: Watcher) -> bool:
        """Show what arrived; True when watching cannot go on."""
        changed = False
        for item in watcher.drain():
            if isinstance(item, Update):
                changed |= self._update(item.message)
            elif isinstance(item, Lost):
                self.warn(f"lost connection to the matchmaker ({item.reason}); reconnecting…")
            elif isinstance(item, Reconnected):
                self.note(f"reconnected to the matchmaker; resuming after version {item.version}")
            elif isinstance(item, Ended):
                pass
            elif isinstance(item, Failed):
                self.error(item.error.message)
                return True
        if self._pending_version > self.session.version:
            self._refresh()
            changed = True
        if changed:
            self.show_board()
            self.announce()
        return False

    def _update(self, message: matchmaker_pb2.WatchGameResponse) -> bool:
        if message.version <= self.session.version and not message.resync:
            return False
        if message.resync:
            self.note("(some updates are no longer kept; showing the game as it stands)")
        elif message.notations or message.events:
            self._show_actions(message.side, list(message.notations), list(message.events))
        self.session.note_events(message.events)
        if message.HasField("game"):
            self.session.update(message.game)
        else:
            self._pending_version = max(self._pending_version, int(message.version))
        return True

    def _refresh(self) -> None:
        try:
            self.session.update(self.connection.get_game(self.session.game_id))
        except ClientError as error:
            if not transient(error):
                raise
        self._pending_version = 0

    # -- output --------------------------------------------------------------------------

    def show_board(self) -> None:
        """Draw the board with the status beside it."""
        marked: set[str] = set()
        extra: list[game_pb2.Piece] = []
        if self.deploying:
            marked = self.deployment.rows()
            extra = self.deployment.pieces()
        scene = self.session.scene(marked=marked, extra_pieces=extra)
        lines = panel.screen(self.session, self.theme, self.terminal.console.width, scene=scene)
        self.terminal.print(Text(""), *lines)

    def _show_actions(
        self, side: str, notations: Sequence[str], events: Sequence[game_pb2.Event]
    ) -> None:
        who = (
            "You"
            if side and side == self.session.your_side
            else (self.session.name(side) if side else "")
        )
        if notations:
            text = Text(f"{who}: " if who else "")
            text.append(", ".join(notations), style=self.theme.style("bold"))
            self.terminal.print(text)
        lines = panel.event_lines(events, self.theme)
        if lines:
            self.terminal.print(*lines)

    def note(self, text: str) -> None:
        """A line of information."""
        self.terminal.print(Text(text, style=self.theme.style("cyan")))

    def warn(self, text: str) -> None:
        """A line of warning."""
        self.terminal.print(Text(text, style=self.theme.style("yellow")))

    def error(self, text: str) -> None:
        """An error, as one line."""
        mark = "✗ " if self.theme.unicode else "error: "
        self.terminal.print(Text(mark + text, style=self.theme.style("bold red")))

    def announce(self) -> None:
        """Say once what the player should do now (phase guidance, draw offers, waiting)."""
        session = self.session
        state = session.state
        key = (
            session.version,
            session.my_turn,
            napoleonic.is_napoleonic(state) and state.napoleonic.phase,
        )
        if key == self._announced:
            return
        self._announced = key
        if session.finished:
            return
        if not session.started:
            code = self.invite_code or session.view.invite_code
            if code:
                join = f"`wargame play --join {code}`"
                self.note(f"Waiting for an opponent. Invite code: {code} — they join with {join}.")
            else:
                self.note(f"Waiting for an opponent to join game {session.game_id}.")
            return
        offer = state.draw_offer
        if offer and not self.spectator:
            if offer != session.your_side:
                self.note(f"{session.name(offer)} offers a draw — type `accept` or `decline`.")
            else:
                self.note("Your draw offer stands.")
        if session.my_turn and napoleonic.is_napoleonic(state):
            guidance = napoleonic.guidance(session)
            if guidance:
                self.note(guidance)
            if self.deploying:
                self.note(self.deployment.summary())

    def finish(self) -> None:
        """The result, and where to find the record."""
        self.terminal.print(panel.outcome_line(self.session, self.theme))
        self.terminal.print(
            Text(
                f"The record: `wargame record {self.session.game_id}`",
                style=self.theme.style("dim"),
            )
        )

    # -- prompt --------------------------------------------------------------------------

    @property
    def deploying(self) -> bool:
        """Whether the player is building a secret array."""
        state = self.session.state
        return (
            not self.spectator
            and napoleonic.is_napoleonic(state)
            and state.napoleonic.phase
            in (
                napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
                napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
            )
            and self.session.my_turn
        )

    def _prompt(self) -> None:
        session = self.session
        arrow = "› " if self.theme.unicode else "> "
        if not session.started:
            self.terminal.set_prompt(arrow, waiting="waiting for an opponent")
            return
        acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
        if self.spectator:
            self.terminal.set_prompt(arrow, waiting=f"watching · {acting} to act")
            return
        if session.my_turn:
            label = session.name(session.your_side)
            if napoleonic.is_napoleonic(session.state):
                label += " · " + napoleonic.phase_label(session)
            self.terminal.set_prompt(Text(f"{label} {arrow}", style=self.theme.style("bold")))
            return
        self.terminal.set_prompt(arrow, waiting=f"waiting for {acting}")

    # -- commands --------------------------------------------------------------------------

    def handle(self, command: Command) -> bool:
        """Carry out one typed command; True when the player leaves."""
        if command.name == "quit":
            return True
        viewing: dict[str, Callable[[str], None]] = {
            "empty": lambda _: None,
            "help": lambda _: self._help(),
            "board": lambda _: self.show_board(),
            "flip": lambda _: self._flip(),
            "moves": self.list_moves,
        }
        playing: dict[str, Callable[[str], None]] = {
            "hint": lambda _: self.hint(),
            "resign": lambda _: self._apply_view(self.connection.resign(self.session.game_id)),
            "draw": lambda _: self._draw(),
            "accept": lambda _: self._answer(True),
            "decline": lambda _: self._answer(False),
            "army": lambda _: self.note(self.deployment.summary()),
            "clear": lambda _: self._clear(),
            "place": self._place,
            "commit": self._commit,
        }
        if command.name in viewing:
            viewing[command.name](command.argument)
        elif self.spectator:
            raise ClientError("you are watching this game; `quit` stops watching")
        else:
            playing.get(command.name, self.act)(command.argument)
        return False

    def _help(self) -> None:
        lines = commands.help_lines(self.session.board.notation, self.deploying)
        if napoleonic.is_napoleonic(self.session.state) and napoleonic.guidance(self.session):
            lines += ["", "Now: " + napoleonic.guidance(self.session)]
        self.terminal.print(*[Text(line) for line in lines])

    def _flip(self) -> None:
        self.session.flipped = not self.session.flipped
        self.show_board()

    def _draw(self) -> None:
        offer = self.session.state.draw_offer
        if offer and offer != self.session.your_side:
            self._answer(True)
        else:
            self._apply_view(self.connection.offer_draw(self.session.game_id))

    def _answer(self, accept: bool) -> None:
        self._apply_view(self.connection.answer_draw(self.session.game_id, accept))
        if not accept:
            self.note("You decline the draw.")

    def _clear(self) -> None:
        self.deployment.clear()
        self.show_board()

    def _place(self, text: str) -> None:
        self.deployment.add(text)
        self.show_board()
        self.note(self.deployment.summary())

    def _commit(self, text: str) -> None:
        if text:
            self.deployment.add(text)
        self.commit()

    def _check_turn(self) -> None:
        session = self.session
        if session.finished:
            raise ClientError("the game is over")
        if not session.started:
            raise ClientError("the game has not started: waiting for an opponent")
        if not session.my_turn:
            acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
            raise ClientError(f"not your turn: {acting} to act", reason="NOT_YOUR_TURN")

    def act(self, text: str) -> None:
        """Send an action typed in the game's notation."""
        self._check_turn()
        self.submit([game_pb2.Action(side=self.session.your_side, notation=text)])

    def commit(self) -> None:
        """Send the secret array's commitment (sealed mode: the array, for the engine to seal)."""
        self._check_turn()
        phase = self.session.state.napoleonic.phase
        if phase == napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED:
            text = self.deployment.sealed()
        else:
            text = self.deployment.commitment()
            self.note(
                "Committed: only the digest was sent; your array stays here until the reveal."
            )
        self.submit([game_pb2.Action(side=self.session.your_side, notation=text)])

    def _automatic(self) -> None:
        """Reveal a committed array when the reveal phase comes."""
        state = self.session.state
        if (
            self.spectator
            or self._revealing
            or not napoleonic.is_napoleonic(state)
            or state.napoleonic.phase != napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL
            or not self.session.my_turn
            or self.deployment.revealed()
        ):
            return
        text = self.deployment.reveal_text()
        if text is None:
            self.error(
                "your committed array is not on this computer; it cannot be revealed from here"
            )
            self._revealing = True
            return
        self._revealing = True
        try:
            self.note("Revealing your array.")
            self.submit([game_pb2.Action(side=self.session.your_side, notation=text)])
            self.deployment.forget()
        except ClientError as error:
            self.error(error.message)
        finally:
            self._revealing = False

    def submit(self, actions: list[game_pb2.Action]) -> None:
        """Submit actions at the version seen; retried with the same key while unreachable.

        When the game moved on in between without changing the position (a draw offer
        answered, a clock read), the same actions are sent again at the new version.
        """
        key = uuid.uuid4().hex
        deadline = time.monotonic() + SUBMIT_RETRY_SECONDS
        warned = False
        conflicts = 0
        while True:
            seen = _position(self.session.state)
            try:
                reply = self.connection.submit(
                    self.session.game_id, self.session.version, key, actions
                )
                break
            except ClientError as error:
                if error.reason == "VERSION_CONFLICT":
                    self._catch_up()
                    conflicts += 1
                    if (
                        conflicts <= MAX_CONFLICTS
                        and self.session.my_turn
                        and _position(self.session.state) == seen
                    ):
                        key = uuid.uuid4().hex
                        continue
                    self.show_board()
                    raise
                if not (
                    isinstance(error, UnreachableError)
                    or error.reason in {"ENGINE_UNAVAILABLE", "STORE_UNAVAILABLE"}
                ):
                    raise
                if time.monotonic() > deadline:
                    raise
                if not warned:
                    self.warn(f"{error.message}; retrying…")
                    warned = True
                time.sleep(0.5)
        if reply.game.version > self.session.version:
            self._show_actions(self.session.your_side, list(reply.notations), list(reply.events))
            self.session.note_events(reply.events)
            self.session.update(reply.game)
            self.show_board()
            self.announce()

    def _catch_up(self) -> None:
        """Bring the session to the matchmaker's version, showing what happened meanwhile."""
        target = self.connection.get_game(self.session.game_id)
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while (
            self.watcher is not None
            and self.session.version < target.version
            and time.monotonic() < deadline
        ):
            self._drain(self.watcher)
            time.sleep(0.05)
        self.session.update(target)

    def _apply_view(self, view: matchmaker_pb2.GameView) -> None:
        if self.session.update(view):
            self.show_board()
            self.announce()

    def list_moves(self, cell: str) -> None:
        """List the legal actions (for one cell if given)."""
        session = self.session
        if session.finished:
            raise ClientError("the game is over")
        reply = self.connection.legal_actions(session.state, cell.strip())
        notations = [action.notation for action in reply.actions]
        where = f" from {cell.strip()}" if cell.strip() else ""
        acting = ", ".join(session.name(side) for side in reply.to_act) or "nobody"
        if not notations:
            self.note(f"No legal actions{where} for {acting}.")
            return
        self.note(f"{len(notations)} legal action(s){where} for {acting}:")
        width = max(len(text) for text in notations) + 2
        columns = max(1, (self.terminal.console.width - 2) // width)
        for start in range(0, len(notations), columns):
            row = "".join(text.ljust(width) for text in notations[start : start + columns])
            self.terminal.print(Text("  " + row.rstrip()))

    def hint(self) -> None:
        """Ask the engine for a suggestion."""
        self._check_turn()
        reply = self.connection.suggest(self.session.state, self.session.your_side, HINT_SECONDS)
        line = " ".join(reply.line[1:6])
        follow = f"; then {line}" if line else ""
        score = f"evaluation {reply.evaluation:+.2f}, depth {reply.depth}"
        self.note(f"Hint: {reply.notation} ({score}{follow})")
