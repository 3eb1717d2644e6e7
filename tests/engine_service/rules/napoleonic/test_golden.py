"""Golden transcripts: scripted games' full event logs against the stored text files.

The test never writes: after an intended change, regenerate on purpose with
`.venv/bin/python -m tests.engine_service.rules.napoleonic.golden --regenerate` and review
the diff.
"""

from __future__ import annotations

import difflib

import pytest

from tests.engine_service.rules.napoleonic.golden import SCRIPTS, path_of, transcript


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_golden_transcript(name: str) -> None:
    stored = path_of(name).read_text(encoding="utf-8")
    fresh = transcript(name)
    if fresh != stored:
        diff = "".join(
            difflib.unified_diff(
                stored.splitlines(keepends=True),
                fresh.splitlines(keepends=True),
                "stored",
                "now",
            )
        )
        pytest.fail(
            f"transcript {name} differs from {path_of(name)}; if the change is intended, "
            "regenerate with `.venv/bin/python -m tests.engine_service.rules.napoleonic.golden "
            f"--regenerate`:\n{diff}"
        )


def test_the_three_required_kinds_of_game_are_scripted() -> None:
    assert {"standard", "terrain", "attack_at_dawn"} <= set(SCRIPTS)
