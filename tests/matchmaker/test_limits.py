"""Limits on their own: the caller's address as a real gRPC server on loopback reads it
(IPv4, IPv6 by its /64, a Unix socket, a trusted proxy's `x-forwarded-for`), the trusted
proxy list, and the token buckets on a real Redis (what passes, what is refused and what a
refusal tells the caller)."""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
import pytest

from matchmaker import keys
from matchmaker.limits import Bucket, Limits, bucket_name, caller_address, trusted_networks
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from tests.matchmaker.conftest import both_stores, run
from tests.matchmaker.helpers import store_client
from wargame.runtime.refusal import Code, Reason, Refusal

pytestmark = pytest.mark.integration

METHOD = "/limits.test.Caller/Address"


async def _answer(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    """The caller's address as `caller_address` reads it, trusting the proxies the request
    names (a comma-separated list)."""
    return caller_address(context, trusted_networks(request.decode())).encode()


async def seen_as(
    bind: str,
    target: str,
    calls: Sequence[tuple[str, Sequence[tuple[str, str]]]],
) -> list[str]:
    """Serve on `bind`, make each call (trusted proxies, metadata) from `target`: the
    address each was limited under."""
    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(_answer)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("limits.test.Caller", {"Address": handler}),)
    )
    port = server.add_insecure_port(bind)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(target.replace("PORT", str(port))) as channel:
            call = channel.unary_unary(METHOD)
            return [
                (await call(trusted.encode(), metadata=tuple(metadata), timeout=10)).decode()
                for trusted, metadata in calls
            ]
    finally:
        await server.stop(None)


def forwarded(*values: str) -> tuple[tuple[str, str], ...]:
    return tuple(("x-forwarded-for", value) for value in values)


def test_a_direct_caller_is_limited_by_its_own_address() -> None:
    """IPv4 by itself; IPv6 by its /64; an IPv4 caller on a dual-stack socket (an
    IPv4-mapped IPv6 peer) by its IPv4 address; a Unix-socket caller as "local"."""
    assert run(seen_as("127.0.0.1:0", "127.0.0.1:PORT", [("", ())])) == ["127.0.0.1"]
    assert run(seen_as("[::1]:0", "[::1]:PORT", [("", ())])) == ["::/64"]
    assert run(seen_as("[::]:0", "127.0.0.1:PORT", [("", ())])) == ["127.0.0.1"]


def test_a_unix_socket_caller_is_local() -> None:
    # A socket's path is at most 107 bytes: in a short folder of /tmp, not in pytest's
    # tmp_path (deep under a mutation run's folder, it is longer).
    with tempfile.TemporaryDirectory(prefix="mm", dir="/tmp") as folder:
        socket = f"unix:{folder}/mm.sock"
        assert run(seen_as(socket, socket, [("", ())])) == ["local"]
    assert bucket_name(None, "") == "unknown"
    assert bucket_name(None, "unix:/run/mm.sock") == "local"


