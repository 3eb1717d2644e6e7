"""Real `wargame` processes in pseudo-terminals, against real engine, matchmaker and Redis.

`Stack` is a redis-server and a matchmaker process of the test module's own (fast timings,
fast bot), beside the session's engine process. `Cli` runs the `wargame` console script in
a pty with pexpect, a temporary WARGAME_HOME per player, and keeps the whole transcript so a
test can check that no traceback ever reached the screen. Everything the client writes also
goes through a terminal emulator (pyte), so a test of the full-screen view reads the screen
as a person sees it (`wait_screen`, `rows`) and can resize the terminal (`resize`).
`Player` and `play_out` play a whole game through a client: the test reads the game as
the client's player may (its own token) and types the engine's suggestions when the client
asks for them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pexpect
import pyte
import pytest
from pexpect import fdpexpect
from wcwidth import wcwidth

from cli_client.connection import Addresses, Connection
from cli_client.identity import Store
from tests.servers import RedisServer, ServiceProcess, start_redis, start_service
from wargame.v1 import matchmaker_pb2

WARGAME = str(Path(sys.executable).parent / "wargame")
MATCHMAKER_SERVICE = "wargame.v1.Matchmaker"
# The client starts as in a new terminal window: its own session with the pty as its
# controlling terminal, and Ctrl-C's signal at its default (a test run started in the
# background, `make test &`, inherits SIGINT ignored, and so would the client).
TRAMPOLINE = (
    "import fcntl, os, resource, signal, sys, termios; os.setsid(); "
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "  # a client stopped by SIGABRT: no core
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "[signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGQUIT)]; "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)
WAIT_S = 150.0  # the longest a test waits for the client by default (see `Cli`): a busy
# machine may hold a client up for a minute; the per-test timeout (300 s) stays well beyond
STACKS_S = 20.0  # how long a client left running by a failed wait has to print its stacks
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FAST_MATCHMAKER = [
    "--metrics-listen", "off", "--rate-limit", "0", "--sweep-interval", "0.05",
    "--pair-interval", "0.05", "--queue-status-interval", "0.2", "--match-create-grace", "1",
    "--retry-hint", "0.5",
    "--watch-block", "1", "--bot-time", "0.05", "--grace", "2",
    # Every test client registers from loopback: no limit on new players here (the limits
    # have their own tests in tests/matchmaker).
    "--register-peer-rate", "0", "--register-rate", "0",
]  # fmt: skip

# Positions that end quickly (each game's own set-up text, read by the engine).
WAR_CITADEL = (
    "9k/10/10/t9/10/10/10/10/10/K8M S -:- citadels=a1,j10"  # Mj1xj10, any reply: South wins
)
BATTLE_CITADEL = (
    "defender to move; attacker: W129 C34; defender: T19 I7"  # after any reply, 34x19 wins
)
NAPOLEONIC_GUARDS = (
    "board 8x8; red: g8=I h7=A g7=C a1=G; black: h8=G a3=I"  # black's Guards are boxed in
)


class Stack:
    """Redis and a matchmaker for one test module, and the session's engine."""

    def __init__(self, directory: Path, engine: str, extra: Sequence[str] = ()) -> None:
        self.directory = directory
        self.engine = engine
        self.extra = list(extra)  # more matchmaker flags (a module's own timings)
        self.redis: RedisServer = start_redis(directory / "redis")
        self.matchmaker: ServiceProcess | None = None
        self.port = 0
        self.start_matchmaker()

    @property
    def address(self) -> str:
        """The matchmaker's address."""
        assert self.matchmaker is not None
        return self.matchmaker.address

    def start_matchmaker(self) -> None:
        """Start (or restart, on the same port) the matchmaker process."""
        args = [
            "--redis-url", self.redis.url, "--engine", self.engine, *FAST_MATCHMAKER, *self.extra
        ]  # fmt: skip
        self.matchmaker = start_service(
            "matchmaker.main", args, log_path=self.directory / "matchmaker.log",
            service=MATCHMAKER_SERVICE, port=self.port or None,
        )  # fmt: skip
        self.port = int(self.matchmaker.address.rpartition(":")[2])

    def stop(self) -> None:
        """Stop everything this stack started."""
        if self.matchmaker is not None:
            self.matchmaker.stop()
        self.redis.stop()


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, engine_process: ServiceProcess
) -> Iterator[Stack]:
    """Redis and a matchmaker process for the module, with the session's engine process."""
    made = Stack(tmp_path_factory.mktemp("cli-stack"), engine_process.address)
    yield made
    made.stop()


