"""The rotating seed of the sampled random tests.

`make test` plays a sample of the random games (playouts): a few per option set, their
seeds drawn from one base seed that changes every day (the UTC date), so that day after day
the default suite covers many more games than one run does; `make test-slow` plays the
fixed, deeper sets. The base seed is in pytest's header and in the report of every failed
test that drew from it, and `WARGAME_TEST_SEED=<n>` plays the same games again. Where each
option set of a test is a long game, `make test` plays a share of the sets too, a different
share from day to day (`in_turn`); where each set is a whole client session, each set runs
once, in `make test` on its days and in `make test-slow` on the others (`by_turns`).

Where things are: `base_seed` (the run's seed, set once for the run and its workers),
`sampled` (the seeds of a sample), `DEPTHS` (a test's sample and in-depth forms), `in_turn`
(the sets whose sample plays this run, every set in depth), `by_turns` (a share of a
test's sets in `make test`, the rest in `make test-slow`), and in
`tests/conftest.py` the fixture `playout_seed` a sampled test takes and the report hooks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # what `pytest.param` makes; pytest exports its name only from 9.2 on
    from _pytest.mark.structures import ParameterSet

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


def in_turn(sets: Sequence[ParameterSet], every: int) -> list[ParameterSet]:
    """A test's parameter sets, each with `in_depth` appended, as `DEPTHS` gives them: the
    sample form of one set in `every` (which ones turns with the base seed, so `every` runs
    on `every` days play each once), the in-depth form of every set under -m slow. The
    test's argument names end with "in_depth"; the ids are the sets' own with -sample or
    -depth, as with `DEPTHS`."""
    turn = base_seed() % every
    return [
        pytest.param(*given.values, False, id=f"{given.id}-sample", marks=given.marks)
        for number, given in enumerate(sets)
        if number % every == turn
    ] + [
        pytest.param(
            *given.values, True, id=f"{given.id}-depth", marks=[*given.marks, pytest.mark.slow]
        )
        for given in sets
    ]


def by_turns(sets: Sequence[ParameterSet], every: int) -> list[ParameterSet]:
    """A test's parameter sets, one in `every` of them run by `make test` (which ones turns
    with the base seed, as `in_turn`), the others marked slow: `make test` and
    `make test-slow` together run each set once. For a test whose sets are each a whole
    client session, not a random game (list the sets so that every share covers what
    matters, e.g. every game)."""
    turn = base_seed() % every
    return [
        given
        if number % every == turn
        else pytest.param(*given.values, id=given.id, marks=[*given.marks, pytest.mark.slow])
        for number, given in enumerate(sets)
    ]


def reproduce_line() -> str:
    """What to run to play a run's samples again."""
    return f"{ENV}={base_seed()} (set it to play this run's random samples again)"
