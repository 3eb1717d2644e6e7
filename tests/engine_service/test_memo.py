"""The engine's one bounded memory: it remembers, and it forgets the least recent first."""

from __future__ import annotations

import pytest

from engine_service.memo import LruCache, memo


def test_memo_remembers_answers_up_to_its_bound() -> None:
    calls: list[int] = []

    @memo(2)
    def square(n: int) -> int:
        calls.append(n)
        return n * n

    assert [square(2), square(3), square(2)] == [4, 9, 4]
    assert calls == [2, 3]  # the second square(2) was remembered
    square(4)  # forgets 3, the least recently used
    square(2)
    square(3)
    assert calls == [2, 3, 4, 3]
    square.cache_clear()
    square(2)
    assert calls[-1] == 2


def test_lru_cache_forgets_the_least_recent_entry() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


@pytest.mark.parametrize("size", [0, -1])
def test_a_bound_keeps_at_least_one_entry(size: int) -> None:
    with pytest.raises(ValueError):
        memo(size)
    with pytest.raises(ValueError):
        LruCache(size)
