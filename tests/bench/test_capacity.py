"""The capacity model of docs/capacity.md (`bench_capacity.capacity`): what it adds up,
on made-up rates, so that the table `make bench` prints from measured ones is the sum the
document says it is."""

from __future__ import annotations

import dataclasses

import pytest

from tests.bench.bench_capacity import MODEL, capacity

RATES = {
    "matchmaker/idle": 0.0,
    "engine/idle": 0.0,
    "redis/idle": 0.0,
    "matchmaker/move": 2.0,  # CPU ms
    "engine/move": 1.0,
    "redis/move": 0.25,
    "matchmaker/delivery": 0.5,
    "redis/delivery": 0.05,
    "engine/suggest": 1.0,  # seconds
    "matchmaker/bot": 20.0,
    "redis/player": 600.0,  # bytes
    "redis/running": 20_000.0,
    "redis/finished": 24_000.0,
    "redis/kept": 4_000.0,
    "matchmaker/watcher": 30_000.0,
    "matchmaker/rss": 120.0,  # MB
    "engine/rss": 260.0,
}


def test_cores_are_the_moves_times_their_cpu_at_the_target_load() -> None:
    model = dataclasses.replace(MODEL, bot_share=0.0, watchers_per_game=0.0)
    need = capacity(10_000, RATES, model)
    assert need.moves_per_s == pytest.approx(1_000)  # a move every 10 s in each game
    assert need.matchmaker_cores == pytest.approx(1_000 * 0.002 / 0.7)
    assert need.engine_cores == pytest.approx(1_000 * 0.001 / 0.7)
    assert need.redis_cores == pytest.approx(1_000 * 0.00025)


def test_bots_and_watchers_add_their_own_costs() -> None:
    model = dataclasses.replace(MODEL, bot_share=0.2, watchers_per_game=3.0)
    need = capacity(10_000, RATES, model)
    assert need.bot_moves_per_s == pytest.approx(100)  # half the moves of a fifth of games
    person_moves = 1_000 - 2 * 100  # a bot move's figure holds the person's move
    expected = person_moves * 2.0 + 100 * 20.0 + 3_000 * 0.5
    assert need.matchmaker_cores == pytest.approx(expected / 1000 / 0.7)
    # every move's ApplyActions, and a core for each bot move's whole 1 s search
    assert need.engine_cores == pytest.approx((1_000 * 1.0 + 100 * 1000.0) / 1000 / 0.7)


def test_finished_games_kept_for_their_days_fill_redis_and_set_its_shards() -> None:
    need = capacity(100_000, RATES, MODEL)
    per_day = 100_000 / (MODEL.plies_per_game * MODEL.think_s) * 86_400
    assert need.finished_kept == pytest.approx(per_day * 7)
    by_cpu, small, large = need.shards
    assert by_cpu < small and large < small  # memory, not CPU, sets the shards
    assert small == -(-need.redis_gb // 0.75)
    assert capacity(10, RATES, MODEL).shards == (3, 3, 3)  # never fewer than a cluster has
