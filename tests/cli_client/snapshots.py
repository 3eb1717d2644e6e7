"""Stored text snapshots of drawings: compared exactly, rewritten only on purpose.

Set WARGAME_UPDATE_SNAPSHOTS=1 to (re)write the files under tests/cli_client/snapshots/;
without it a missing or different snapshot fails the test with a diff.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from rich.text import Text

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE_VARIABLE = "WARGAME_UPDATE_SNAPSHOTS"


def styled_line(line: Text) -> str:
    """A line with each styled run written as `[style]text[/]` (runs do not overlap here)."""
    out: list[str] = []
    position = 0
    for span in sorted(line.spans, key=lambda span: span.start):
        if span.start > position:
            out.append(line.plain[position : span.start])
        out.append(f"[{span.style}]{line.plain[span.start : span.end]}[/]")
        position = max(position, span.end)
    out.append(line.plain[position:])
    return "".join(out)


def as_text(lines: list[Text], *, styled: bool = False) -> str:
    """Lines as one string: plain text, or with their styles when the colours matter."""
    return "\n".join(styled_line(line) if styled else line.plain for line in lines) + "\n"


def check(name: str, actual: str) -> None:
    """Compare with the stored snapshot `name` (or write it when updating on purpose)."""
    path = SNAPSHOTS / name
    if os.environ.get(UPDATE_VARIABLE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    if not path.exists():
        raise AssertionError(f"no snapshot {path}; create it on purpose with {UPDATE_VARIABLE}=1")
    expected = path.read_text()
    if expected != actual:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{name} (stored)",
                f"{name} (drawn now)",
            )
        )
        hint = f"regenerate with {UPDATE_VARIABLE}=1 if intended"
        raise AssertionError(f"drawing differs from {path} ({hint}):\n{diff}")
