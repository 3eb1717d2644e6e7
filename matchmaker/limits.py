"""Limits that hold across replicas: token buckets in Redis, and who is calling from where.

A request that must be limited before anyone is known (RegisterPlayer) is limited by the
caller's address and for everyone together; wrong invite codes are limited per player,
per address and for everyone (`limit.lua`, one bucket per key), charged only by a miss: a
right code is never refused, however empty the buckets. The caller's address is
the connection's peer (an IPv6 caller by its /64 network, the block one host usually
holds), or the address a trusted proxy names in `x-forwarded-for`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import grpc

from matchmaker import keys
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from wargame.runtime.refusal import Code, Reason, Refusal

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def trusted_networks(text: str) -> tuple[Network, ...]:
    """The networks of a comma-separated CIDR list (ValueError names a bad one)."""
    out = []
    for item in text.split(","):
        if item.strip():
            try:
                out.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError:
                raise ValueError(f"{item.strip()!r} is not an address or network") from None
    return tuple(out)


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _peer_address(peer: str) -> Address | None:
    """The address of a gRPC peer string ("ipv4:1.2.3.4:5", "ipv6:[::1]:5")."""
    kind, _, rest = peer.partition(":")
    # gRPC percent-encodes an IPv6 peer's brackets ("ipv6:%5B::1%5D:5"): unread, every
    # IPv6 caller would share one bucket.
    rest = unquote(rest)
    if kind == "ipv4":
        return _address(rest.rpartition(":")[0])
    if kind == "ipv6":
        return _address(rest.rpartition("]")[0].lstrip("["))
    return None


def bucket_name(address: Address | None, peer: str) -> str:
    """The name an address is limited under: IPv4 itself, IPv6 its /64, others "local"."""
    if address is None:
        return "local" if peer.startswith("unix") else "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def caller_address(context: grpc.aio.ServicerContext, trusted: Sequence[Network] = ()) -> str:
    """The name of the caller's address for limits (see the module docstring)."""
    peer = context.peer() or ""
    address = _peer_address(peer)
    if address is not None and any(address in network for network in trusted):
        forwarded = ""
        for key, value in context.invocation_metadata() or ():
            if key == "x-forwarded-for":
                forwarded = str(value)
        hops = [_address(hop) for hop in forwarded.split(",")]
        for hop in reversed(hops):
            if hop is None:
                break
            address = hop
            if not any(hop in network for network in trusted):
                break
    return bucket_name(address, peer)


@dataclass(frozen=True)
class Bucket:
    """One token bucket: its key, refill rate (per second; 0: no limit), size, and what a
    refusal by it says."""

    key: str
    rate: float
    burst: float
    what: str


def limited(retry_ms: int, what: str) -> Refusal:
    """RESOURCE_EXHAUSTED with a retry hint."""
    return Refusal(
        Code.RESOURCE_EXHAUSTED,
        Reason.RATE_LIMITED,
        f"{what}; retry in {retry_ms / 1000:g} s",
        metadata={"retry_after_ms": str(retry_ms)},
        retry_after=retry_ms / 1000,
    )


class Limits:
    """The buckets of the matchmaker's limits and the calls that take from them."""

    def __init__(self, scripts: Scripts, settings: Settings) -> None:
        self.scripts = scripts
        self.settings = settings
        self.trusted = trusted_networks(settings.trusted_proxies)

    def registration(self, address: str) -> list[Bucket]:
        """The buckets a RegisterPlayer call from `address` takes from."""
        s = self.settings
        return [
            Bucket(
                keys.limit_address("register", address),
                s.register_peer_rate,
                s.register_peer_burst,
                "too many new players from your address",
            ),
            Bucket(
                keys.limit("register"),
                s.register_rate,
                s.register_burst,
                "too many new players at the moment",
            ),
        ]

    def guesses(self, player_id: str, address: str) -> list[Bucket]:
        """The buckets a wrong invite code from `player_id` at `address` takes from."""
        s = self.settings
        wrong = "too many wrong invite codes"
        return [
            Bucket(
                keys.player_guesses(player_id),
                s.guess_player_rate,
                s.guess_player_burst,
                f"{wrong} from you",
            ),
            Bucket(
                keys.limit_address("guess", address),
                s.guess_peer_rate,
                s.guess_peer_burst,
                f"{wrong} from your address",
            ),
            Bucket(keys.limit("guess"), s.guess_rate, s.guess_burst, f"{wrong} at the moment"),
        ]

    async def take(self, buckets: Sequence[Bucket], *, need: int = 1, cost: int = 1) -> None:
        """Take `cost` from each bucket in turn if it holds `need`; RATE_LIMITED at the
        first that does not."""
        for bucket in buckets:
            if bucket.rate <= 0:
                continue
            reply: Any = await self.scripts.run(
                "limit", [bucket.key], [bucket.rate, bucket.burst, need, cost]
            )
            if int(reply[0]) == 0:
                raise limited(int(reply[1]), bucket.what)

    async def miss(self, buckets: Sequence[Bucket]) -> None:
        """Count a failure (a wrong invite code) against each bucket in turn; RATE_LIMITED
        at the first already empty (those after it are not charged)."""
        await self.take(buckets, need=1, cost=1)

    async def check(self, buckets: Sequence[Bucket]) -> None:
        """RATE_LIMITED unless every bucket holds a token (takes nothing)."""
        await self.take(buckets, need=1, cost=0)

    async def charge(self, buckets: Sequence[Bucket]) -> None:
        """Take one token from every bucket, whatever they hold (a failure already made)."""
        await self.take(buckets, need=0, cost=1)
