"""Where a game is shown: a scrolling log of lines, or `fullscreen.FullScreen` updated in place.

`Display` is what the game loop (`play.Play`) talks to. `line.LineDisplay` prints each
change below the last (pipes, `--ascii`, `--plain`, screen readers); `fullscreen.FullScreen`
keeps board, side panel (players, ticking clocks, legend, move list, the result), the
latest events and the input line on one screen, with a pager for long answers and the
log. `choose` picks one for the terminal at hand. Where things are:

- `line.py`        `LineDisplay`: each change printed below the last, above the prompt line
- `fullscreen.py`  `FullScreen`: one screen updated in place (prompt_toolkit)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Protocol

from rich.text import Text

from cli_client.render.board import Scene
from cli_client.render.theme import Theme
from cli_client.session import GameSession
from cli_client.terminal import Terminal


class Display(Protocol):
    """What the game loop shows things on and reads lines from."""

    theme: Theme

    @property
    def width(self) -> int:
        """Columns available for a line of text."""

    @property
    def at_eof(self) -> bool:
        """Whether input has ended."""

    def run(self, body: Callable[[], int]) -> int:
        """Run the game loop `body` with the display up; its exit status."""

    def game(self, session: GameSession, scene: Scene) -> None:
        """The game changed: show it."""

    def played(
        self, who: str, notations: Sequence[str], events: Sequence[Text], *, report: bool = False
    ) -> None:
        """Actions were played ("You: e3-e4") with what they did (a combat `report`: read
        like a long answer)."""

    def say(self, *lines: Text) -> None:
        """Lines of information, warnings, errors, answers to commands."""

    def remember(self, *lines: Text) -> None:
        """Lines printed before the display began, for a log that hides them."""

    def page(self, title: str, *lines: Text) -> None:
        """A long answer (`help`, `moves`): shown whole, for as long as the player reads."""

    def prompt(self, prompt: Text, waiting: str = "") -> None:
        """The input prompt, and what is awaited (shown with a timer) if anything."""

    def busy(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Show that the client is working on `what` meanwhile."""

    def read(self, timeout: float) -> list[str]:
        """Lines typed within `timeout` seconds (maybe none)."""

    def complete_from(self, source: Callable[[], Sequence[str]]) -> None:
        """Where completion of the input line finds its candidates (if it completes)."""

    def tick(self) -> None:
        """Called every loop turn: animate what waits."""

    def bell(self) -> None:
        """Ring the terminal bell (unless the player said `--no-bell`)."""

    def farewell(self, *lines: Text) -> None:
        """Last lines, to stay on the terminal after the game's screen is gone."""


def full_screen_possible(terminal: Terminal) -> bool:
    """Whether the terminal can show the full-screen view: interactive, with Unicode."""
    return terminal.interactive and terminal.theme.unicode


def choose(terminal: Terminal, *, plain: bool = False) -> Display:
    """The full-screen view on a capable terminal unless `plain`; the line display otherwise."""
    from cli_client.display.line import LineDisplay

    if plain or not full_screen_possible(terminal):
        return LineDisplay(terminal)
    from cli_client.display.fullscreen import FullScreen

    return FullScreen(terminal)
