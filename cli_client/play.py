"""The game loop: show the game, read what the player types, send it, show what comes back.

One thread (`live.Watcher`) follows the game; the loop drains what it reports, reads typed
lines from the display without blocking, and talks to the engine (moves, hints) and the
matchmaker (actions, draws, resignation). The same loop serves spectators, every game and
both displays: what a game adds is in its hooks (`HOOKS`), how actions are sent is in
`submit.py`, where things appear is the display's business (`display/`).

After the game the loop stays for what follows it: the ratings once a rated game is
settled, and playing again (`rematch`, offered to the opponent or accepted from it), which
goes on in the same display with the new game.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text

from cli_client import commands, napoleonic, notation, notices, wording
from cli_client.commands import Command
from cli_client.connection import Connection
from cli_client.display import Display
from cli_client.errors import ClientError, is_rules_reason
from cli_client.hooks import GameHooks
from cli_client.identity import Store
from cli_client.live import Ended, Failed, Lost, Reconnected, Update, Watcher, transient
from cli_client.render import panel
from cli_client.render.theme import Theme
from cli_client.session import BOT_LEVELS, GameSession
from cli_client.submit import Submitter
from wargame.v1 import game_pb2, matchmaker_pb2

POLL_SECONDS = 0.1
HINT_SECONDS = 1.0
# Game of War notation (section 2): `#C` ends the move after which a Citadel occupation held.
CITADEL_HELD = "#C"


def _spoken(notation: str) -> str:
    """A notation as the hint line says it: `#C` in words."""
    if notation.endswith(CITADEL_HELD):
        return notation.removesuffix(CITADEL_HELD) + " (the Citadel holds: a win)"
    return notation


INTRO = (
    "Type your actions in the game's notation; `moves` lists the legal ones (`moves {cell}`: "
    "from one square), `hint` suggests one, `help` shows the rest."
)
CATCH_UP_SECONDS = 2.0
RATINGS_SECONDS = 10.0  # how long to look for a rated game's ratings after it ends
RATINGS_LOOK = 0.5  # between looks
PLAY_AGAIN = "Play again: `rematch` starts a new game with the sides swapped; `quit` leaves."
YES = frozenset({"y", "yes"})
DRAW_EVENTS = frozenset({game_pb2.EVENT_KIND_DRAW_OFFERED, game_pb2.EVENT_KIND_DRAW_DECLINED})


@dataclass(frozen=True)
class Question:
    """A yes/no question the next typed line answers (no unless "y" or "yes")."""

    prompt: str
    then: Callable[[], None]


def welcome(session: GameSession) -> str:
    """The first line of a game: its id, the player's side, the bot's level if it plays."""
    side = session.name(session.your_side) if session.your_side else "?"
    line = f"Game {session.game_id}: you play {side}"
    bots = [seat for seat in session.seats() if seat.bot]
    bot = bots[0] if bots else None
    if session.multiplayer:
        allies = [
            session.name(other)
            for other, alliance in session.alliances().items()
            if other != session.your_side and alliance == session.alliances().get(session.your_side)
        ]
        line += f" with {', '.join(allies)}" if allies else ""
        if bot is not None:
            line += f"; the bot plays {', '.join(session.name(seat.side) for seat in bots)}"
            line += f" at level {bot.level} of {BOT_LEVELS}" if bot.level else ""
        return line + "."
    if bot is not None and bot.level:
        line += f" against the bot at level {bot.level} of {BOT_LEVELS}"
        line += " (`--level 1` is the easiest)"
    return line + "."


def awaited(session: GameSession) -> str:
    """Who an open game waits for: "an opponent", or in a game of more than two players
    the free seats ("players for the free seats Blue, Green")."""
    if not session.multiplayer:
        return "an opponent"
    free = [session.name(seat.side) for seat in session.view.seats if not seat.HasField("player")]
    return "players for the free seats " + ", ".join(free)


# Each game's hooks, by ruleset id; games not listed need none.
HOOKS: dict[str, type[GameHooks]] = {"napoleonic": napoleonic.NapoleonicHooks}


class Play:
    """One game on the screen, for a player or a spectator."""

    def __init__(
        self,
        connection: Connection,
        store: Store,
        session: GameSession,
        display: Display,
        *,
        spectator: bool = False,
        invite_code: str = "",
        open_game: Callable[[matchmaker_pb2.GameView], GameSession] | None = None,
    ) -> None:
        self.connection = connection
        self.store = store
        self.display = display
        self.theme: Theme = display.theme
        self.invite_code = invite_code
        self.open_game = open_game
        self.watcher: Watcher | None = None
        self._introduced = False
        self._next: matchmaker_pb2.GameView | None = None  # the rematch to go on with
        self._begin(session, spectator=spectator)
        display.complete_from(self.candidates)

    def _begin(self, session: GameSession, *, spectator: bool = False) -> None:
        """Take up a game: everything the loop keeps about the game in play."""
        self.session = session
        self.spectator = spectator or not session.your_side
        game = session.state.game or session.view.game
        self.hooks: GameHooks = HOOKS.get(game, GameHooks)(self)
        self.submitter = Submitter(
            self.connection, session, catch_up=self._catch_up, warn=self.warn
        )
        self.cells = notation.Cells(session.board)
        self._pending_version = 0
        self._announced: tuple[object, ...] = ()
        self._legal: tuple[int, list[str]] = (-1, [])
        self._notices: set[tuple[object, ...]] = set()
        self._question: Question | None = None
        self._rematch_offered = ""  # the game the opponent offers as a rematch
        self._ratings_shown = False
        # Follow the game at once: a seated player's open stream is its presence, and it
        # stays open after the end for a rematch offered.
        self.watcher = Watcher(
            self.connection, session.game_id, session.version, follow_rematch=not self.spectator
        ).start()

    # -- the loop --------------------------------------------------------------------

    def run(self) -> int:
        """Play until the games end or the player leaves; returns the exit status."""
        try:
            return self.display.run(self._games)
        finally:
            if self.watcher is not None:
                self.watcher.stop()

    def _games(self) -> int:
        """The game, then each rematch the player goes on to."""
        while True:
            status = self._play()
            view, self._next = self._next, None
            if view is None or self.open_game is None:
                return status
            self._begin(self.open_game(view))
            self.store.set_last_game(self.connection.addresses.matchmaker, view.id)
            self.display.say(Text(""), Text(welcome(self.session), style=self.theme.style("bold")))

    def _play(self) -> int:
        watcher = self.watcher
        assert watcher is not None  # started with the game (see _begin)
        try:
            self.hooks.changed()
            self.show_board()
            if not self.spectator and not self.session.finished and not self._introduced:
                self._introduced = True
                self.note(INTRO.format(cell=self.example_cell()))
            self.announce()
            try:
                return self._loop(watcher)
            except KeyboardInterrupt:
                self._left("interrupted")
                return 130
        finally:
            watcher.stop()
            self.watcher = None

    def _loop(self, watcher: Watcher) -> int:
        while True:
            ended = self._drain(watcher)
            if self.session.finished:
                self.finish()
                return 0 if self.spectator else self._after(watcher)
            if ended:
                return 1
            self.hooks.automatic()
            self._prompt()
            for line in self.display.read(POLL_SECONDS):
                try:
                    if self._answer_question(line):
                        continue
                    leaving = self.handle(commands.parse(line, deploying=self.hooks.deploying))
                except ClientError as error:
                    self.error(error.message)
                    continue
                if leaving:
                    self._left("")
                    return 0
                if self._over():
                    break
            if self.display.at_eof:
                self._left("end of input")
                return 0
            self.display.tick()

    def _over(self) -> bool:
        return self.session.finished  # (a call: the line just handled may have ended it)

    def _answer_question(self, line: str) -> bool:
        """Whether the line answered a question asked (carried out on yes)."""
        question, self._question = self._question, None
        if question is None:
            return False
        if line.strip().lower() in YES:
            question.then()
        else:
            self.note("Not done: play on.")
        return True

    def _left(self, why: str) -> None:
        if self.spectator:
            self.display.farewell(Text("Stopped watching."))
            return
        if self.session.finished:
            return
        game_id = self.session.game_id
        prefix = f"{why}: " if why else ""
        back = f"`wargame resume {game_id}` to return"
        self.display.farewell(Text(f"{prefix}you left game {game_id}; it goes on — {back}."))

    # -- what the watcher reports ------------------------------------------------------

    def _drain(self, watcher: Watcher) -> bool:
        """Show what arrived; True when watching cannot go on."""
        changed = False
        for item in watcher.drain():
            if isinstance(item, Update):
                changed |= self._update(item.message)
            elif isinstance(item, Lost):
                self._lost(item.reason)
            elif isinstance(item, Reconnected):
                self.note("reconnected to the matchmaker; catching up with the game")
            elif isinstance(item, Ended):
                pass
            elif isinstance(item, Failed):
                self.error(item.error.message)
                return True
        if self._pending_version > self.session.version:
            self._refresh()
            changed = True
        if changed:
            self._changed()
        return False

    def _lost(self, reason: str) -> None:
        line = f"lost connection to the matchmaker ({reason}); reconnecting…"
        if self.session.my_turn:  # the open stream is the player's presence
            line += " While you are away on your turn, the game may end as abandoned."
        self.warn(line)

    def _update(self, message: matchmaker_pb2.WatchGameResponse) -> bool:
        if message.HasField("notice"):
            return self._notice(message)
        if message.version <= self.session.version and not message.resync:
            return False
        offer = self.session.state.draw_offer
        if message.resync:
            self.note("(some updates are no longer kept; showing the game as it stands)")
        elif message.notations or message.events:
            self._show_actions(message.side, list(message.notations), list(message.events))
        self.session.note_events(message.events)
        if message.HasField("game"):
            self.session.update(message.game)
            self._draw_answered(offer, message)
        else:
            self._pending_version = max(self._pending_version, int(message.version))
        return True

    def _notice(self, message: matchmaker_pb2.WatchGameResponse) -> bool:
        """Who left, who is back, who is warned, a rematch offered; each said once, and the
        board not drawn again for it (the side panel of the full-screen view reads the
        session as it is)."""
        notice = message.notice
        key = (message.version, notice.kind, notice.side, message.at.seconds, message.at.nanos)
        if key in self._notices:
            return False
        self._notices.add(key)
        self.session.note_notice(notice)
        if message.HasField("game"):
            self.session.refresh(message.game)
        mine = notice.side == self.session.your_side
        if notice.kind == matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED and not mine:
            self._rematch_offered = notice.game_id
        said = notices.words(notice, self.session)
        if said is not None:
            (self.warn if said.warning else self.note)(said.text)
        return False

    def _draw_answered(self, offer: str, message: matchmaker_pb2.WatchGameResponse) -> None:
        """Say how the opponent (the bot too) answered the player's draw offer."""
        session = self.session
        if self.spectator or not offer or offer != session.your_side:
            return
        if not message.side or message.side == session.your_side:
            return
        who = session.seat_name(message.side)
        outcome = session.outcome
        if outcome is not None and outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT:
            self.note(f"{who} accepts your draw offer.")
        elif any(event.kind == game_pb2.EVENT_KIND_DRAW_DECLINED for event in message.events):
            self.note(f"{who} declines your draw offer: play on.")

    def _refresh(self) -> None:
        try:
            self.session.update(self.connection.get_game(self.session.game_id))
        except ClientError as error:
            if not transient(error):
                raise
        self._pending_version = 0

    def _changed(self) -> None:
        """The session moved on: let the hooks catch up, then show it."""
        self.hooks.changed()
        self.show_board()
        self.announce()

    # -- output --------------------------------------------------------------------------

    def show_board(self) -> None:
        """Draw the game as it stands."""
        scene = self.session.scene(
            marked=self.hooks.marked(), extra_pieces=self.hooks.extra_pieces()
        )
        self.display.game(self.session, scene)

    def _show_actions(
        self, side: str, notations: Sequence[str], events: Sequence[game_pb2.Event]
    ) -> None:
        who = (
            "You"
            if side and side == self.session.your_side
            else (self.session.name(side) if side else "")
        )
        if not self.spectator:  # the player is told of draw offers and answers in words
            events = [event for event in events if event.kind not in DRAW_EVENTS]
        lines = panel.event_lines(
            events,
            self.theme,
            board=self.session.board,
            clean=lambda text: wording.for_players(text, self.options),
        )
        self.display.played(who, notations, lines)

    def example_cell(self) -> str:
        """A square of this board with one of the player's pieces (for examples)."""
        order = {cell.name: index for index, cell in enumerate(self.session.board.cells)}
        own = [
            piece.cell
            for piece in self.session.state.pieces
            if piece.side == self.session.your_side
        ]
        return min(own, key=lambda cell: order.get(cell, len(order)), default="SQUARE")

    @property
    def options(self) -> list[str]:
        """The game's option names (kept out of what players read)."""
        return list(self.session.state.options)

    def note(self, text: str) -> None:
        """A line of information."""
        self.display.say(Text(text, style=self.theme.style("cyan")))

    def warn(self, text: str) -> None:
        """A line of warning."""
        self.display.say(Text(text, style=self.theme.style("yellow")))

    def error(self, text: str) -> None:
        """An error, as one line."""
        mark = "✗ " if self.theme.unicode else "error: "
        self.display.say(Text(mark + text, style=self.theme.style("bold red")))

    def announce(self) -> None:
        """Say once what the player should do now (phase guidance, draw offers, waiting)."""
        session = self.session
        state = session.state
        key = (session.version, session.my_turn, self.hooks.prompt_label())
        if key == self._announced:
            return
        self._announced = key
        if session.finished:
            return
        if not session.started:
            code = self.invite_code or session.view.invite_code
            if session.view.rematch_of:
                game = session.game_id
                self.note(f"Rematch offered: waiting for your opponent to accept (game {game}).")
            elif code:
                seat = " --seat SIDE" if session.multiplayer else ""
                join = f"`wargame play --join {code}{seat}`"
                self.note(
                    f"Waiting for {awaited(session)}. Invite code: {code} — they join with {join}."
                )
            else:
                self.note(f"Waiting for {awaited(session)} to join game {session.game_id}.")
            return
        offer = state.draw_offer
        if offer and not self.spectator:
            if offer != session.your_side:
                self.note(f"{session.name(offer)} offers a draw — type `accept` or `decline`.")
            else:
                self.note("Your draw offer stands.")
        if session.my_turn:
            for line in self.hooks.announce():
                self.note(line)

    def finish(self) -> None:
        """The result, and where to find the record."""
        self._question = None
        self.display.farewell(
            panel.outcome_line(self.session, self.theme),
            Text(
                f"The record: `wargame record {self.session.game_id}`",
                style=self.theme.style("dim"),
            ),
        )

    # -- after the game ------------------------------------------------------------------

    def _after(self, watcher: Watcher) -> int:
        """The ratings once settled, and playing again, until the player leaves."""
        session = self.session
        if session.outcome is None:  # withdrawn before anyone joined: nothing to play again
            return 0
        looks_until = time.monotonic() + RATINGS_SECONDS if session.view.rated else 0.0
        next_look = 0.0
        self._show_ratings()
        if session.view.rematch_game_id and not self._rematch_offered:
            self._rematch_offered = session.view.rematch_game_id  # offered before we looked
        self.note(PLAY_AGAIN)
        while True:
            self._drain(watcher)  # (its end changes nothing now: `rematch` still asks)
            now = time.monotonic()
            if not self._ratings_shown and now < looks_until and now >= next_look:
                next_look = now + RATINGS_LOOK
                with contextlib.suppress(ClientError):
                    self.session.refresh(self.connection.get_game(session.game_id))
                self._show_ratings()
            self._prompt()
            for line in self.display.read(POLL_SECONDS):
                command = commands.parse(line)
                try:
                    if command.name == "quit":
                        return 0
                    if command.name == "rematch":
                        self._next = self.connection.rematch(session.game_id)
                        return 0
                    if command.name in {"empty", "help", "board", "flip"}:
                        self.handle(command)
                    else:
                        raise ClientError(
                            "the game is over: `rematch` plays again, `quit` leaves",
                            reason="GAME_OVER",
                        )
                except ClientError as error:
                    self.error(error.message)
            if self.display.at_eof:
                return 0
            self.display.tick()

    def _show_ratings(self) -> None:
        """A rated game's rating changes, once the matchmaker has settled them."""
        if self._ratings_shown or not self.session.view.rated:
            return
        lines = panel.rating_lines(self.session, self.theme)
        if lines:
            self._ratings_shown = True
            self.display.farewell(*lines)

    # -- prompt --------------------------------------------------------------------------

    def _prompt(self) -> None:
        session = self.session
        arrow = "› " if self.theme.unicode else "> "
        if self._question is not None:
            question = f"{self._question.prompt} y/N {arrow}"
            self.display.prompt(Text(question, style=self.theme.style("bold")))
            return
        if session.finished:
            offer = "rematch offered · " if self._rematch_offered else ""
            self.display.prompt(Text(f"{offer}rematch or quit {arrow}"))
            return
        if not session.started:
            waiting = "waiting for players" if session.multiplayer else "waiting for an opponent"
            self.display.prompt(Text(arrow), waiting=waiting)
            return
        acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
        if self.spectator:
            self.display.prompt(Text(arrow), waiting=f"watching · {acting} to act")
            return
        if session.my_turn:
            label = session.name(session.your_side)
            if self.hooks.prompt_label():
                label += " · " + self.hooks.prompt_label()
            self.display.prompt(Text(f"{label} {arrow}", style=self.theme.style("bold")))
            return
        self.display.prompt(Text(arrow), waiting=f"waiting for {acting}")

    # -- commands --------------------------------------------------------------------------

    def legal_notations(self) -> list[str]:
        """The notations of the legal actions now (asked once per version)."""
        version, notations = self._legal
        if version != self.session.version:
            if self.session.finished or not self.session.started:
                notations = []
            else:
                reply = self.connection.legal_actions(self.session.state)
                notations = [action.notation for action in reply.actions]
            self._legal = (self.session.version, notations)
        return notations

    def candidates(self) -> list[str]:
        """What the input line may complete to: the client's words and the legal actions."""
        words = commands.words(deploying=self.hooks.deploying, spectator=self.spectator)
        if self.spectator or not self.session.my_turn:
            return words
        try:
            return words + self.legal_notations()
        except ClientError:
            return words

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
            "resign": self._resign,
            "draw": lambda _: self._draw(),
            "accept": lambda _: self._answer(True),
            "decline": lambda _: self._answer(False),
            "rematch": lambda _: self._not_yet(),
        }
        if command.name in viewing:
            viewing[command.name](command.argument)
        elif self.spectator:
            raise ClientError("you are watching this game; `quit` stops watching")
        elif not self.hooks.handle(command):
            playing.get(command.name, self.act)(command.argument)
        return False

    def _help(self) -> None:
        lines = commands.help_lines(self.session.board.notation, self.hooks.deploying)
        guidance = self.hooks.guidance()
        if guidance:
            lines += ["", "Now: " + guidance]
        self.display.say(*[Text(line) for line in lines])

    def _flip(self) -> None:
        self.session.flipped = not self.session.flipped
        self.show_board()

    def _resign(self, argument: str) -> None:
        """Resign (withdraw a game nobody joined), once the player says yes (`resign!`: now)."""
        session = self.session
        if session.finished:
            raise ClientError("the game is over", reason="GAME_OVER")

        def resign() -> None:
            self._apply_view(self.connection.resign(session.game_id))

        if argument == "!":
            resign()
            return
        if session.started and session.multiplayer:
            self._question = Question("Surrender and leave the game (allies play on)?", resign)
        elif session.started:
            self._question = Question("Resign and lose the game?", resign)
        else:
            self._question = Question("Withdraw the game nobody has joined?", resign)
        self.note(f"{self._question.prompt} Type y to confirm; anything else plays on.")

    def _not_yet(self) -> None:
        raise ClientError("`rematch` is for after the game; this one is still being played")

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

    def check_turn(self) -> None:
        """Refuse to act when it is not the player's turn (or no game runs)."""
        session = self.session
        if session.finished:
            raise ClientError("the game is over")
        if not session.started:
            raise ClientError("the game has not started: waiting for an opponent")
        if not session.my_turn:
            acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
            raise ClientError(f"not your turn: {acting} to act", reason="NOT_YOUR_TURN")

    def act(self, text: str) -> None:
        """Send an action typed in the game's notation; a refusal becomes one helpful line."""
        self.check_turn()
        try:
            self.submit([game_pb2.Action(side=self.session.your_side, notation=text)])
            return
        except ClientError as error:
            if not is_rules_reason(error.reason):
                raise
            refused = error
        words = commands.words(deploying=self.hooks.deploying)
        reading = notation.read(text, self.legal_notations(), self.cells, words)
        if reading.play:
            arrow = "→" if self.theme.unicode else "->"
            self.note(f"{text.strip()} {arrow} {reading.play} (the only legal action there)")
            self.submit([game_pb2.Action(side=self.session.your_side, notation=reading.play)])
            return
        raise ClientError(self.explain(refused, text, reading), reason=refused.reason)

    def explain(self, refused: ClientError, text: str, reading: notation.Reading) -> str:
        """A refusal in one line: the rule in words, and a suggestion or where to look."""
        prefix, _, _ = refused.message.partition(": ")
        if reading.replaces:
            return f"{prefix}: {reading.hint}"
        message = wording.refusal(refused.message, text.strip(), self.options)
        dash = " — " if self.theme.unicode else " - "
        if reading.hint:
            return message + dash + reading.hint
        if refused.details.get("alternatives"):
            route = self.cells.of(text)
            where = f"moves {route[0]}" if route else "moves"
            return message + dash + f"`{where}` lists what is legal"
        return message

    def submit(self, actions: list[game_pb2.Action]) -> None:
        """Submit actions (see `submit.Submitter`) and show what they did."""
        try:
            reply = self.submitter.submit(actions)
        except ClientError as error:
            if error.reason == "VERSION_CONFLICT":
                self.show_board()
            raise
        if reply.game.version > self.session.version:
            # The prompt was for the position before: none until the loop sets the next one.
            self.display.prompt(Text("› " if self.theme.unicode else "> "))
            self._show_actions(self.session.your_side, list(reply.notations), list(reply.events))
            self.session.note_events(reply.events)
            self.session.update(reply.game)
            self._changed()

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
            self._changed()

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
        columns = max(1, (self.display.width - 2) // width)
        rows = []
        for start in range(0, len(notations), columns):
            row = "".join(text.ljust(width) for text in notations[start : start + columns])
            rows.append(Text("  " + row.rstrip()))
        self.display.say(*rows)

    def hint(self) -> None:
        """Ask the engine for a suggestion."""
        self.check_turn()
        with self.display.busy("thinking about a hint"):
            reply = self.connection.suggest(
                self.session.state, self.session.your_side, HINT_SECONDS
            )
        line = " ".join(_spoken(notation) for notation in reply.line[1:6])
        follow = f"; then {line}" if line else ""
        verdict = reply.summary or f"{reply.evaluation:+.1f} material"
        self.note(f"Hint: {_spoken(reply.notation)} ({verdict}{follow})")
