"""The pseudo-terminal harness itself (`cli_support.Cli`): what a program writes reaches the
emulated screen and the transcript once, however a test mixes `expect` and `wait_screen`."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from tests.system.cli_support import WAIT_S, Cli, run

pytestmark = [pytest.mark.system]

# Writes its output in three parts, each when a line is typed (echo off): the first ends
# inside a cursor sequence, which the second completes before it begins a colour that the
# third completes. A part left unread by `expect` and taken by `wait_screen` must not be
# read again by the next `expect` (it would make `CSI ? 25 1 m` of two cut sequences).
PARTS = r"""
import sys, termios
attributes = termios.tcgetattr(0)
attributes[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, attributes)
for part in ("ready hello world\x1b[?25", "l middle\x1b[0;", "1m done\r\n"):
    sys.stdout.write(part)
    sys.stdout.flush()
    sys.stdin.readline()
"""


def test_output_read_by_wait_screen_is_not_read_again_by_expect(
    clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["-c", PARTS], tmp_path, None, program=sys.executable, ascii_only=False)
    cli.expect("hello")  # " world" and the cut sequence are left for the next reading
    cli.send("")
    cli.wait_screen("middle")
    cli.send("")
    cli.expect("done")
    cli.send("")
    assert cli.wait() == 0
    assert cli.rows()[0] == "ready hello world middle done", cli.rows()[0]
    assert cli.screen().count("world") == 1, cli.screen()


# Never ends: blocked in a function of its own, with a second thread blocked too.
STUCK = r"""
import threading, time
def stuck_in_the_background():
    time.sleep(3600)
def stuck_at_the_front():
    threading.Thread(target=stuck_in_the_background, daemon=True).start()
    print("started", flush=True)
    time.sleep(3600)
stuck_at_the_front()
"""


def test_a_client_that_does_not_exit_is_shown_with_where_each_thread_was(
    clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["-c", STUCK], tmp_path, None, program=sys.executable, ascii_only=False)
    cli.expect("started")
    with pytest.raises(AssertionError) as failure:
        cli.wait(timeout=0.5)
    message = str(failure.value)
    assert message.startswith("the client did not exit; the screen was:\nstarted"), message
    assert "stuck_at_the_front" in message and "stuck_in_the_background" in message, message
    assert cli.process.wait(WAIT_S) == -signal.SIGABRT  # stopped once it had shown them
