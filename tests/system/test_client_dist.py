"""The client alone, as a player installs it: `make dist`'s wheel in a fresh virtual
environment brings the `wargame` command and what it imports, not the servers' packages nor
the developers' tools, and plays a game against a local stack.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.servers import ROOT
from tests.system.cli_support import WAR_CITADEL, Cli, Stack, run

pytestmark = [pytest.mark.system, pytest.mark.slow, pytest.mark.xdist_group("client-dist")]

# What the client imports (pyproject.toml's dependencies) and what those bring.
CLIENT_PACKAGES = {
    "grpcio", "grpcio-status", "protobuf", "googleapis-common-protos", "rich",
    "prompt-toolkit", "cryptography", "cffi", "pycparser", "markdown-it-py", "mdurl",
    "pygments", "wcwidth", "typing-extensions",
}  # fmt: skip
# The servers' packages and the developers' tools: none of them may come with the client.
NOT_FOR_PLAYERS = {
    "redis", "hiredis", "structlog", "prometheus-client", "openskill",
    "grpcio-health-checking", "grpcio-reflection", "grpcio-tools", "mypy", "mypy-protobuf",
    "pytest", "ruff", "pexpect", "pyte", "build", "buf-bin",
}  # fmt: skip


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the built wheel alone (with its dependencies)."""
    folder = tmp_path_factory.mktemp("client-dist")
    # One build at a time in the source tree (its build/ and egg-info are shared): the
    # `xdist_group` holds this module to one worker only while pytest-xdist can mark groups
    # (under pytest 9.2 xdist 3.8 cannot: pytest-dev/pytest-xdist#1386, hence the pin to
    # 9.1). The lock lives in the run's temporary folder, which every worker shares.
    with (tmp_path_factory.getbasetemp().parent / "client-dist.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", str(folder / "dist"),
             str(ROOT)],
            check=True, capture_output=True, cwd=ROOT,
        )  # fmt: skip
    (wheel,) = (folder / "dist").glob("wargame-*.whl")
    venv.create(folder / "venv", with_pip=True)
    python = folder / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-c", str(ROOT / "constraints.txt"), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    return folder / "venv"


def test_the_wheel_brings_only_what_the_client_imports(client_venv: Path) -> None:
    listed = subprocess.run(
        [str(client_venv / "bin" / "python"), "-m", "pip", "list", "--format", "json",
         "--disable-pip-version-check"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    installed = {_normal(item["name"]) for item in json.loads(listed.stdout)}
    installed -= {"pip", "setuptools", "wargame"}
    assert installed <= CLIENT_PACKAGES, installed - CLIENT_PACKAGES
    assert not installed & NOT_FOR_PLAYERS
    # The wheel declares the servers' packages as the `server` extra, for operators.
    requires = subprocess.run(
        [str(client_venv / "bin" / "python"), "-c",
         "import importlib.metadata as m; print('\\n'.join(m.requires('wargame')))"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()  # fmt: skip
    server = {_normal(line.split("==")[0]) for line in requires if 'extra == "server"' in line}
    assert {"redis", "structlog", "grpcio-health-checking"} <= server


def test_the_installed_client_plays_a_game(
    client_venv: Path, stack: Stack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "war", "--vs", "bot", "--side", "south", "--setup", WAR_CITADEL]
    cli = run(clients, args, tmp_path, stack, program=str(client_venv / "bin" / "wargame"))
    cli.expect_text("Registered as")
    cli.expect(r"South > ")
    cli.send("Mj1xj10")
    cli.expect_text("You: Mj1xj10")
    cli.expect_text("Game over: you win")
    cli.quit_after_the_game()
