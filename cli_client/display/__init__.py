"""Where a game is shown: a scrolling log of lines, or a full-screen view updated in place.

`Display` is what the game loop (`play.Play`) talks to. `line.LineDisplay` prints each
change below the last (pipes, `--ascii`, `--plain`, screen readers); a full-screen view
keeps board, side panel (players, ticking clocks, legend, move list), the latest events and
the input line on one screen.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from rich.text import Text

from cli_client.render.board import Scene
from cli_client.render.theme import Theme
from cli_client.session import GameSession


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

    def played(self, who: str, notations: Sequence[str], events: Sequence[Text]) -> None:
        """Actions were played ("You: e3-e4") with what they did."""

    def say(self, *lines: Text) -> None:
        """Lines of information, warnings, errors, answers to commands."""

    def prompt(self, prompt: Text, waiting: str = "") -> None:
        """The input prompt, and what is awaited (shown with a timer) if anything."""

    def busy(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Show that the client is working on `what` meanwhile."""

    def read(self, timeout: float) -> list[str]:
        """Lines typed within `timeout` seconds (maybe none)."""

    def tick(self) -> None:
        """Called every loop turn: animate what waits."""

    def farewell(self, *lines: Text) -> None:
        """Last lines, to stay on the terminal after the game's screen is gone."""


@contextlib.contextmanager
def nothing() -> Iterator[None]:
    """A context that shows nothing."""
    yield
