"""How a failure that is not a refusal is answered (`handling._refusal_of`): a session
store that is still loading its data is UNAVAILABLE with the retry hint, like one out of
reach; anything else is INTERNAL, naming only the request id."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from matchmaker import handling
from matchmaker.handling import _refusal_of
from wargame.runtime.refusal import Reason


@pytest.fixture(autouse=True)
def retry_hint() -> Iterator[None]:
    """A hint other than the default, as main.py sets it from --retry-hint."""
    saved = handling.RETRY_HINT
    handling.set_retry_hint(2.5)
    yield
    handling.set_retry_hint(saved)


def test_a_store_still_loading_is_unavailable_with_the_retry_hint() -> None:
    refusal = _refusal_of(RedisError("LOADING Redis is loading the dataset in memory"), "r1")
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.UNAVAILABLE,
        Reason.STORE_UNAVAILABLE,
    )
    assert refusal.message == "the session store is starting; retry in 2.5 s"
    assert (refusal.retry_after, refusal.metadata) == (2.5, {"retry_after_ms": "2500"})


def test_a_store_out_of_reach_is_unavailable_with_the_retry_hint() -> None:
    refusal = _refusal_of(RedisConnectionError("Connection refused"), "r1")
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.UNAVAILABLE,
        Reason.STORE_UNAVAILABLE,
    )
    assert refusal.message == "the session store cannot be reached; retry in 2.5 s"


def test_any_other_failure_is_internal_naming_the_request_id_only() -> None:
    refusal = _refusal_of(RedisError("ERR wrong number of arguments"), "r1")
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INTERNAL, Reason.INTERNAL_ERROR)
    assert refusal.message == "internal error (request id r1)"