def test_only_a_trusted_proxy_names_the_caller_and_its_last_untrusted_hop_counts() -> None:
    proxy = "127.0.0.1/32, 10.0.0.0/8"
    calls: list[tuple[str, Sequence[tuple[str, str]]]] = [
        # An untrusted caller cannot pick its address.
        ("", forwarded("203.0.113.5")),
        ("10.0.0.0/8", forwarded("203.0.113.5")),
        # A trusted proxy: the hop nearest to it that it does not trust.
        (proxy, ()),
        (proxy, forwarded("203.0.113.5")),
        (proxy, forwarded(" 203.0.113.50 , 10.9.8.7")),
        (proxy, forwarded("203.0.113.50, 198.51.100.4, 10.0.0.1")),
        # Every hop trusted: the first (furthest) of them.
        (proxy, forwarded("10.1.1.1, 10.2.2.2")),
        # A hop that is no address stops the walk: the last address read counts.
        (proxy, forwarded("203.0.113.9, not-an-address")),
        (proxy, forwarded("not-an-address, 203.0.113.9")),
        (proxy, forwarded("203.0.113.9, 10.0.0.1, garbage, 10.0.0.2")),
        # Nor is a hop an address with anything but spaces or brackets around it.
        (proxy, forwarded("203.0.113.9, X10.0.0.1X")),
        # IPv6 hops, bracketed or mapped.
        (proxy, forwarded("[2001:db8:1:2::5]")),
        (proxy, forwarded("::ffff:198.51.100.3")),
        # Several headers: the last one is the proxy's.
        (proxy, forwarded("198.51.100.1", "198.51.100.2")),
        (proxy, (("x-other", "198.51.100.9"),)),
    ]
    assert run(seen_as("127.0.0.1:0", "127.0.0.1:PORT", calls)) == [
        "127.0.0.1",
        "127.0.0.1",
        "127.0.0.1",
        "203.0.113.5",
        "203.0.113.50",
        "198.51.100.4",
        "10.1.1.1",
        "127.0.0.1",
        "203.0.113.9",
        "10.0.0.2",
        "127.0.0.1",
        "2001:db8:1:2::/64",
        "198.51.100.3",
        "198.51.100.2",
        "127.0.0.1",
    ]


def test_trusted_proxies_are_a_comma_separated_list_of_networks() -> None:
    net = ipaddress.ip_network
    assert trusted_networks("") == ()
    assert trusted_networks(" , 10.0.0.0/8 ,, 192.0.2.1 ,2001:db8::/32") == (
        net("10.0.0.0/8"),
        net("192.0.2.1/32"),
        net("2001:db8::/32"),
    )
    # Host bits set are forgiven: the network they lie in.
    assert trusted_networks("10.1.2.3/8") == (net("10.0.0.0/8"),)
    with pytest.raises(ValueError) as caught:
        trusted_networks("10.0.0.0/8,  proxy.example ")
    assert str(caught.value) == "'proxy.example' is not an address or network"


# -- token buckets on Redis ------------------------------------------------------------------


@contextlib.asynccontextmanager
async def made(redis_url: str, **changes: Any) -> AsyncIterator[Limits]:
    """Limits with these settings on the test's Redis (its client closed after)."""
    redis = await store_client(redis_url)
    try:
        settings = dataclasses.replace(Settings(redis_url=redis_url), **changes)
        yield Limits(Scripts(redis), settings)
    finally:
        await redis.aclose()


async def refusal(limits: Limits, buckets: Sequence[Bucket], **take: int) -> Refusal:
    with pytest.raises(Refusal) as caught:
        await limits.take(buckets, **take)
    return caught.value


async def tokens(limits: Limits, key: str) -> float | None:
    value = await limits.scripts.redis.hget(key, "tokens")
    return None if value is None else float(value)


async def last_changed(limits: Limits, bucket: Bucket, tokens: float, shift_ms: int) -> int:
    """Write `bucket` as limit.lua writes it: holding `tokens`, last changed `shift_ms` from
    now by the Redis server's clock (negative: in the past). Returns that now, in ms."""
    redis = limits.scripts.redis
    seconds, micros = await redis.time()
    now_ms = seconds * 1000 + micros // 1000
    await redis.hset(bucket.key, mapping={"tokens": tokens, "at": now_ms + shift_ms})
    return int(now_ms)


async def held(limits: Limits, key: str) -> float:
    """The tokens a bucket held at its last change (it must exist)."""
    value = await tokens(limits, key)
    assert value is not None, f"no bucket {key}"
    return value


