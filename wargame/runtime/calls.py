"""What both services' call handlers share: their metrics, request ids, elapsed times.

Each service wraps every RPC once, in its `handling.py` (the engine's calls are
synchronous and run in a thread pool, the matchmaker's are asyncio coroutines and
streams, so the wrappers themselves differ); the pieces both need are written here.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from prometheus_client import Counter, Histogram

Method = TypeVar("Method", bound=Callable[..., Any])  # a servicer method a wrapper keeps

REQUEST_ID = re.compile(r"[A-Za-z0-9_.\-]{1,64}")  # a request id a client may choose


@dataclass(frozen=True)
class CallMetrics:
    """A service's three call metrics: calls by RPC and status code, refusals by RPC and
    reason, and call durations by RPC."""

    rpcs: Counter
    errors: Counter
    latency: Histogram


def call_metrics(
    service: str,
    *,
    calls: str,
    refusals: str,
    latency: str,
    buckets: Sequence[float],
) -> CallMetrics:
    """The call metrics `wargame_<service>_rpcs_total`, `..._errors_total` and
    `..._rpc_seconds`, described by `calls`, `refusals` and `latency`."""
    return CallMetrics(
        rpcs=Counter(f"wargame_{service}_rpcs_total", calls, ["rpc", "code"]),
        errors=Counter(f"wargame_{service}_errors_total", refusals, ["rpc", "reason"]),
        latency=Histogram(
            f"wargame_{service}_rpc_seconds", latency, ["rpc"], buckets=tuple(buckets)
        ),
    )


def new_request_id() -> str:
    """A fresh request id (also for work no request asked for: sweeps, pairing)."""
    return uuid.uuid4().hex[:16]


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.perf_counter()` reading), as logs give them."""
    return round((time.perf_counter() - started) * 1000, 3)
