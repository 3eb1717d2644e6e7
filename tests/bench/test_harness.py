"""The bench harness's own promises: a figure and its reference are sampled in turns, and a
served figure reads the serving processes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.bench.bench_engine_service import _Engine
from tests.bench.harness import Bench, Sample, Side, process_tree, rss_mb


@pytest.mark.unit
def test_a_comparison_takes_its_samples_in_turns_and_pairs_the_ratios() -> None:
    """Reference and subject alternate (warm-up, then a b a b ...); the ratio is the median
    of the ratios of samples taken one after the other."""
    order: list[str] = []
    costs = {"a": iter([1.0, 2.0, 4.0, 8.0]), "b": iter([2.0, 4.0, 8.0, 16.0])}

    def side(name: str) -> Sample:
        order.append(name)
        return Sample(1, 1.0, next(costs[name]))

    samples = Bench().alternate(
        [lambda: side("a"), lambda: side("b")], repeats=3, warmup=1, turn_cpu=0.0
    )
    assert order == ["a", "b"] * 4
    assert [s.cpu for s in samples[0]] == [2.0, 4.0, 8.0]
    bench = Bench()
    unused = lambda: Sample(1, 1.0, 1.0)  # noqa: E731
    figures = [Side(name, unused).cpu_figure(taken) for name, taken in zip(
        "ab", samples, strict=True)]  # fmt: skip
    bench.report(figures[1], figures[0], higher_is_better=True, paired=True)
    assert figures[1].ratio == figures[1].ratio_low == figures[1].ratio_high == 2.0


@pytest.mark.integration
def test_memory_per_worker_reads_the_serving_process_not_the_pools_helpers() -> None:
    """One engine worker serves in its own process; its search pool's spawner and
    processes are its children, and are not what `worker_rss_mb` reports."""
    with tempfile.TemporaryDirectory(prefix="wargame-bench-test-") as scratch:
        engine = _Engine(1, Path(scratch))
        try:
            assert len(process_tree(engine.process.pid)) > 1  # the pool's helpers
            sizes = engine.worker_rss_mb()
            assert sizes == pytest.approx([rss_mb(engine.process.pid)], rel=0.05)
        finally:
            engine.stop()
