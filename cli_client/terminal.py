"""The terminal: output through rich, and input that never blocks the live game.

On a terminal, input is read key by key (cbreak mode, echo done here) so the prompt line
can be redrawn when the opponent's move arrives or the spinner turns, without losing what
the player is typing. Left/right, Home/End, Backspace, Delete, Ctrl-U/W and history
(up/down) work; Ctrl-D on an empty line is end of input; Ctrl-C raises KeyboardInterrupt
as usual. When stdin or stdout is not a terminal, lines are read as they come and prompts
are printed as plain lines, so the client can be scripted.
"""

from __future__ import annotations

import codecs
import contextlib
import math
import os
import select
import sys
import termios
import time
import tty
from collections.abc import Iterator
from typing import Any, TextIO

from rich.console import Console, RenderableType
from rich.text import Text

from cli_client.render.theme import Theme

SPINNER_UNICODE = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_ASCII = "|/-\\"
SPIN_PERIOD = 0.1


# What plain-ASCII output writes for the few non-ASCII characters the client and the
# services use; anything else non-ASCII becomes "?".
ASCII_FALLBACK = str.maketrans({
    "—": "-", "–": "-", "·": "-", "›": ">", "‹": "<", "◀": "<", "▶": ">", "→": ">", "←": "<",
    "×": "x", "…": ".", "✗": "x", "≈": "~", "≡": "=", "╪": "+", "±": "+", "━": "=", "“": '"',
    "”": '"', "‘": "'", "’": "'", "≤": "<", "≥": ">", "•": "*", "⌂": "#", "▲": "^", "◆": "%",
    "◇": "&", "∘": ":",
})  # fmt: skip


class AsciiWriter:
    """A text stream that passes on only ASCII (see ASCII_FALLBACK)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write `text` as ASCII."""
        plain = text.translate(ASCII_FALLBACK).encode("ascii", "replace").decode("ascii")
        return self.stream.write(plain)

    def flush(self) -> None:
        """Flush the underlying stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the underlying stream is a terminal."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """The underlying stream's descriptor."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        """Always ASCII."""
        return "ascii"


def output_stream(theme: Theme, stream: TextIO | None = None) -> TextIO:
    """The stream to write to: the real one, or an ASCII-only wrapper in ASCII mode."""
    out = stream or sys.stdout
    if theme.unicode or isinstance(out, AsciiWriter):
        return out
    return AsciiWriter(out)  # type: ignore[return-value]


def make_console(theme: Theme, stream: TextIO | None = None) -> Console:
    """A rich console that writes exactly what the theme allows (no auto-highlighting)."""
    out = output_stream(theme, stream)
    colour = theme.colour
    return Console(
        file=out,
        force_terminal=colour,
        color_system="truecolor" if colour else None,
        highlight=False,
        markup=False,
        emoji=False,
        soft_wrap=True,
        no_color=None if colour else True,  # (None: rich's own default, as with colour)
    )


