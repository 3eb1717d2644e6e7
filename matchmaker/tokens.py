"""Players' secret tokens: issued once, stored only as a hash, checked on every call.

A token is ``<player id>.<secret>``: the player id tells which hash slot holds the token's
record, so checking it, taking a request from the player's rate-limit bucket and keeping
the player's keys alive are one script (`authenticate.lua`). Redis stores the SHA-256 of
the whole token, never the token.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from matchmaker import keys
from matchmaker.errors import quoted
from matchmaker.limits import limited
from matchmaker.redis_client import Client
from matchmaker.scripts import Scripts
from matchmaker.settings import Settings
from matchmaker.store import text
from wargame.runtime.refusal import Code, Reason, Refusal, malformed, missing

MAX_NAME = 32


def random_id(prefix: str, size: int = 16) -> str:
    """A random id: `prefix` then `size` characters of lowercase base32 (letters, digits
    2-7: no braces, dots or colons, so ids fit in key names and hash tags)."""
    raw = base64.b32encode(secrets.token_bytes((size * 5 + 7) // 8)).decode().lower()
    return prefix + raw[:size]


def token_hash(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def split_token(token: str) -> tuple[str, str]:
    """(player id, token hash) of a token; TOKEN_INVALID if it has not the token's form."""
    player_id, dot, secret = token.partition(".")
    if not dot or not player_id.startswith("p") or not player_id.isalnum() or len(secret) < 20:
        raise Refusal(Code.UNAUTHENTICATED, Reason.TOKEN_INVALID, "the token is malformed")
    return player_id, token_hash(token)


def check_display_name(name: str) -> str:
    """The display name, trimmed; MALFORMED_REQUEST unless 1-32 printable characters."""
    name = name.strip()
    if not name:
        raise missing("display_name")
    if len(name) > MAX_NAME or not name.isprintable():
        raise malformed("display_name", f"display_name must be 1-{MAX_NAME} printable characters")
    return name


@dataclass(frozen=True)
class AuthCall:
    """A prepared token check: the player the token names, and the script's KEYS/ARGV."""

    player_id: str
    keys: list[str]
    args: list[Any]


@dataclass(frozen=True)
class Identity:
    """The player a call acts for, and the token it used."""

    player_id: str
    token_id: str


class Tokens:
    """Registering players, issuing, checking and revoking their tokens."""

    def __init__(self, redis: Client, scripts: Scripts, settings: Settings) -> None:
        self.redis = redis
        self.scripts = scripts
        self.settings = settings

    async def register(self, display_name: str, now_ms: int) -> tuple[str, str, str, str]:
        """A new guest player: (player id, display name, token, token id). A guest's keys
        live `guest_ttl` until it plays a game (`Players.mark_played`)."""
        name = check_display_name(display_name)
        player_id = random_id("p")
        token, token_id = await self._issue(
            player_id, {"name": name, "created_ms": now_ms}, self.settings.guest_ttl
        )
        return player_id, name, token, token_id

    async def issue(self, player_id: str) -> tuple[str, str]:
        """Another token for an existing player: (token, token id)."""
        played = await self.redis.hexists(keys.player(player_id), "played")
        ttl = self.settings.player_ttl if played else self.settings.guest_ttl
        return await self._issue(player_id, None, ttl)

    async def _issue(
        self, player_id: str, profile: dict[Any, Any] | None, ttl_seconds: float
    ) -> tuple[str, str]:
        token = f"{player_id}.{secrets.token_urlsafe(32)}"
        digest = token_hash(token)
        token_id = random_id("t", 10)
        ttl = int(ttl_seconds)
        pipe = self.redis.pipeline(transaction=True)
        if profile is not None:
            pipe.hset(keys.player(player_id), mapping=profile)
            pipe.expire(keys.player(player_id), ttl)
        pipe.set(keys.player_token(player_id, digest), token_id, ex=ttl)
        pipe.hset(keys.player_tokens(player_id), token_id, digest)
        pipe.expire(keys.player_tokens(player_id), ttl)
        await pipe.execute()
        return token, token_id

    def prepare(self, token: str, cost: float = 1.0) -> AuthCall:
        """The token check as a script call, to send alone or with other commands."""
        player_id, digest = split_token(token)
        return AuthCall(
            player_id,
            [
                keys.player_token(player_id, digest),
                keys.player(player_id),
                keys.player_tokens(player_id),
                keys.player_bucket(player_id),
                keys.player_rated(player_id),
                keys.player_games(player_id),
            ],
            [
                int(self.settings.player_ttl),
                self.settings.rate_limit,
                self.settings.rate_burst,
                cost,
                int(self.settings.guest_ttl),
            ],
        )

    @staticmethod
    def identity(call: AuthCall, reply: Any) -> Identity:
        """The caller, from the reply of `authenticate.lua`; UNAUTHENTICATED if the token is
        unknown, RESOURCE_EXHAUSTED (with a retry hint) beyond the rate limit."""
        if reply[0] == 0:
            raise Refusal(
                Code.UNAUTHENTICATED,
                Reason.TOKEN_INVALID,
                "the token is unknown or has been revoked",
            )
        token_id = text(reply[1])
        if reply[0] == 2:
            raise limited(int(reply[2]), "too many requests")
        return Identity(call.player_id, token_id)

    async def authenticate(self, token: str, cost: float = 1.0) -> Identity:
        """The player of a token (see `identity` for the refusals)."""
        call = self.prepare(token, cost)
        reply = await self.scripts.run("authenticate", call.keys, call.args)
        return self.identity(call, reply)

    async def revoke(self, caller: Identity, token_id: str) -> None:
        """Revoke one of the caller's tokens (its own when `token_id` is empty)."""
        target = token_id or caller.token_id
        digest = await self.redis.hget(keys.player_tokens(caller.player_id), target)
        if digest is None:
            raise Refusal(
                Code.NOT_FOUND,
                Reason.TOKEN_INVALID,
                f"the player has no token {quoted(target)}",
                field="token_id",
            )
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(keys.player_token(caller.player_id, text(digest)))
        pipe.hdel(keys.player_tokens(caller.player_id), target)
        await pipe.execute()
