"""`make play`: one command starts the local stack and opens a game against the bot.

The stack runs on free ports with its own run folder (the variables `make run` reads), so
the test never touches a stack a developer runs; `make stop` ends exactly what it started.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import ROOT, free_port
from tests.system.cli_support import Cli, clients, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-make-play")]
__all__ = ["clients"]


@pytest.fixture
def local_stack(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Variables for a private local stack; stopped afterwards."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed")
    variables = {
        "WARGAME_ENGINE": f"127.0.0.1:{free_port()}",
        "WARGAME_MATCHMAKER": f"127.0.0.1:{free_port()}",
        "WARGAME_LOCAL_REDIS_PORT": str(free_port()),
        "RUN_DIR": str(tmp_path / "run"),
    }
    yield variables
    subprocess.run(
        [make, "-s", "stop", f"RUN_DIR={variables['RUN_DIR']}"],
        cwd=ROOT, env={**os.environ, **variables}, capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def test_make_play_starts_the_stack_and_a_game_against_the_bot(
    clients: list[Cli], tmp_path: Path, local_stack: dict[str, str]
) -> None:
    run_dir = f"RUN_DIR={local_stack['RUN_DIR']}"
    home = tmp_path / "home"
    make = run(
        clients, ["-s", "play", run_dir, "GAME=war"], home, None, ascii_only=False,
        env=local_stack, program="make", cwd=ROOT, timeout=120,
    )  # fmt: skip
    make.expect_text("the local stack runs", timeout=120)
    make.expect_text("Registered as")
    make.expect(r"Game \S+: you play (South|North)")
    make.expect_text("♚")  # the board, in Unicode and colours on a terminal
    make.expect(r"(South|North) › |waiting for (South|North) \(bot\)")
    make.send("quit")
    make.expect_text("you left game")
    assert make.wait(60) == 0
    # The stack keeps running for the next `make play` (and `make stop` ends it).
    again = run(
        clients, ["-s", "play", run_dir, "GAME=napoleonic"], home, None, ascii_only=False,
        env=local_stack, program="make", cwd=ROOT, timeout=60,
    )  # fmt: skip
    again.expect_text("the local stack already runs")
    again.expect(r"Game \S+: you play (Red|Black)")
    again.expect(r"Red · movement › |waiting for Red \(bot\)")
    again.interrupt()
    again.expect_text("you left game")
