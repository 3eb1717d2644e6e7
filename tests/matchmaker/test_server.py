"""A replica's start-up on a Redis it cannot use: one line that says which URL and why,
without the password (checked in this process, where `main` turns it into its exit line)."""

from __future__ import annotations

import asyncio

import pytest
import redis

from matchmaker.server import Replica
from tests.matchmaker.conftest import fast_settings
from wargame.runtime.config import ConfigError


def _start_up_failure(redis_url: str) -> str:
    with pytest.raises(ConfigError) as failed:
        asyncio.run(Replica.connect(fast_settings(redis_url)))
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


def test_a_redis_user_refused_the_scripts_stops_start_up_naming_the_redis(redis_url: str) -> None:
    """A Redis the matchmaker reaches but may not load its scripts on (a managed Redis's
    user without SCRIPT): one line naming that Redis, with the server's refusal."""
    admin = redis.Redis.from_url(redis_url)
    admin.acl_setuser(
        "noscripts",
        enabled=True,
        passwords=["+Pa55word"],
        keys=["*"],
        commands=["-@all", "+info", "+client", "+ping", "+hello"],
    )
    try:
        url = redis_url.replace("redis://", "redis://noscripts:Pa55word@", 1)
        line = _start_up_failure(url)
    finally:
        admin.acl_deluser("noscripts")
        admin.close()
    where = redis_url.replace("redis://", "redis://***@", 1)
    assert line.startswith(f"cannot use Redis at {where}: "), line
    assert "no permissions to run the 'script|load' command" in line, line
    assert "Pa55word" not in line and "\n" not in line
