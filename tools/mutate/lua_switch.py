"""A pytest plugin for Lua mutation runs: the matchmaker loads one script mutated.

`python -m tools.mutate.lua` runs a mutant's tests with `-p tools.mutate.lua_switch` and
`WARGAME_LUA_MUTANT=<script name>=<file>`: every `Scripts` made in the test process then
registers that file's text for the script (on the tests' real redis-server) and the
others unchanged. Without the variable the plugin changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VARIABLE = "WARGAME_LUA_MUTANT"


def pytest_configure(config: pytest.Config) -> None:
    """Switch the named script's source for the mutated text."""
    mutant = os.environ.get(VARIABLE, "")
    if not mutant:
        return
    name, _, path = mutant.partition("=")
    text = Path(path).read_text(encoding="utf-8")

    from matchmaker import scripts

    if name not in scripts.NAMES:
        raise pytest.UsageError(f"{VARIABLE} names no script: {name!r}")
    unchanged = scripts.source

    def source(script: str) -> str:
        return text if script == name else unchanged(script)

    scripts.source = source  # type: ignore[assignment]
