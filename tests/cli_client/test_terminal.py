"""The line editor and prompt, on a real pseudo-terminal (os.openpty), not a stand-in."""

from __future__ import annotations

import os
import select
import termios
from collections.abc import Iterator

import pytest
from rich.text import Text

from cli_client.render import Theme
from cli_client.terminal import Terminal, elapsed


class Pty:
    """A terminal pair: the client side (slave) and the keyboard/screen side (master)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.stdin = os.fdopen(os.dup(self.slave), "r")
        self.stdout = os.fdopen(os.dup(self.slave), "w", encoding="utf-8")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def screen(self) -> str:
        out = b""
        while select.select([self.master], [], [], 0.05)[0]:
            out += os.read(self.master, 65536)
        return out.decode("utf-8", "replace")

    def close(self) -> None:
        for stream in (self.stdin, self.stdout):
            stream.close()
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def pty() -> Iterator[Pty]:
    pair = Pty()
    yield pair
    pair.close()


def lines_after(terminal: Terminal, pty: Pty, keys: bytes) -> list[str]:
    pty.type(keys)
    got: list[str] = []
    for _ in range(20):
        got += terminal.read(0.05)
        if got:
            break
    return got


def test_a_pty_is_interactive_and_keys_are_read_one_by_one(pty: Pty) -> None:
    terminal = Terminal(Theme(unicode=True), pty.stdin, pty.stdout)
    assert terminal.interactive
    saved = termios.tcgetattr(pty.slave)
    with terminal.session():
        assert not termios.tcgetattr(pty.slave)[3] & termios.ICANON  # cbreak while playing
        terminal.set_prompt("South › ")
        assert lines_after(terminal, pty, b"e3-e4\r") == ["e3-e4"]
        assert "South › e3-e4" in pty.screen()
    assert termios.tcgetattr(pty.slave) == saved  # restored afterwards


def test_editing_keys(pty: Pty) -> None:
    terminal = Terminal(Theme(unicode=True), pty.stdin, pty.stdout)
    with terminal.session():
        assert lines_after(terminal, pty, b"e3-e5\x7f4\r") == ["e3-e4"]  # backspace
        assert lines_after(terminal, pty, b"e4\x1b[D\x1b[D\x1b[D-e3\x1b[F\n") == [
            "-e3e4"
        ]  # left x3, insert, End
        assert lines_after(terminal, pty, b"rubbish\x15moves\r") == ["moves"]  # Ctrl-U
        assert lines_after(terminal, pty, b"attack d4>e5\x17e6\r") == ["attack e6"]  # Ctrl-W
        assert lines_after(terminal, pty, b"\x1b[A\r") == ["attack e6"]  # history
        assert lines_after(terminal, pty, b"\x1b[A\x1b[A\x1b[3~\x01x\r") == [
            "xmoves"
        ]  # older, Delete at end, Home
        assert not terminal.at_eof
        pty.type(b"\x04")
        terminal.read(0.2)
        assert terminal.at_eof  # Ctrl-D on an empty line


def test_printing_keeps_what_is_being_typed(pty: Pty) -> None:
    terminal = Terminal(Theme(unicode=False), pty.stdin, pty.stdout)
    with terminal.session():
        terminal.set_prompt("> ", waiting="waiting for North")
        pty.type(b"resi")
        terminal.read(0.2)
        pty.screen()
        terminal.print(Text("North: e8-e7"))
        screen = pty.screen()
        assert "North: e8-e7" in screen
        assert screen.rstrip().endswith("> resi\x1b[K")  # the prompt and the typing come back below
        assert "waiting for North 0:00" in screen
        assert screen.isascii()
        assert lines_after(terminal, pty, b"gn\r") == ["resign"]


def test_without_a_terminal_lines_are_read_plainly(tmp_path: object) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as stdin, os.fdopen(write_end, "w") as feed:
        out = os.fdopen(os.dup(1), "w")
        terminal = Terminal(Theme(), stdin, out)
        assert not terminal.interactive
        feed.write("e3-e4\nhint\npartial")
        feed.flush()
        assert terminal.read(1.0) == ["e3-e4", "hint"]
        feed.close()
        got = terminal.read(1.0)
        assert got == ["partial"] and terminal.at_eof
        out.close()


def test_elapsed() -> None:
    assert elapsed(0) == "0:00"
    assert elapsed(61.9) == "1:01"
    assert elapsed(3725) == "1:02:05"
    assert elapsed(-3) == "0:00"
