"""`make setup` puts `wargame` on the PATH of new shells, the way pipx does.

Every test has a home of its own (HOME under tmp_path) and a bare PATH, as a new user's
shell would: `make commands` (the step `make setup`, `make run` and `make play` take) links
the commands into ~/.local/bin and adds that folder to the shell's start-up files; then a
new interactive shell, and a new login shell, find the README's commands as written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.system
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"
COMMANDS = ("wargame", "wargame-engine", "wargame-matchmaker", "wargame-web")


def _environment(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": BARE_PATH, "SHELL": "/bin/bash", "LANG": "C.UTF-8"}


def _make_commands(home: Path) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    return subprocess.run(
        [make, "-s", "commands"],
        cwd=ROOT,
        env=_environment(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _new_shell(home: Path, flag: str, script: str) -> subprocess.CompletedProcess[str]:
    """`bash -i -c script` (a new terminal) or `bash -l -c script` (a login), in a bare env."""
    return subprocess.run(
        ["/bin/bash", flag, "-c", script],
        cwd=home,
        env=_environment(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_new_shells_find_the_readme_commands_after_setup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    before = _new_shell(home, "-i", "command -v wargame")
    assert before.returncode != 0  # not there yet: the test starts from a bare shell

    linked = _make_commands(home)
    assert linked.returncode == 0, linked.stdout + linked.stderr
    lines = linked.stdout.strip().splitlines()
    assert len(lines) == 1, linked.stdout  # one clear line about what changed
    assert lines[0].startswith(
        "setup: linked wargame, wargame-engine, wargame-matchmaker, wargame-web into ~/.local/bin; "
        "put ~/.local/bin on PATH in ~/.bashrc"
    ), lines[0]
    for name in COMMANDS:
        link = home / ".local" / "bin" / name
        assert os.readlink(link) == str(ROOT / ".venv" / "bin" / name)

    for flag in ("-i", "-l"):
        shell = _new_shell(
            home,
            flag,
            "wargame --help && wargame rules --help && wargame-matchmaker serve --help "
            "&& wargame-engine serve --help && wargame-web serve --help",
        )
        assert shell.returncode == 0, shell.stdout + shell.stderr
        assert shell.stdout.startswith("usage: wargame [-h]")
        assert "usage: wargame-matchmaker serve" in shell.stdout
        assert "usage: wargame-engine serve" in shell.stdout
        assert "usage: wargame-web serve" in shell.stdout

    again = _make_commands(home)
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""
    assert (home / ".bashrc").read_text().count(str(home / ".local" / "bin")) == 1


def test_a_link_into_another_checkout_moves_here_and_other_files_stay(tmp_path: Path) -> None:
    home = tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "wargame").symlink_to("/elsewhere/wargame-clone/.venv/bin/wargame")
    mine = bin_dir / "wargame-engine"
    mine.write_text("#!/bin/sh\necho my own engine script\n")

    result = _make_commands(home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.readlink(bin_dir / "wargame") == str(ROOT / ".venv" / "bin" / "wargame")
    assert mine.read_text() == "#!/bin/sh\necho my own engine script\n"
    linked = "setup: linked wargame, wargame-matchmaker, wargame-web into ~/.local/bin"
    assert linked in result.stdout
    assert result.stderr.strip() == (
        "setup: warning: ~/.local/bin/wargame-engine exists and is not a link: left alone; "
        f"run {ROOT / '.venv' / 'bin' / 'wargame-engine'} instead"
    )
