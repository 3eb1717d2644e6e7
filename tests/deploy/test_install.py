"""`make setup`'s install step: quiet while it works, loud and whole when pip fails."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from tests.servers import ROOT, user_environment


def _install() -> ModuleType:
    spec = importlib.util.spec_from_file_location("install", ROOT / "deploy/local/install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install = _install()
NOISE = "WARNING: Location 'file:///opt/pypi-more/simple/ruff/' is ignored: it is neither a file"


def _fake_pip(*lines: str, status: int) -> list[str]:
    script = f"import sys; print(*{list(lines)!r}, sep='\\n'); sys.exit({status})"
    return [sys.executable, "-c", script]


def test_a_failure_shows_pip_whole_less_the_machines_noise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    step = install.Step("installing 3 pinned packages")
    with pytest.raises(SystemExit) as stopped:
        install.run(
            step,
            _fake_pip(
                "Collecting chess==0.0.999", NOISE, "ERROR: No matching distribution", status=1
            ),
        )
    assert stopped.value.code == 1
    out, err = capsys.readouterr()
    assert "Collecting chess==0.0.999\nERROR: No matching distribution\n" in err
    *shown, last = err.splitlines()
    assert "is ignored" not in out + "\n".join(shown)
    assert last.startswith("setup: installing 3 pinned packages failed: `")
    assert last.endswith("exited with status 1; its output is above")


def test_success_prints_one_line_per_step_and_follows_the_packages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    step = install.Step("installing 3 pinned packages")
    followed: list[str] = []
    kept = install.run(
        step,
        _fake_pip(
            NOISE,
            "Collecting grpcio-tools==1.85.1 (from wargame==0.1.0)",
            "Processing /opt/pypi/files/pytest_xdist-3.8.0-py3-none-any.whl (from wargame==0.1.0)",
            status=0,
        ),
        followed.append,
    )
    step.finish("installed 3 pinned packages")
    assert kept == followed and len(kept) == 2  # the noise never reaches the step
    names = [found.group(1) or found.group(2) for found in map(install.PACKAGE_LINE.match, kept)]
    assert names == ["grpcio-tools", "pytest_xdist"]
    out, err = capsys.readouterr()
    assert err == ""
    first, second = out.splitlines()  # not a terminal: the step line, then its summary
    assert first == "setup: installing 3 pinned packages ..."
    assert second.startswith("setup: installed 3 pinned packages (")


def test_the_bytecode_of_what_is_installed_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Starts read bytecode even where PYTHONDONTWRITEBYTECODE keeps Python from writing it."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "installed_module.py").write_text("ANSWER = 42\n")
    install.compile_bytecode(venv)
    tag = sys.implementation.cache_tag
    assert (Path(site) / "__pycache__" / f"installed_module.{tag}.pyc").is_file()
    assert (ROOT / "engine_service" / "__pycache__" / f"main.{tag}.pyc").is_file()
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("setup: compiled the bytecode of the project and its packages (")


@pytest.mark.parametrize("collects", [True, False])
def test_the_tests_are_compiled_as_pytest_runs_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    collects: bool,
) -> None:
    """Setup leaves each test module compiled with its asserts rewritten, even where
    PYTHONDONTWRITEBYTECODE is set; a test that does not even load leaves it to the run."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "test_sample.py").write_text(
        "def test_one():\n    assert 1 + 1 == 2\n" if collects else "def test_one(:\n"
    )
    monkeypatch.setattr(install, "ROOT", tmp_path)
    install.cache_test_bytecode(Path(sys.executable).parent.parent)
    compiled = list((tmp_path / "__pycache__").glob("test_sample.*-pytest-*.pyc"))
    last = capsys.readouterr().out.splitlines()[-1]
    if collects:
        assert len(compiled) == 1
        assert last.startswith("setup: compiled the tests as pytest runs them (")
    else:
        assert compiled == []
        assert last.startswith("setup: left the tests' compiling to their first run (")


def test_without_a_c_compiler_the_rules_stay_pure_python_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An extension left by an earlier build would shadow the source it was built from.
    stale = tmp_path / "engine_service" / "rules" / "war" / "legal.cpython-311-x86_64-linux-gnu.so"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    monkeypatch.setattr(install, "ROOT", tmp_path)
    monkeypatch.setattr(install.sysconfig, "get_config_var", lambda name: "no-such-cc -pthread")
    install.compile_hot_path(tmp_path / "venv")
    out, err = capsys.readouterr()
    assert (out, err) == ("setup: the rules run as pure Python (no C compiler `no-such-cc`)\n", "")
    assert not stale.exists()


def _planned(target: str, venv: Path) -> list[str]:
    """The commands `make -n TARGET` would run for a fresh virtual environment."""
    make = shutil.which("make")
    assert make is not None, "make is not installed"
    done = subprocess.run(
        [make, "-n", target, f"VENV={venv}", "RUN_DIR=nowhere"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
        env={**user_environment(), "HOME": str(venv.parent)},
    )  # fmt: skip
    return done.stdout.splitlines()


def test_a_players_make_play_installs_no_developer_tools(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    for target in ("play", "run"):
        planned = "\n".join(_planned(target, venv))
        assert f"install.py --venv {venv} --for play" in planned
        assert "--for dev" not in planned and "npm" not in planned
    developer = "\n".join(_planned("test", venv))
    assert f"install.py --venv {venv} --for dev" in developer
    assert f"install.py --venv {venv} --only hot-path" in developer
    # What a player's setup installs: the servers' extra, none of the developers' tools.
    assert install.EXTRAS["play"] == "server"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    server = {line.partition("==")[0] for line in extras["optional-dependencies"]["server"]}
    assert not server & {"grpcio-tools", "mypy", "pytest", "ruff", "pyte", "build"}


def test_the_hot_path_is_built_again_when_a_module_it_imports_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    battle = tmp_path / "engine_service" / "rules" / "battle"
    battle.mkdir(parents=True)
    extension = battle / "play.cpython-311-x86_64-linux-gnu.so"
    files = {
        "setup.py": "",
        "engine_service/rules/battle/play.py": "from engine_service.rules.battle import pieces\n",
        "engine_service/rules/battle/pieces.py": "import engine_service.rules.board\n",
        "engine_service/rules/board.py": "from typing import Final\n",
        "engine_service/rules/battle/describe.py": "",  # neither compiled nor imported
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    extension.write_bytes(b"")
    monkeypatch.setattr(install, "ROOT", tmp_path)

    sources = install.hot_path_sources([extension])
    assert sources == {tmp_path / name for name in files} - {battle / "describe.py"}

    def age(path: Path, seconds: int) -> None:
        os.utime(path, (seconds, seconds))

    for name in files:
        age(tmp_path / name, 1_000)
    age(extension, 2_000)
    assert install.hot_path_is_current()
    age(battle / "describe.py", 3_000)
    assert install.hot_path_is_current()
    age(tmp_path / "engine_service/rules/board.py", 3_000)  # imported, not compiled
    assert not install.hot_path_is_current()
