"""The game loop: show the game, read what the player types, send it, show what comes back.

One thread (`live.Watcher`) follows the game; the loop drains what it reports, reads typed
lines from the display without blocking, and carries them out. The same loop serves
spectators, every game and both displays. Each job has its module:

- `updates.py`        what the watcher reports, taken into the game and shown
- `game_commands.py`  what a typed line does (help, moves, hint, resign, draw, actions)
- `prompt.py`         what the player is told and asked (welcome, what to do now, prompt)
- `after_game.py`     the result, the ratings once settled, `rematch` or leaving
- `hooks.py`          what a game adds (`HOOKS` below); `submit.py` how actions are sent;
                      `display/` where things appear

After a rematch the loop goes on in the same display with the new game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text

from cli_client import commands, napoleonic, notation, prompt, wording
from cli_client.after_game import AfterGame
from cli_client.connection import Connection
from cli_client.display import Display
from cli_client.errors import ClientError
from cli_client.game_commands import GameCommands
from cli_client.hooks import GameHooks
from cli_client.identity import Store
from cli_client.live import Watcher
from cli_client.render import panel
from cli_client.render.theme import Theme
from cli_client.session import GameSession
from cli_client.submit import Submitter
from cli_client.updates import Updates
from wargame.v1 import game_pb2, matchmaker_pb2

POLL_SECONDS = 0.1
DRAW_EVENTS = frozenset({game_pb2.EVENT_KIND_DRAW_OFFERED, game_pb2.EVENT_KIND_DRAW_DECLINED})

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
        hint_level: int = 0,
    ) -> None:
        self.connection = connection
        self.hint_level = hint_level  # `--hint-level` (0: `game_commands.coach_level` picks)
        self.store = store
        self.display = display
        self.theme: Theme = display.theme
        self.invite_code = invite_code
        self.open_game = open_game
        self.watcher: Watcher | None = None
        self._introduced = False
        self._belled = ""  # the game whose low-time bell has rung
        self.chat_muted = False  # `mute`: chat lines that arrive are not shown
        self._begin(session, spectator=spectator)
        display.complete_from(self.candidates)

    def _begin(self, session: GameSession, *, spectator: bool = False) -> None:
        """Take up a game: everything the loop keeps about the game in play."""
        self.session = session
        self.spectator = spectator or not session.your_side
        game = session.state.game or session.view.game
        self.hooks: GameHooks = HOOKS.get(game, GameHooks)(self)
        self.updates = Updates(self)
        self.commands = GameCommands(self)
        self.after = AfterGame(self)
        self.submitter = Submitter(
            self.connection, session, catch_up=self.updates.catch_up, warn=self.warn
        )
        self.cells = notation.Cells(session.board)
        self._announced: tuple[object, ...] = ()
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
            view = self.after.next
            if view is None or self.open_game is None:
                return status
            self._begin(self.open_game(view))
            self.store.set_last_game(self.connection.addresses.matchmaker, view.id)
            self.show_board()  # the new game's screen, its log begun by the welcome
            welcome = prompt.welcome(self.session)
            self.display.say(Text(""), Text(welcome, style=self.theme.style("bold")))

    def _play(self) -> int:
        watcher = self.watcher
        assert watcher is not None  # started with the game (see _begin)
        try:
            self.hooks.changed()
            self.show_board()
            if not self.spectator and not self.session.finished and not self._introduced:
                self._introduced = True
                self.note(prompt.INTRO.format(cell=prompt.example_cell(self.session)))
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
            ended = self.updates.drain(watcher)
            if self.session.finished:
                self.after.finish()
                return 0 if self.spectator else self.after.run(watcher)
            if ended:
                return 1
            self.hooks.automatic()
            self.show_prompt()
            for line in self.read_lines():
                try:
                    if self.commands.answer_question(line):
                        continue
                    typed = commands.parse(line, deploying=self.hooks.deploying)
                    leaving = self.commands.handle(typed)
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
            self._warn_low_time()
            self.display.tick()

    def _warn_low_time(self) -> None:
        """Ring the bell once a game when the player's own time runs low."""
        session = self.session
        if self._belled != session.game_id and session.low_time(session.your_side):
            self._belled = session.game_id
            self.display.bell()

    def _over(self) -> bool:
        return self.session.finished  # (a call: the line just handled may have ended it)

    def read_lines(self) -> list[str]:
        """The lines typed since the last look (waiting for them a moment at most)."""
        return self.display.read(POLL_SECONDS)

    def _left(self, why: str) -> None:
        if self.spectator:
            self.display.farewell(Text("Stopped watching."))
            return
        if self.session.finished:
            return
        game_id = self.session.game_id
        prefix = f"{why}: " if why else ""
        back = f"`wargame resume {game_id}` to return"
        self.display.farewell(
            Text(f"{prefix}you left game {game_id}; {self._meanwhile()} — {back}.")
        )

    def _meanwhile(self) -> str:
        """What becomes of the game the player leaves (the matchmaker's presence rules)."""
        session = self.session
        if session.keeps_others_waiting:
            return "it goes on (on your turn you lose it as abandoned unless you come back)"
        if session.view.HasField("clock"):
            return "the bot waits for you, but your clock runs on your turn"
        return "the bot waits for you"

    # -- what the hooks and the other parts use ----------------------------------------

    def candidates(self) -> list[str]:
        """What the input line may complete to (the game in play's words and actions)."""
        return self.commands.candidates()

    def legal_notations(self) -> list[str]:
        """The notations of the legal actions now (asked once per version)."""
        return self.commands.legal_notations()

    def check_turn(self) -> None:
        """Refuse to act when it is not the player's turn (or no game runs)."""
        self.commands.check_turn()

    def submit(self, actions: list[game_pb2.Action]) -> None:
        """Submit actions (see `submit.Submitter`) and show what they did."""
        self.commands.submit(actions)

    def changed(self) -> None:
        """The session moved on: let the hooks catch up, then show it."""
        self.hooks.changed()
        self.show_board()
        self.announce()

    @property
    def options(self) -> list[str]:
        """The game's option names (kept out of what players read)."""
        return list(self.session.state.options)

    # -- output --------------------------------------------------------------------------

    def show_board(self) -> None:
        """Draw the game as it stands."""
        scene = self.session.scene(
            marked=self.hooks.marked(), extra_pieces=self.hooks.extra_pieces()
        )
        self.display.game(self.session, scene)

    def show_actions(
        self, side: str, notations: Sequence[str], events: Sequence[game_pb2.Event]
    ) -> None:
        """Actions played by `side` ("You" for the player) and what they did."""
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
            clean=lambda text: wording.for_players(text, self.options, self.session.sides),
        )
        report = any(event.kind == game_pb2.EVENT_KIND_COMBAT_RESOLVED for event in events)
        shown = [wording.as_played(text) for text in notations]
        self.display.played(who, shown, lines, report=report)

    def show_prompt(self) -> None:
        """The prompt for the moment (see `prompt.prompt`)."""
        question = self.commands.question
        shown = prompt.prompt(
            self.session,
            spectator=self.spectator,
            question=question.prompt if question is not None else None,
            rematch_offered=bool(self.updates.rematch_offered),
            label=self.hooks.prompt_label(),
            unicode=self.theme.unicode,
        )
        text = Text(shown.text, style=self.theme.style("bold")) if shown.bold else Text(shown.text)
        self.display.prompt(text, waiting=shown.waiting)

    def announce(self) -> None:
        """Say once what the player should do now (phase guidance, draw offers, waiting)."""
        session = self.session
        key = (session.version, session.my_turn, self.hooks.prompt_label())
        if key == self._announced:
            return
        self._announced = key
        for line in prompt.announcements(
            session,
            spectator=self.spectator,
            invite_code=self.invite_code,
            game_lines=self.hooks.announce,
        ):
            self.note(line)

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