@both_stores
def test_registration_is_limited_per_address_then_for_everyone(redis_url: str) -> None:
    async def scenario() -> None:
        async with made(
            redis_url,
            register_peer_rate=0.01,
            register_peer_burst=2.0,
            register_rate=0.002,
            register_burst=3.0,
            trusted_proxies="10.0.0.0/8",
        ) as limits:
            assert limits.trusted == (ipaddress.ip_network("10.0.0.0/8"),)
            here = limits.registration("203.0.113.7")
            await limits.take(here)
            await limits.take(here)
            refused = await refusal(limits, here)
            assert (refused.code, refused.reason) == (Code.RESOURCE_EXHAUSTED, Reason.RATE_LIMITED)
            # One token back at 0.01 a second: about 100 s.
            retry_ms = int(refused.metadata["retry_after_ms"])
            assert 90_000 < retry_ms <= 100_000
            assert refused.retry_after == retry_ms / 1000
            assert (
                refused.message
                == f"too many new players from your address; retry in {retry_ms / 1000:g} s"
            )
            # The refused call took nothing from the bucket of everyone: one is left there.
            await limits.take(limits.registration("198.51.100.1"))
            refused = await refusal(limits, limits.registration("198.51.100.2"))
            assert refused.message.startswith("too many new players at the moment; retry in ")
            assert 450_000 < int(refused.metadata["retry_after_ms"]) <= 500_000

    run(scenario())


