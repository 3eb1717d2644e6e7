"""`make play`: one command starts the local stack and opens a game against the bot.

The stack runs on free ports set with the README's own variables (WARGAME_*_LISTEN ...),
with its own run folder and home, so the test never touches a stack a developer runs; the
game the stack opens must talk to those addresses. `make stop` ends exactly what it started.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from matchmaker import keys
from tests.servers import ROOT, local_stack_variables, user_environment
from tests.system.cli_support import Cli, game_id_of, run

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-make-play")]


@pytest.fixture
def local_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Variables for a private local stack; stopped afterwards."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed")
    for name in [name for name in os.environ if name.startswith("WARGAME_")]:
        monkeypatch.delenv(name)  # tests/conftest.py's "nowhere" addresses: a user has none
    variables = local_stack_variables(tmp_path)
    yield variables
    subprocess.run(
        [make, "-s", "stop", f"RUN_DIR={variables['RUN_DIR']}"],
        cwd=ROOT, env={**user_environment(), **variables}, capture_output=True,
        timeout=120, check=False,
    )  # fmt: skip


def your_turn(cli: Cli, sides: str) -> str:
    """Wait until the game says which side the player has and then asks for its move.

    Whoever moves first (the bot may have moved already), the player's own prompt comes.
    """
    cli.expect(rf"Game \S+: you play ({sides})")
    match = re.search(rf"Game \S+: you play ({sides})", cli.screen())
    assert match, cli.screen()[-2000:]
    side = match.group(1)
    cli.expect(rf"{side}( · [^›\n]*)? › ")
    return side


def test_make_play_starts_the_stack_and_a_game_against_the_bot(
    clients: list[Cli], tmp_path: Path, local_stack: dict[str, str]
) -> None:
    run_dir = f"RUN_DIR={local_stack['RUN_DIR']}"
    home = tmp_path / "player"
    make = run(
        clients, ["-s", "play", run_dir, "GAME=war"], home, None, ascii_only=False,
        env=local_stack, program="make", cwd=ROOT, timeout=120,
    )  # fmt: skip
    make.expect_text("the local stack runs", timeout=120)
    make.expect_text(local_stack["WARGAME_ENGINE_LISTEN"])  # where the README's variable says
    make.expect_text("Registered as")
    your_turn(make, "South|North")
    # The board, in Unicode and colours on a terminal (a frame may reach it in parts: the
    # input line can come before the last of the board).
    make.wait_screen(lambda cli: "♚" in cli.screen())
    stack_redis = redis.Redis.from_url(local_stack["WARGAME_REDIS_URL"])
    assert stack_redis.exists(keys.game(game_id_of(make)))  # the game is the stack's
    make.send("quit")
    make.expect_text("you left game")
    stop_it = f"`make stop {run_dir}` stops it"
    make.expect_text("the local stack still runs (redis, engine, matchmaker, web)")
    make.expect_text(stop_it)
    assert make.wait(60) == 0
    # The stack keeps running, with its addresses, for the next `make play` without the
    # variables (and `make stop` ends it).
    folders = {name: local_stack[name] for name in ("HOME", "TMPDIR")}
    again = run(
        clients, ["-s", "play", run_dir, "GAME=napoleonic"], home, None, ascii_only=False,
        env=folders, program="make", cwd=ROOT, timeout=60,
    )  # fmt: skip
    again.expect_text("the local stack already runs")
    your_turn(again, "Red|Black")
    assert stack_redis.exists(keys.game(game_id_of(again)))
    again.interrupt()
    again.expect_text("you left game")
    # Leaving with Ctrl-C says what is left running too, and is no failure of make.
    again.expect_text("the local stack still runs (redis, engine, matchmaker, web)")
    again.expect_text(stop_it)
    assert again.wait(60) == 0
    assert "Error" not in again.screen() and "Interrupt" not in again.screen()


def welcome_of(cli: Cli) -> str:
    """The game's first line as printed (before the view opens), spaces collapsed."""
    match = re.search(r"Game \S+: you play [^\n]*?\.(?=\s*\n)", cli.screen())
    assert match, cli.screen()[-2000:]
    return " ".join(match.group(0).split())


def test_make_play_takes_the_bots_level_and_its_welcome_says_how_to_ask_for_another(
    clients: list[Cli], tmp_path: Path, local_stack: dict[str, str]
) -> None:
    make = shutil.which("make")
    assert make is not None
    run_dir = local_stack["RUN_DIR"]
    # A level the bot does not have is refused, saying which exist, before anything starts.
    refused = subprocess.run(
        [make, "-s", "play", f"RUN_DIR={run_dir}", "LEVEL=9"], cwd=ROOT,
        env={**user_environment(), **local_stack}, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "LEVEL=9 is no level of the bot: 1 (the easiest) to 5 (the strongest)" in (
        refused.stderr
    )
    assert not Path(run_dir, "stack.json").exists()
    home = tmp_path / "player"

    def make_play(*variables: str, sides: str, level: int) -> tuple[str, str]:
        """`make play` with these variables, quit once the panel shows the bot's seat at
        `level`: the side the player was given (of `sides`) and the welcome."""
        cli = run(
            clients, ["-s", "play", f"RUN_DIR={run_dir}", *variables], home, None,
            ascii_only=False, env=local_stack, program="make", cwd=ROOT, timeout=120,
            size=(40, 300),  # the welcome on one line, a long run folder and all
        )  # fmt: skip
        side = your_turn(cli, sides)
        welcome = welcome_of(cli)
        cli.wait_screen(rf"({sides})\s+bot, level {level}\b")  # the bot's seat, in the panel
        cli.quit(60)
        return side, welcome

    # Without LEVEL, the README's default for a first game: level 1; the welcome says how
    # to get the strongest with the command that started it.
    side, welcome = make_play(sides="South|North", level=1)
    assert welcome.endswith(
        f"you play {side} against the bot at level 1 of 5, the easiest "
        f"(`make play RUN_DIR={run_dir} LEVEL=5` is the strongest)."
    ), welcome
    # LEVEL and GAME together; the way back to the easiest keeps the game.
    side, welcome = make_play("GAME=battle", "LEVEL=3", sides="Attacker|Defender", level=3)
    assert welcome.endswith(
        f"you play {side} against the bot at level 3 of 5 "
        f"(`make play RUN_DIR={run_dir} GAME=battle LEVEL=1` is the easiest)."
    ), welcome
    # Without LEVEL again: the level last asked for, kept in the player's config file.
    make_play("GAME=battle", sides="Attacker|Defender", level=3)
