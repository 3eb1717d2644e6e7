"""The matchmaker's secret key, and what it keeps secret: bot secrets and hidden data at rest.

Every replica of one installation reads the same 32-byte key (`--secret-key-file`). From it
come, by HMAC with a label, the secrets nobody may derive from what players see: the bot's
Attack-at-Dawn array, salt and search seeds (`derive`), and the key that seals hidden
information in Redis until the rules reveal it (`seal`/`open`: AES-256-GCM, a random nonce
per seal, the game and the purpose bound as associated data). A sealed value starts with a
zero byte, which no serialized message and no notation text does, so readers tell sealed
values from plain ones without a flag.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from wargame.runtime.config import ConfigError

KEY_BYTES = 32
# A random 32-byte key has about 30 distinct byte values; fewer than this is a placeholder
# ("00…", "0123…" repeated), never a generated key.
MIN_DISTINCT = 12
NONCE_BYTES = 12
SEALED = b"\x00"  # the first byte of every sealed value
SEALED_TEXT = "\x00"  # the same for sealed text (base64 after it)
MAKE_ONE = "make one with: python -c 'import secrets; print(secrets.token_hex(32))'"


def read_secret_key(path: str) -> bytes:
    """The key in `path` (64 hex digits); ConfigError for a missing, short, all-zero or
    placeholder key."""
    if not path:
        raise ConfigError(
            "the matchmaker needs its secret key: --secret-key-file "
            f"(WARGAME_MATCHMAKER_SECRET_KEY_FILE) naming a file of 64 hex digits; {MAKE_ONE}"
        )
    try:
        key = bytes.fromhex(Path(path).read_text(encoding="ascii").strip())
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not hex digits"
        raise ConfigError(f"cannot read the secret key from {path}: {reason}") from None
    check_secret_key(key, f"the secret key in {path}")
    return key


def check_secret_key(key: bytes, what: str = "the secret key") -> None:
    """ConfigError unless `key` looks like 32 random bytes."""
    if len(key) != KEY_BYTES:
        raise ConfigError(
            f"{what} has {len(key)} bytes; it needs {KEY_BYTES} (64 hex digits); {MAKE_ONE}"
        )
    if not any(key):
        raise ConfigError(f"{what} is all zeros; {MAKE_ONE}")
    if len(set(key)) < MIN_DISTINCT:
        raise ConfigError(f"{what} is a placeholder, not a random key; {MAKE_ONE}")


class SealError(Exception):
    """A sealed value that does not open with this key (another installation's, or altered)."""


class Vault:
    """Secrets derived from the matchmaker's key, and sealing at rest with it."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._aead = AESGCM(self.derive("seal at rest")) if key else None

    def derive(self, label: str) -> bytes:
        """A 32-byte secret for `label` (the same on every replica, unknowable without the key)."""
        if not self._key:
            raise SealError("the matchmaker has no secret key")
        return hmac.new(self._key, b"wargame matchmaker|" + label.encode(), hashlib.sha256).digest()

    def seal(self, data: bytes, context: str) -> bytes:
        """`data` encrypted and authenticated for `context` (a purpose and a game id)."""
        if self._aead is None:
            raise SealError("the matchmaker has no secret key")
        nonce = os.urandom(NONCE_BYTES)
        return SEALED + nonce + self._aead.encrypt(nonce, data, context.encode())

    def open(self, sealed: bytes, context: str) -> bytes:
        """The data of a sealed value; plain values are returned as they are."""
        if not sealed.startswith(SEALED):
            return sealed
        if self._aead is None:
            raise SealError("the matchmaker has no secret key")
        nonce = sealed[1 : 1 + NONCE_BYTES]
        try:
            return self._aead.decrypt(nonce, sealed[1 + NONCE_BYTES :], context.encode())
        except InvalidTag:
            raise SealError(f"a sealed value for {context} does not open with this key") from None

    def seal_text(self, text: str, context: str) -> str:
        """`seal` for text fields: the sealed bytes as base64 after a zero character."""
        return SEALED_TEXT + base64.b64encode(self.seal(text.encode(), context)).decode()

    def open_text(self, text: str, context: str) -> str:
        """The text of a sealed text field; plain text is returned as it is."""
        if not text.startswith(SEALED_TEXT):
            return text
        return self.open(base64.b64decode(text[1:]), context).decode()


def is_sealed(value: bytes | str) -> bool:
    """True for a value `Vault.seal` or `Vault.seal_text` made."""
    return value[:1] in (SEALED, SEALED_TEXT)