@both_stores
def test_wrong_invite_codes_are_limited_per_player_per_address_and_for_everyone(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        async with made(
            redis_url,
            guess_player_rate=0.01,
            guess_player_burst=1.0,
            guess_peer_rate=0.01,
            guess_peer_burst=2.0,
            guess_rate=0.01,
            guess_burst=4.0,
        ) as limits:
            began = time.monotonic()
            await limits.charge(limits.guesses("pann", "203.0.113.1"))
            refused = await refusal(limits, limits.guesses("pann", "203.0.113.2"))
            assert refused.message.startswith("too many wrong invite codes from you; retry in ")
            await limits.charge(limits.guesses("pben", "203.0.113.1"))
            refused = await refusal(limits, limits.guesses("pcat", "203.0.113.1"))
            assert refused.message.startswith(
                "too many wrong invite codes from your address; retry in "
            )
            await limits.charge(limits.guesses("pdan", "198.51.100.1"))
            await limits.charge(limits.guesses("peve", "198.51.100.2"))
            refused = await refusal(limits, limits.guesses("pfay", "198.51.100.3"))
            assert refused.message.startswith(
                "too many wrong invite codes at the moment; retry in "
            )
            # Each wrong code was counted where the limits say: the player's own bucket too.
            # (Operators read these keys: the buckets are named as `keys` documents.) Each was
            # charged exactly its burst, so it holds no more than the refill since the first
            # charge, at 0.01 a second, however slowly a busy machine ran this.
            refilled = 0.01 * (time.monotonic() - began)
            here = keys.limit_address("guess", "203.0.113.1")
            for key in (keys.player_guesses("pann"), here, keys.limit("guess")):
                assert 0 <= await held(limits, key) <= refilled + 0.001, key

    run(scenario())


@both_stores
def test_check_takes_nothing_charge_takes_even_from_an_empty_bucket(redis_url: str) -> None:
    async def scenario() -> None:
        async with made(redis_url) as limits:
            key = keys.limit("test")
            bucket = [Bucket(key, 0.001, 2.0, "too many tests")]
            await limits.check(bucket)
            assert await tokens(limits, key) is None  # a look stores nothing
            # One token is enough to pass a look.
            await limits.check([Bucket(keys.limit("one"), 0.001, 1.0, "one")])
            await limits.charge(bucket)
            await limits.charge(bucket)
            assert 0.0 <= (await tokens(limits, key) or 0.0) < 0.01
            with pytest.raises(Refusal) as caught:
                await limits.check(bucket)
            assert caught.value.message.startswith("too many tests; retry in ")
            # A failure already made is paid for, whatever the bucket holds: it goes into debt.
            await limits.charge(bucket)
            assert -1.0 <= (await tokens(limits, key) or 0.0) < -0.99
            # The bucket lives until it is full again (3 tokens at 1 per 1000 s) and 1 s more.
            assert 2_999_000 < await limits.scripts.redis.pttl(key) <= 3_001_000

    run(scenario())


@both_stores
def test_a_bucket_without_a_rate_is_no_limit_and_the_first_refusal_stops_the_rest(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        async with made(redis_url) as limits:
            free = Bucket(keys.limit("free"), 0.0, 1.0, "never")
            one = Bucket(keys.limit("one"), 0.001, 1.0, "first")
            two = Bucket(keys.limit("two"), 0.001, 5.0, "second")
            for _ in range(3):
                await limits.take([free])
            assert await limits.scripts.redis.exists(free.key) == 0
            await limits.take([free, one, two])
            refused = await refusal(limits, [free, one, two])
            assert refused.message.startswith("first; retry in ")
            # The refusal came before the second bucket: it was taken from once, not twice.
            assert 3.99 <= (await tokens(limits, two.key) or 0.0) < 4.01
            # A request may need more than one token yet take one.
            await limits.take([two], need=4, cost=1)
            with pytest.raises(Refusal) as caught:
                await limits.take([two], need=4, cost=1)
            assert caught.value.message.startswith("second; retry in ")

    run(scenario())


@both_stores
def test_a_bucket_refills_at_its_rate_to_the_token(redis_url: str) -> None:
    # 1,000 s idle at 1 token a second is 1,000 tokens, and the time since, not 999: what is
    # left after taking 1,000 is the refill of the ms between the write and the take, by the
    # server's clock (however long a busy machine made them).
    async def scenario() -> None:
        async with made(redis_url) as limits:
            bucket = Bucket(keys.limit("rate"), 1.0, 10_000.0, "too many rate tests")
            written = await last_changed(limits, bucket, 0.0, -1_000_000)
            await limits.take([bucket], need=1000, cost=1000)
            taken = await limits.scripts.redis.hget(bucket.key, "at")
            assert taken is not None
            assert await held(limits, bucket.key) == pytest.approx((int(taken) - written) / 1000)

    run(scenario())


@both_stores
def test_a_bucket_changed_ahead_of_the_clock_refills_nothing_until_the_clock_passes_it(
    redis_url: str,
) -> None:
    # A bucket last changed by a primary whose clock ran ahead (then a failover to one behind
    # it) has its `at` in the future by this server's clock: it refills nothing, neither a
    # minimum nor a negative amount, so the request waits for one token's refill, no more.
    async def scenario() -> None:
        async with made(redis_url) as limits:
            bucket = Bucket(keys.limit("ahead"), 1_000_000.0, 5.0, "too many tests ahead")
            await last_changed(limits, bucket, 0.0, 3_600_000)  # an hour ahead
            refused = await refusal(limits, [bucket], need=1, cost=1)
            assert int(refused.metadata["retry_after_ms"]) == 1  # 1 token at 1,000 per ms
            assert await held(limits, bucket.key) == 0

    run(scenario())


@both_stores
def test_a_bucket_idle_for_long_holds_its_burst_and_no_more(redis_url: str) -> None:
    # limit.lua refills by Redis TIME: a bucket last changed long ago (written here as the
    # script writes it, its `at` an hour back by the server's clock) is full, not fuller.
    async def scenario() -> None:
        async with made(redis_url) as limits:
            bucket = Bucket(keys.limit("idle"), 1.0, 3.0, "too many idle tests")
            for start in (0.0, -3.0):  # empty, and as deep in debt as a bucket goes
                await last_changed(limits, bucket, start, -3_600_000)  # an hour ago
                # 3,600 tokens' worth of refill, kept to the burst of 3: 4 never pass.
                refused = await refusal(limits, [bucket], need=4, cost=1)
                assert int(refused.metadata["retry_after_ms"]) == 1000  # the 4th token in 1 s
                await limits.take([bucket], need=3, cost=3)
                assert await held(limits, bucket.key) == pytest.approx(0, abs=0.05)
                refused = await refusal(limits, [bucket], need=1, cost=1)
                assert 0 < int(refused.metadata["retry_after_ms"]) <= 1000

    run(scenario())
