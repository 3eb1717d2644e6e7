"""The line display: every change printed below the last, above an editable prompt line.

For pipes and scripts, `--ascii`, `--plain` and screen readers: nothing is redrawn in
place, so everything shown stays in the terminal's scrollback in the order it happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

from rich.text import Text

from cli_client.render import panel
from cli_client.render.board import Scene
from cli_client.session import GameSession
from cli_client.terminal import Terminal


class LineDisplay:
    """A `Display` on a `Terminal`, as a scrolling log."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.theme = terminal.theme

    @property
    def width(self) -> int:
        """The terminal's width."""
        return self.terminal.console.width

    @property
    def at_eof(self) -> bool:
        """Whether input has ended."""
        return self.terminal.at_eof

    def run(self, body: Callable[[], int]) -> int:
        """Run the loop with key-by-key input."""
        with self.terminal.session():
            return body()

    def game(self, session: GameSession, scene: Scene) -> None:
        """Print the board with the status beside it."""
        lines = panel.screen(session, self.theme, self.width, scene=scene)
        self.terminal.print(Text(""), *lines)

    def played(
        self, who: str, notations: Sequence[str], events: Sequence[Text], *, report: bool = False
    ) -> None:
        """Print what was played and what it did."""
        if notations:
            text = Text(f"{who}: " if who else "")
            text.append(", ".join(notations), style=self.theme.style("bold"))
            self.terminal.print(text)
        if events:
            self.say(*events)

    def say(self, *lines: Text) -> None:
        """Print lines, word-wrapped to the terminal (commands to paste kept whole)."""
        self.terminal.print(*[row for line in lines for row in self._rows(line)])

    def _rows(self, line: Text) -> list[Text]:
        return panel.word_wrapped(line, self.width) if line.plain else [line]

    def remember(self, *lines: Text) -> None:
        """Nothing: the lines are on the terminal already."""

    def page(self, title: str, *lines: Text) -> None:
        """Print a long answer (the terminal's scrollback keeps it)."""
        self.say(*lines)

    def prompt(self, prompt: Text, waiting: str = "") -> None:
        """Set the prompt line."""
        self.terminal.set_prompt(prompt, waiting=waiting)

    def busy(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Nothing to show: the log goes on when the answer comes."""
        return contextlib.nullcontext()

    def read(self, timeout: float) -> list[str]:
        """Lines typed within `timeout` seconds."""
        return self.terminal.read(timeout)

    def complete_from(self, source: Callable[[], Sequence[str]]) -> None:
        """No completion here (the line editor of `Terminal` has history only)."""

    def bell(self) -> None:
        """The bell, on a terminal that lets it ring."""
        if self.terminal.bell and self.terminal.interactive:
            self.terminal.stdout.write("\a")
            self.terminal.stdout.flush()

    def tick(self) -> None:
        """Turn the spinner."""
        self.terminal.tick()

    def farewell(self, *lines: Text) -> None:
        """Print the last lines."""
        self.say(*lines)
