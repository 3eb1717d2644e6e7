"""Integrity tags on the position texts the engine writes (`GameState.position_tag`).

A stateless engine reads back, on almost every call, a position text it wrote itself one
call before. Checking that such a text could arise in play (`check_state`) repeats work the
engine did when it made the position, so each text it writes carries a keyed tag: BLAKE2b
keyed with the engine's tag key, over the game id and the text. A text whose tag matches is
read without `check_state` (it is still parsed in full); a text from anywhere else, one
without a tag, or one whose tag does not match (forged, edited, made under another key or
by an older tag version) is checked in full, as every text was before, so a bad tag can
never make the engine accept a state it would refuse.

The key is derived from the engine's seal key (`--seal-key-file`, the Secret every replica
already shares), so every replica accepts the others' tags. An engine without a seal key
uses a random key made once per host process: its forked workers share it, another host's
tags are checked in full. The key is never logged or sent.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Final

# Bump when a rules change makes the engine refuse texts that it wrote before: older tags
# then no longer match and those texts are checked in full.
TAG_VERSION: Final = 1
TAG_BYTES: Final = 16
_CONTEXT: Final = b"wargame position tags"
# The key of an engine without a seal key: one per process tree (made before workers fork).
_UNKEYED: Final = secrets.token_bytes(32)


def tag_key(seal_key: bytes | None) -> bytes:
    """The key that tags position texts: derived from the seal key, or this process's own."""
    base = seal_key if seal_key else _UNKEYED
    return hmac.new(base, _CONTEXT + b" v%d" % TAG_VERSION, "sha256").digest()


class PositionTags:
    """Tags position texts with one key and tells whether a tag is this key's."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        self._key = key

    def tag(self, game: str, position: str) -> bytes:
        """The tag of a game's position text."""
        return hashlib.blake2b(
            f"{game}\n{position}".encode(), key=self._key, digest_size=TAG_BYTES
        ).digest()

    def vouches(self, game: str, position: str, tag: bytes) -> bool:
        """Whether `tag` is this key's tag of the text (compared in constant time)."""
        return len(tag) == TAG_BYTES and hmac.compare_digest(tag, self.tag(game, position))
