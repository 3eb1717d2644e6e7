"""A replica's start-up on a Redis it cannot use: one line that says which URL and why,
without the password (checked in this process, where `main` turns it into its exit line)."""

from __future__ import annotations

import asyncio

import pytest

from matchmaker.server import Replica
from matchmaker.settings import Settings
from wargame.runtime.config import ConfigError


def _start_up_failure(redis_url: str) -> str:
    with pytest.raises(ConfigError) as failed:
        asyncio.run(Replica.connect(Settings(redis_url=redis_url)))
    return str(failed.value)


def test_an_unreachable_redis_is_named_without_its_password(nowhere: str) -> None:
    line = _start_up_failure(f"redis://:Pa55word@{nowhere}/0")
    assert line.startswith(f"cannot use Redis at redis://***@{nowhere}/0: "), line
    assert f"connecting to {nowhere}" in line, line
    assert "Pa55word" not in line and "\n" not in line


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://nowhere", "Redis URL must specify one of the following schemes"),
        ("redis://127.0.0.1:notaport/0", "Port could not be cast to integer value"),
    ],
)
def test_a_malformed_redis_url_is_blamed_on_the_flag(url: str, why: str) -> None:
    line = _start_up_failure(url)
    assert line.startswith(f"--redis-url {url}: {why}"), line
