"""The rotating seed of the sampled random tests.

`make test` plays a sample of the random games (playouts): a few per option set, their
seeds drawn from one base seed that changes every day (the UTC date), so that day after day
the default suite covers many more games than one run does; `make test-slow` plays the
fixed, deeper sets. The base seed is in pytest's header and in the report of every failed
test that drew from it, and `WARGAME_TEST_SEED=<n>` plays the same games again.

Where things are: `base_seed` (the run's seed, set once for the run and its workers),
`sampled` (the seeds of a sample), `DEPTHS` (a test's sample and in-depth forms), and in
`tests/conftest.py` the fixture `playout_seed` a sampled test takes and the report hooks.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

ENV = "WARGAME_TEST_SEED"
# A random-games test's two forms: a sample in `make test`, the fixed games under -m slow
# (`@pytest.mark.parametrize("in_depth", seeds.DEPTHS)`).
DEPTHS = [pytest.param(False, id="sample"), pytest.param(True, id="depth", marks=pytest.mark.slow)]


def base_seed() -> int:
    """The run's base seed: `WARGAME_TEST_SEED`, else today's UTC date (20261129)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        return int(given)
    return int(datetime.now(UTC).strftime("%Y%m%d"))


def fix_for_the_run() -> int:
    """Set `WARGAME_TEST_SEED` for this run (its test workers inherit it: a run across
    midnight keeps one seed); the seed."""
    seed = base_seed()
    os.environ[ENV] = str(seed)
    return seed


def sampled(count: int) -> list[str]:
    """The seeds of a sample of `count` random games: `<base>-<n>` (the base seed in each,
    so a failure's rng is named by it)."""
    base = base_seed()
    return [f"{base}-{number}" for number in range(count)]


def reproduce_line() -> str:
    """What to run to play a run's samples again."""
    return f"{ENV}={base_seed()} (set it to play this run's random samples again)"
