"""Every error a user can meet, produced on purpose: one readable line, never a traceback.

Also the commands' help, plain ASCII when the output is not a terminal, and colours and
Unicode when it is.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.system.cli_support import WARGAME, Cli, Stack, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-errors")]
COMMANDS = ("games", "rules", "play", "watch", "resume", "record", "replay", "leaderboard")


def one_error_line(client: Cli, pattern: str, status: int = 1) -> str:
    """Wait for the client to end with exactly one error line matching `pattern`."""
    assert client.wait() == status
    screen = client.screen()
    errors = [line for line in screen.splitlines() if "error:" in line]
    assert len(errors) == 1, screen
    assert re.search(pattern, errors[0]), errors[0]
    assert "Traceback" not in screen
    return errors[0]


def test_unreachable_servers(clients: list[Cli], tmp_path: Path, nowhere: str) -> None:
    play = run(
        clients, ["play", "war", "--matchmaker", nowhere, "--engine", nowhere], tmp_path, None
    )
    line = one_error_line(play, "cannot reach the matchmaker")
    assert (
        line.strip()
        == f"wargame: error: cannot reach the matchmaker at {nowhere} — start it with `make run`"
    )
    games = run(clients, ["games", "--engine", nowhere], tmp_path, None)
    one_error_line(
        games, re.escape(f"cannot reach the rules engine at {nowhere} — start it with `make run`")
    )


@pytest.mark.parametrize(
    ("args", "pattern", "status"),
    [
        (["play", "chess"], r"unknown game 'chess'.*\(see `wargame games`\)", 1),
        (["play", "war", "-o", "nope=1"], r"unknown option 'nope'.*\(see `wargame games`\)", 1),
        (["play", "war", "-o", "compulsion=sometimes"], r"compulsion.*\(see `wargame games`\)", 1),
        (["play", "napoleonic", "--setup", "not a set-up"], r"error: bad set-up: ", 1),
        (["play", "war", "--clock", "ten"], r"'ten' is not a time control like 10\+5", 2),
        (["play", "war", "-o", "novalue"], r"option 'novalue' is not name=value", 2),
        (["play"], r"play needs a GAME", 2),
        (["resume"], r"no game to resume: give its id", 1),
        (["watch", "no-such-game"], r"no-such-game", 1),
        (["record", "no-such-game"], r"no-such-game", 1),
        (["rules", "war", "--engine", "nonsense"], r"'nonsense' is not host:port", 2),
        (["play", "war", "--join", "NOPE123"], r"error: .*(NOPE123|invite|no game)", 1),
        (
            ["play", "war", "--vs", "bot", "--rated"],
            r"^wargame: error: games against the bot are never rated: leave out --rated, or "
            r"play a person \(--vs human, --invite or --queue\)",
            2,
        ),
        (["play", "war", "--invite", "--level", "1"], r"--level is for games against the bot", 2),
        (["play", "war", "--level", "9"], r"argument --level: invalid choice: 9", 2),
    ],
)
def test_bad_requests_are_one_line(
    stack: Stack, clients: list[Cli], tmp_path: Path, *, args: list[str], pattern: str, status: int
) -> None:
    one_error_line(run(clients, args, tmp_path, stack), pattern, status)


def test_replaying_bad_files(stack: Stack, clients: list[Cli], tmp_path: Path) -> None:
    missing = run(clients, ["replay", str(tmp_path / "missing.record")], tmp_path, stack)
    one_error_line(missing, r"cannot read .*missing\.record")
    garbage = tmp_path / "garbage.record"
    garbage.write_text("this is not a record\n")
    bad = run(clients, ["replay", str(garbage)], tmp_path, stack)
    one_error_line(bad, r"wargame: error: \S")


def test_help_in_a_terminal(clients: list[Cli], tmp_path: Path) -> None:
    top = run(clients, ["--help"], tmp_path, None, ascii_only=False)
    assert top.wait() == 0
    for command in COMMANDS:
        assert command in top.screen()
    play = run(clients, ["play", "--help"], tmp_path, None, ascii_only=False)
    assert play.wait() == 0
    assert "usage: wargame play" in play.screen() and "WARGAME_MATCHMAKER" in play.screen()


def test_not_a_terminal_means_plain_ascii(stack: Stack, tmp_path: Path) -> None:
    environment = {
        **os.environ,
        "WARGAME_ENGINE": stack.engine,
        "WARGAME_HOME": str(tmp_path),
        "LANG": "C.UTF-8",
    }
    for game in ("war", "battle", "napoleonic"):
        done = subprocess.run(
            [WARGAME, "rules", game], env=environment, capture_output=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.isascii() and b"\x1b[" not in done.stdout
        assert b"Traceback" not in done.stderr


def test_a_terminal_gets_colours_and_unicode(
    stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    cli = run(clients, ["play", "war", "--side", "south"], tmp_path, stack, ascii_only=False)
    # The full-screen view, as the emulated terminal shows it once it is all there.
    cli.wait_screen(lambda c: c.rows()[-1].startswith("South ›"))
    cli.wait_screen(lambda c: all(mark in c.text() for mark in ("♚", "⌂ Citadel", "◀")))
    raw = "".join(cli._seen)
    assert "\x1b[" in raw and "38;2;" in raw  # truecolour styles
    cli.quit()


def test_the_version_and_a_mistyped_command(clients: list[Cli], tmp_path: Path) -> None:
    shown = run(clients, ["--version"], tmp_path, None, ascii_only=False, size=(24, 80))
    assert shown.wait() == 0
    assert re.fullmatch(r"wargame \d+\.\d+\.\d+\S*", shown.text().strip()), shown.text()
    typo = run(clients, ["plya", "war"], tmp_path, None, ascii_only=False, size=(24, 80))
    one_error_line(typo, r"no such choice 'plya': did you mean `play`\?", status=2)
    assert "choose from" not in typo.text()
