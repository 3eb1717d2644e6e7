"""The compiled hot path: built, its extensions are what Python loads; switched off
(`WARGAME_PURE_PYTHON=1`), every module comes from its source; and the suite runs in the
form it says it does (`make test` runs the tests of what is compiled, War's and Battle's
rules and the position texts, in each; `make test-slow` the engine's whole suite in pure
Python)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import engine_service
from engine_service import hotpath

pytestmark = pytest.mark.unit

PACKAGE = Path(engine_service.__file__).parent


def built_modules() -> dict[str, Path]:
    """Each module that has a compiled extension beside its source, by name."""
    found = {}
    for suffix in EXTENSION_SUFFIXES:
        for extension in PACKAGE.rglob(f"*{suffix}"):
            source = extension.with_name(extension.name.removesuffix(suffix) + ".py")
            if source.exists():
                dotted = source.relative_to(PACKAGE.parent).with_suffix("").parts
                found[".".join(dotted)] = extension
    return found


def loaded_from(modules: list[str], *, pure: bool) -> tuple[str, dict[str, str]]:
    """The form, and each module's file or 'extension', as a fresh interpreter imports them."""
    env = {k: v for k, v in os.environ.items() if k != "WARGAME_PURE_PYTHON"}
    if pure:
        env["WARGAME_PURE_PYTHON"] = "1"
    program = (
        "import importlib, json, sys\n"
        "from engine_service import hotpath\n"
        "modules = [importlib.import_module(m) for m in sys.argv[1:]]\n"
        "files = {m.__name__: hotpath.compiled(m) and 'extension' or m.__file__\n"
        "         for m in modules}\n"
        "print(json.dumps([hotpath.form(), files]))\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", program, *modules],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    )
    form, files = json.loads(answer.stdout)
    return form, files


def test_the_suite_runs_in_the_form_it_names() -> None:
    if hotpath.PURE_PYTHON or not built_modules():
        assert hotpath.form() == "pure Python"
    else:
        assert hotpath.form() == "compiled"


def test_built_extensions_are_loaded_and_the_switch_loads_the_sources() -> None:
    built = built_modules()
    if not built:
        pytest.skip("the hot path is not compiled here (make setup compiles it with a C compiler)")
    # War's and Battle's move generation and play are among them, and the position texts'
    # read and write path (setup.py's COMPILED).
    assert {
        "engine_service.rules.war.legal",
        "engine_service.rules.war.men",
        "engine_service.rules.battle.legal",
        "engine_service.rules.battle.play",
        "engine_service.rules.position",
        "engine_service.rules.war.setup",
        "engine_service.rules.war.start",
    } <= built.keys()
    names = sorted(built)

    form, files = loaded_from(names, pure=False)
    assert form == "compiled"
    assert files == dict.fromkeys(names, "extension")

    form, files = loaded_from(names, pure=True)
    assert form == "pure Python"
    assert {name: Path(files[name]) for name in names} == {
        name: PACKAGE.parent.joinpath(*name.split(".")).with_suffix(".py") for name in names
    }
