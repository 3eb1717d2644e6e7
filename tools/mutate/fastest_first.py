"""A pytest plugin for mutation runs: a mutant's quickest tests first.

mutmut runs each mutant's tests with `-x`, so the first failure ends the run; ordering the
tests by the durations mutmut measured (`mutmut-stats.json`, beside the mutated copy) lets a
killed mutant fail as early as it can. Loaded with `-p tools.mutate.fastest_first`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

STATS = Path("mutmut-stats.json")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sort the collected tests by their measured duration, quickest first."""
    if not STATS.exists():
        return
    durations: dict[str, float] = json.loads(STATS.read_text(encoding="utf-8")).get(
        "duration_by_test", {}
    )
    items.sort(key=lambda item: durations.get(item.nodeid, 0.0))
