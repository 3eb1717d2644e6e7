"""Bounded memory for pure answers: every cache in the engine is one of these two.

Requests carry text a client chose (options, set-ups, notation, board sizes), so nothing
the engine remembers may grow with what clients send. Both forms keep the most recently
used entries up to a fixed number and forget the rest (least recently used first):

- `memo(maxsize)` memoises a pure function of hashable arguments (`functools.lru_cache`,
  always with a bound);
- `LruCache(maxsize)` is the same memory with explicit `get` and `put`, for answers that
  are stored under several keys at once (the Napoleonic planner's plan along its states).

`memories()` lists every one of them with its size and bound (for tests and operators).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

P = ParamSpec("P")
R_co = TypeVar("R_co", covariant=True)
T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memoised(Protocol[P, R_co]):
    """A memoised function: called like the original, and its memory can be cleared."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """The function's answer, remembered."""

    def cache_clear(self) -> None:
        """Forget every remembered answer."""

    def cache_info(self) -> Any:
        """functools' counters: hits, misses, maxsize, currsize."""


@dataclass(frozen=True)
class Memory:
    """One bounded memory: where it is, how many entries it holds, and its bound."""

    name: str
    size: int
    maxsize: int


_MEMOISED: list[tuple[str, Memoised[Any, Any]]] = []
_CACHES: list[tuple[str, weakref.ref[LruCache[Any, Any]]]] = []


def memo(maxsize: int) -> Callable[[Callable[P, T]], Memoised[P, T]]:
    """Remember a pure function's last `maxsize` answers (by its hashable arguments)."""
    if maxsize < 1:
        raise ValueError(f"a bounded cache keeps at least one entry, not {maxsize}")

    def wrap(function: Callable[P, T]) -> Memoised[P, T]:
        memoised = cast("Memoised[P, T]", functools.lru_cache(maxsize=maxsize)(function))
        _MEMOISED.append((f"{function.__module__}.{function.__qualname__}", memoised))
        return memoised

    return wrap


def memories() -> list[Memory]:
    """Every memory made by `memo` or `LruCache` so far, with its size and bound."""
    found = [
        Memory(name, memoised.cache_info().currsize, memoised.cache_info().maxsize)
        for name, memoised in _MEMOISED
    ]
    for name, reference in _CACHES:
        cache = reference()
        if cache is not None:
            found.append(Memory(name, len(cache), cache.maxsize))
    return found


class LruCache(Generic[K, V]):
    """At most `maxsize` entries; reading or writing one makes it the most recent."""

    def __init__(self, maxsize: int, name: str = "") -> None:
        if maxsize < 1:
            raise ValueError(f"a bounded cache keeps at least one entry, not {maxsize}")
        self.maxsize = maxsize
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()  # the servicer answers from a thread pool
        _CACHES.append((name or f"LruCache({maxsize})", weakref.ref(self)))

    def get(self, key: K) -> V | None:
        """The entry under `key`, or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        """Keep `value` under `key`, forgetting the least recent entry beyond `maxsize`."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
