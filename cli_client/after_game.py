"""When the game is over: the result, the rating changes once the matchmaker has settled a
rated game, and playing again (`rematch`, offered or accepted) or leaving.

The loop (`play.Play`) hands over here when the session is finished; the watcher stays
open meanwhile, so a rematch the opponent offers is seen and the prompt says so.
"""

from __future__ import annotations

import contextlib
import time
from typing import Protocol

from rich.text import Text

from cli_client import commands
from cli_client.connection import Connection
from cli_client.display import Display
from cli_client.errors import ClientError
from cli_client.game_commands import GameCommands
from cli_client.live import Watcher
from cli_client.render import panel
from cli_client.render.theme import Theme
from cli_client.session import GameSession
from cli_client.updates import Updates
from wargame.v1 import matchmaker_pb2

RATINGS_SECONDS = 10.0  # how long to look for a rated game's ratings after it ends
RATINGS_LOOK = 0.5  # between looks
PLAY_AGAIN = "Play again: `rematch` starts a new game with the sides swapped; `quit` leaves."
# What may still be typed once the game is over, besides `rematch` and `quit`.
VIEWING = frozenset({"empty", "help", "board", "flip", "say", "mute", "unmute"})


class Loop(Protocol):
    """What the end of a game may use of the loop (`play.Play`)."""

    connection: Connection
    session: GameSession
    theme: Theme
    display: Display
    updates: Updates
    commands: GameCommands

    def read_lines(self) -> list[str]:
        """The lines typed since the last look."""

    def show_prompt(self) -> None:
        """The prompt for the moment."""

    def note(self, text: str) -> None:
        """Say a line of information."""

    def error(self, text: str) -> None:
        """Say an error as one line."""


class AfterGame:
    """The end of one game on the screen, and what the player goes on to."""

    def __init__(self, play: Loop) -> None:
        self.play = play
        self.next: matchmaker_pb2.GameView | None = None  # the rematch to go on with
        self._ratings_shown = False

    def finish(self) -> None:
        """The result, and where to find the record."""
        play = self.play
        play.commands.question = None
        play.display.farewell(
            panel.outcome_line(play.session, play.theme),
            Text(
                f"The record: `wargame record {play.session.game_id}`",
                style=play.theme.style("dim"),
            ),
        )

    def run(self, watcher: Watcher) -> int:
        """The ratings once settled, and playing again, until the player leaves."""
        play = self.play
        session = play.session
        if session.outcome is None:  # withdrawn before anyone joined: nothing to play again
            return 0
        looks_until = time.monotonic() + RATINGS_SECONDS if session.view.rated else 0.0
        next_look = 0.0
        self.show_ratings()
        if session.view.rematch_game_id and not play.updates.rematch_offered:
            play.updates.rematch_offered = session.view.rematch_game_id  # offered before we looked
        play.note(PLAY_AGAIN)
        while True:
            play.updates.drain(watcher)  # (its end changes nothing now: `rematch` still asks)
            now = time.monotonic()
            if not self._ratings_shown and now < looks_until and now >= next_look:
                next_look = now + RATINGS_LOOK
                with contextlib.suppress(ClientError):
                    session.refresh(play.connection.get_game(session.game_id))
                self.show_ratings()
            play.show_prompt()
            for line in play.read_lines():
                command = commands.parse(line)
                try:
                    if command.name == "quit":
                        return 0
                    if command.name == "rematch":
                        self.next = play.connection.rematch(session.game_id)
                        return 0
                    if command.name in VIEWING:
                        play.commands.handle(command)
                    else:
                        raise ClientError(
                            "the game is over: `rematch` plays again, `quit` leaves",
                            reason="GAME_OVER",
                        )
                except ClientError as error:
                    play.error(error.message)
            if play.display.at_eof:
                return 0
            play.display.tick()

    def show_ratings(self) -> None:
        """A rated game's rating changes, once the matchmaker has settled them."""
        play = self.play
        if self._ratings_shown or not play.session.view.rated:
            return
        lines = panel.rating_lines(play.session, play.theme)
        if lines:
            self._ratings_shown = True
            play.display.farewell(*lines)
