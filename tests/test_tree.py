"""The tree as committed: no file keeps the markers of a merge conflict left unresolved.

A conflict inside a docstring or a Markdown file still imports and renders, so neither the
linters nor the rest of the suite would notice it. The files are the ones git tracks (the
working tree's, so an uncommitted resolution counts); a copy without `.git` reads every file
under the root but the virtual environment and the run directory.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(rb"^(<{7}|>{7}) |^={7}$", re.MULTILINE)
SKIPPED = {".venv", "run", "node_modules", ".git"}


def _tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=False
    )
    if listed.returncode == 0:
        return [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    return [
        path
        for path in ROOT.rglob("*")
        if path.is_file() and not SKIPPED & set(path.relative_to(ROOT).parts)
    ]


def test_no_file_keeps_a_merge_conflict() -> None:
    conflicted = []
    for path in _tracked():
        if not path.is_file():
            continue
        found = MARKER.search(path.read_bytes())
        if found:
            line = path.read_bytes()[: found.start()].count(b"\n") + 1
            conflicted.append(f"{path.relative_to(ROOT)}:{line}")
    assert not conflicted, f"merge conflict markers left in {conflicted}"