def _rendered(view: pyte.Screen, y: int) -> str:
    """Row `y` of `view` as `Screen.display` shows it (a wide character's second cell, a
    stub, is skipped), without its trailing blanks."""
    line = view.buffer[y]
    cells = []
    wide = False
    for x in range(view.columns):
        if wide:
            wide = False
            continue
        data = line[x].data
        wide = wcwidth(data[0]) == 2
        cells.append(data)
    return "".join(cells).rstrip()


class Cli:
    """One `wargame` process in a pseudo-terminal."""

    def __init__(
        self,
        args: Sequence[str],
        home: Path,
        stack: Stack | None,
        *,
        ascii_only: bool = True,
        env: dict[str, str] | None = None,
        # How long a wait for the screen may last: it ends as soon as the text shows; this
        # bound only has to outlast a machine busy with a second test run.
        timeout: float = WAIT_S,
        size: tuple[int, int] = (60, 150),
        program: str = WARGAME,
        cwd: Path | None = None,
    ) -> None:
        environment = {
            **os.environ, "WARGAME_HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "COLUMNS": str(size[1]), "LINES": str(size[0]),
        }  # fmt: skip
        environment.pop("NO_COLOR", None)
        # A name, as a script gives one: a new player at a terminal is asked for it otherwise
        # (a test of that asking sets WARGAME_NAME to "").
        environment.setdefault("WARGAME_NAME", "player")
        # SIGABRT makes the client print every thread's stack: a test that fails waiting on
        # a client shows where it was (`_stacks`).
        environment["PYTHONFAULTHANDLER"] = "1"
        if stack is not None:
            environment["WARGAME_ENGINE"] = stack.engine
            environment["WARGAME_MATCHMAKER"] = stack.address
        environment.update(env or {})
        argv = [*args, "--ascii"] if ascii_only else list(args)
        # The pty is made here and the process started with subprocess (no fork of this
        # process, whose gRPC threads do not survive a fork); a tiny trampoline makes the pty
        # the new session's controlling terminal, so Ctrl-C reaches the client as SIGINT.
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
        self.process = subprocess.Popen(
            [sys.executable, "-c", TRAMPOLINE, program, *argv],
            stdin=slave, stdout=slave, stderr=slave, env=environment, close_fds=True, cwd=cwd,
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.child = fdpexpect.fdspawn(
            master, encoding="utf-8", codec_errors="replace", timeout=timeout
        )
        self.timeout = timeout
        self._seen: list[str] = []
        self.view = pyte.Screen(size[1], size[0])
        self._rows: list[str] = []  # the rows as last rendered (`rows`)
        self._stream = pyte.Stream(self.view)

    def _keep(self) -> None:
        before = self.child.before if isinstance(self.child.before, str) else ""
        after = self.child.after if isinstance(self.child.after, str) else ""
        self._feed(before + after)

    def _feed(self, text: str) -> None:
        self._seen.append(text)
        self._stream.feed(text)

    # -- the screen as a person sees it ------------------------------------------------

    def rows(self) -> list[str]:
        """The emulated terminal's rows, as shown now. A row is rendered again only once
        pyte marks it changed (`Screen.dirty`): a wait reads the screen after every read
        of the client's output, and rendering all of it each time was most of a test's
        own work."""
        view = self.view
        if len(self._rows) != view.lines:
            self._rows = [""] * view.lines
            view.dirty.update(range(view.lines))
        for y in view.dirty:
            if y < view.lines:
                self._rows[y] = _rendered(view, y)
        view.dirty.clear()
        return list(self._rows)

    def text(self) -> str:
        """The emulated terminal's screen as one text."""
        return "\n".join(self.rows())

    def wait_screen(
        self, condition: str | Callable[[Cli], bool], timeout: float | None = None
    ) -> re.Match[str] | None:
        """Read output until the screen shows `condition` (a regex, or a test of this Cli)."""
        check: Callable[[], re.Match[str] | bool | None]
        if isinstance(condition, str):
            pattern = re.compile(condition)
            check = lambda: pattern.search(self.text())  # noqa: E731
        else:
            check = lambda: condition(self)  # noqa: E731
        self._take_pending()
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            found = check()
            if found:
                return found if isinstance(found, re.Match) else None
            if time.monotonic() > deadline:
                raise AssertionError(f"waited for {condition!r}; the screen was:\n{self.text()}")
            try:
                self._feed(self.child.read_nonblocking(65536, timeout=0.1))
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF as error:
                if check():
                    continue
                raise AssertionError(
                    f"the client ended before {condition!r}; the screen was:\n{self.text()}"
                ) from error

    def _take_pending(self) -> None:
        """Feed what an earlier `expect` read but did not match, and forget it there: pexpect
        keeps it twice (its buffer, and the text its next `expect` returns as `before`),
        so clearing the buffer alone had the next `expect` feed it again, after the output
        read meanwhile (two cut sequences made one, such as `CSI ? 25 1 m`)."""
        pending = self.child.buffer
        self.child.buffer = ""
        self.child._before = self.child.buffer_type()
        if pending:
            self._feed(pending)

    def resize(self, rows: int, columns: int) -> None:
        """Change the terminal's size (the client gets SIGWINCH, as from a real window)."""
        self.view.resize(rows, columns)
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    # -- the output as a stream --------------------------------------------------------

    def expect(self, pattern: str | list[str], timeout: float | None = None) -> int:
        """Wait for a regex (or one of several); returns which matched."""
        try:
            index = int(self.child.expect(pattern, timeout=-1 if timeout is None else timeout))
        except (pexpect.TIMEOUT, pexpect.EOF) as error:
            raise self._failure(f"waited for {pattern!r}") from error
        self._keep()
        return index

    def expect_text(self, text: str, timeout: float | None = None) -> None:
        """Wait for a literal text."""
        self.expect(re.escape(text), timeout)

    def send(self, line: str) -> None:
        """Type a line and Enter."""
        self.child.send(line + "\r")

    def quit(self, timeout: float = WAIT_S) -> None:
        """Type `quit`: the client exits with status 0."""
        self.send("quit")
        status = self.wait(timeout)
        if status != 0:
            raise self._failure(f"the client exited with status {status}")

    def quit_after_the_game(self) -> None:
        """At the prompt after a game's end, quit: the client exits with status 0."""
        self.expect(r"rematch or quit > ")
        self.quit()

    def interrupt(self) -> None:
        """Ctrl-C (the terminal sends SIGINT)."""
        self.child.send("\x03")

    def end_input(self) -> None:
        """Ctrl-D."""
        self.child.send("\x04")

    def wait(self, timeout: float = WAIT_S) -> int:
        """Wait for the process to end; its exit status (128+N for signal N)."""
        try:
            self.child.expect(pexpect.EOF, timeout=timeout)
            status = self.process.wait(timeout)
        except (pexpect.TIMEOUT, subprocess.TimeoutExpired) as error:
            raise self._failure("the client did not exit") from error
        self._keep()
        return 128 - status if status < 0 else status

    def _failure(self, what: str) -> AssertionError:
        """A failure saying `what` went wrong, with the end of the screen (kept first) and,
        if the client still runs, where each of its threads was (`_stacks`)."""
        self._keep()
        screen = self.screen()[-3000:]
        return AssertionError(f"{what}; the screen was:\n{screen}{self._stacks()}")

    def _stacks(self) -> str:
        """A client still running, stopped by SIGABRT: what Python's fault handler printed
        (`PYTHONFAULTHANDLER`), the stack of each of its threads."""
        if self.process.poll() is not None:
            return ""
        printed = len(self._seen)
        self.process.send_signal(signal.SIGABRT)
        with contextlib.suppress(pexpect.TIMEOUT):
            self.child.expect(pexpect.EOF, timeout=STACKS_S)
        self._keep()
        stacks = ANSI.sub("", "".join(self._seen[printed:]))[-6000:]
        return f"\n\nits threads when it was stopped (SIGABRT):\n{stacks}"

    def screen(self) -> str:
        """Everything the process printed so far, without colour codes."""
        return ANSI.sub("", "".join(self._seen))

    def close(self) -> None:
        """End the process if it still runs, and close the terminal."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        with contextlib.suppress(OSError):
            os.close(self.master)


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[list[Cli]]:
    """Clients started by the test; killed afterwards and checked for tracebacks."""
    started: list[Cli] = []
    yield started
    for client in started:
        client.close()
    for client in started:
        assert "Traceback" not in client.screen(), client.screen()[-3000:]


def run(
    clients: list[Cli], args: Sequence[str], home: Path, stack: Stack | None, **kwargs: object
) -> Cli:
    """Start a client and register it for clean-up and the traceback check."""
    client = Cli(args, home, stack, **kwargs)  # type: ignore[arg-type]
    clients.append(client)
    return client


Launch = Callable[..., Cli]


@pytest.fixture
def launch(stack: Stack, clients: list[Cli], tmp_path: Path) -> Launch:
    """Start clients on the module's stack in the test's home: `launch(args, **kwargs)`
    (see `run`)."""

    def start(args: Sequence[str], **kwargs: object) -> Cli:
        return run(clients, args, tmp_path, stack, **kwargs)

    return start


def game_id_of(client: Cli) -> str:
    """The game id the client announced ("Game <id>: you play ...")."""
    match = re.search(r"Game (\S+): you play", client.screen())
    assert match, client.screen()[-2000:]
    return match.group(1)


class Player:
    """A client's player as the APIs show it, for a test that plays through the client.

    Reads the identity the client registered in its home folder; asks the matchmaker for
    the game as that player sees it, and the engine for an action to type (the request the
    `hint` command makes, with a short budget).
    """

    def __init__(self, stack: Stack, home: Path) -> None:
        identity = Store(home).identity(stack.address)
        assert identity is not None, f"no identity in {home}"
        self.connection = Connection(Addresses(stack.engine, stack.address), identity.token)

    def game(self, game_id: str) -> matchmaker_pb2.GameView:
        """The game as the player sees it now."""
        return self.connection.get_game(game_id)

    def suggest(self, view: matchmaker_pb2.GameView, seconds: float = 0.1) -> str:
        """An action for the player's side."""
        return self.connection.suggest(view.state, view.your_side, seconds).notation

    def close(self) -> None:
        """Close the channels."""
        self.connection.close()


def echoed(cli: Cli, text: str, before: int) -> None:
    """Wait until the client has printed `text` more than `before` times."""
    cli.wait_screen(lambda c: c.screen().count(text) > before)


AFTER = re.compile(r"rematch or quit [>›]\s*$")  # the prompt after the game


def prompt_row(cli: Cli) -> str:
    """The row the cursor is on: the input line (full screen) or the prompt (line mode)."""
    return cli.rows()[cli.view.cursor.y]


def play_out(
    cli: Cli, player: Player, game_id: str, prompt: str, *, timeout: float = 900.0
) -> matchmaker_pb2.GameView:
    """Play the player's side of a game to its end by typing into the client: each time the
    game waits for the player and the client shows its `prompt` (a regex for the prompt
    row), the engine's suggestion is typed, and the client's own account of it ("You: ...")
    awaited. Returns the finished game."""
    ready = re.compile(prompt)
    deadline = time.monotonic() + timeout
    typed = 0
    while time.monotonic() < deadline:
        view = player.game(game_id)
        if view.status == matchmaker_pb2.GAME_STATUS_FINISHED:
            return view
        if view.your_side not in view.state.to_act:
            time.sleep(0.05)  # the bot (or a client's own `end`) acts: look again
            continue
        cli.wait_screen(lambda c: bool(ready.search(prompt_row(c)) or AFTER.search(c.text())))
        if player.game(game_id).version != view.version:
            continue  # the game moved on meanwhile (the client acted by itself, or it ended)
        echo = f"You: {player.suggest(view)}"
        before = cli.screen().count(echo)
        cli.send(echo.removeprefix("You: "))
        echoed(cli, echo, before)
        typed += 1
        assert "error:" not in cli.screen() and "✗" not in cli.screen(), cli.screen()[-3000:]
    raise AssertionError(f"the game did not end in {timeout:g} s ({typed} actions typed)")