def elapsed(seconds: float) -> str:
    """`m:ss` (or `h:mm:ss`) of a number of seconds."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def countdown(seconds: float) -> str:
    """Time left as `m:ss`, counted up to the whole second (0:00 only when it is over)."""
    return elapsed(math.ceil(max(0.0, seconds)))


class Terminal:
    """Prints above a prompt line that stays editable, with an optional spinner."""

    def __init__(
        self, theme: Theme, stdin: TextIO | None = None, stdout: TextIO | None = None
    ) -> None:
        self.theme = theme
        self.stdin = stdin or sys.stdin
        self.stdout = output_stream(theme, stdout)
        self.console = make_console(theme, self.stdout)
        try:
            self.fd = self.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = -1
        self.interactive = self.fd >= 0 and os.isatty(self.fd) and self.stdout.isatty()
        self.bell = True  # the terminal bell may ring (`--no-bell`: never)
        self._saved: list[Any] | None = None
        self._prompt = Text("")
        self._waiting = ""
        self._waiting_since = 0.0
        self._rendered_prompt = ""
        self._shown = False
        self._buffer: list[str] = []
        self._cursor = 0
        self._history: list[str] = []
        self._history_at = 0
        self._escape = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._eof = False
        self._partial = ""
        self._last_line_printed = ""

    # -- set-up ----------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self) -> Iterator[Terminal]:
        """Key-by-key input for the duration; the terminal is restored however it ends."""
        if self.interactive:
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        try:
            yield self
        finally:
            self.hide_prompt()
            if self._saved is not None:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
                self._saved = None

    # -- output ----------------------------------------------------------------------

    def print(self, *items: RenderableType | str, wrap: bool = False) -> None:
        """Print lines above the prompt line (word-wrapped to the width if `wrap`)."""
        self.hide_prompt()
        for item in items:
            self.console.print(item, soft_wrap=not wrap)
        self.stdout.flush()
        self._draw()

    def hide_prompt(self) -> None:
        """Remove the prompt line from the screen (it comes back with the next draw)."""
        if self._shown and self.interactive:
            self.stdout.write("\r\x1b[K")
            self.stdout.flush()
        self._shown = False

    def set_prompt(self, prompt: Text | str, waiting: str = "") -> None:
        """The prompt, and what is awaited (shown with a spinner and a timer) if anything."""
        text = prompt if isinstance(prompt, Text) else Text(prompt)
        changed = waiting != self._waiting or text.markup != self._prompt.markup
        if waiting != self._waiting:
            self._waiting = waiting
            self._waiting_since = time.monotonic()
        self._prompt = text
        if changed or not self._shown:
            self._draw()

    def tick(self) -> None:
        """Turn the spinner (call it often); redraws only when the line changes."""
        if self._waiting and self.interactive and self._line() != self._rendered_prompt:
            self._draw()

    def _line(self) -> str:
        parts = Text()
        if self._waiting:
            frames = SPINNER_UNICODE if self.theme.unicode else SPINNER_ASCII
            frame = frames[int(time.monotonic() / SPIN_PERIOD) % len(frames)]
            spent = elapsed(time.monotonic() - self._waiting_since)
            parts.append(f"{frame} {self._waiting} {spent} ", style=self.theme.style("cyan"))
        parts.append_text(self._prompt)
        with self.console.capture() as captured:
            self.console.print(parts, end="")
        return captured.get()

    def _draw(self) -> None:
        if not self.interactive:
            line = (f"{self._waiting} … " if self._waiting else "") + self._prompt.plain
            if line.strip() and line != self._last_line_printed:
                self.stdout.write(line.rstrip() + "\n")
                self.stdout.flush()
                self._last_line_printed = line
            return
        text = "".join(self._buffer)
        back = len(self._buffer) - self._cursor
        move = f"\x1b[{back}D" if back else ""
        self._rendered_prompt = self._line()
        self.stdout.write("\r" + self._rendered_prompt + text + "\x1b[K" + move)
        self.stdout.flush()
        self._shown = True

    # -- input -----------------------------------------------------------------------

    @property
    def at_eof(self) -> bool:
        """Whether input has ended."""
        return self._eof

    def read(self, timeout: float) -> list[str]:
        """Lines completed within `timeout` seconds (maybe none); check `at_eof` after."""
        if self._eof or self.fd < 0:
            if self.fd < 0:
                self._eof = True
            time.sleep(timeout)
            return []
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        data = os.read(self.fd, 4096)
        if not data:
            self._eof = True
            return [self._partial] if self._partial else []
        text = self._decoder.decode(data)
        if not self.interactive:
            return self._split(text)
        return self._keys(text)

    def _split(self, text: str) -> list[str]:
        self._partial += text
        *lines, self._partial = self._partial.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return lines

    def _keys(self, text: str) -> list[str]:  # noqa: C901 (one branch per control key)
        lines: list[str] = []
        for char in text:
            if self._escape:
                self._escape += char
                if len(self._escape) == 2 and char not in "[O":
                    self._escape = ""
                elif len(self._escape) > 2 and ("@" <= char <= "~"):
                    self._sequence(self._escape)
                    self._escape = ""
                continue
            if char == "\x1b":
                self._escape = char
            elif char in "\r\n":
                line = "".join(self._buffer)
                self._buffer, self._cursor = [], 0
                self.stdout.write("\r" + self._line() + line + "\x1b[K\n")
                self.stdout.flush()
                self._shown = False
                if line.strip() and (not self._history or self._history[-1] != line):
                    self._history.append(line)
                self._history_at = len(self._history)
                lines.append(line)
            elif char in "\x7f\x08":
                if self._cursor:
                    del self._buffer[self._cursor - 1]
                    self._cursor -= 1
            elif char == "\x04":
                if not self._buffer:
                    self._eof = True
                    self.hide_prompt()
                    self.stdout.write("\n")
                    break
                if self._cursor < len(self._buffer):
                    del self._buffer[self._cursor]
            elif char == "\x15":
                del self._buffer[: self._cursor]
                self._cursor = 0
            elif char == "\x17":
                start = self._cursor
                while start and self._buffer[start - 1] == " ":
                    start -= 1
                while start and self._buffer[start - 1] != " ":
                    start -= 1
                del self._buffer[start : self._cursor]
                self._cursor = start
            elif char == "\x01":
                self._cursor = 0
            elif char == "\x05":
                self._cursor = len(self._buffer)
            elif char.isprintable():
                self._buffer.insert(self._cursor, char)
                self._cursor += 1
        if not self._eof:
            self._draw()
        return lines

    def _sequence(self, sequence: str) -> None:
        final, body = sequence[-1], sequence[2:-1]
        if final == "D":
            self._cursor = max(0, self._cursor - 1)
        elif final == "C":
            self._cursor = min(len(self._buffer), self._cursor + 1)
        elif final == "H" or (final == "~" and body in {"1", "7"}):
            self._cursor = 0
        elif final == "F" or (final == "~" and body in {"4", "8"}):
            self._cursor = len(self._buffer)
        elif final == "~" and body == "3":
            if self._cursor < len(self._buffer):
                del self._buffer[self._cursor]
        elif final in "AB" and self._history:
            step = -1 if final == "A" else 1
            self._history_at = min(len(self._history), max(0, self._history_at + step))
            line = self._history[self._history_at] if self._history_at < len(self._history) else ""
            self._buffer = list(line)
            self._cursor = len(self._buffer)
