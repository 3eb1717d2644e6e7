"""The matchmaker's secret key and sealing at rest, in process: what a key file must hold,
and what a matchmaker without a key says when asked to seal."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from matchmaker.vault import SealError, Vault, read_secret_key
from wargame.runtime.config import ConfigError

pytestmark = pytest.mark.unit


def test_a_key_file_of_64_hex_digits_gives_its_32_bytes(tmp_path: Path) -> None:
    key = secrets.token_bytes(32)
    path = tmp_path / "secret.key"
    path.write_text(key.hex() + "\n", encoding="ascii")
    assert read_secret_key(str(path)) == key


def test_a_key_file_with_a_character_beyond_ascii_is_not_hex_digits(tmp_path: Path) -> None:
    """The file is read as ASCII whatever the locale: a trailing non-breaking space (UTF-8),
    which a UTF-8 reading would strip as whitespace, makes the file unreadable as a key on
    every replica alike."""
    path = tmp_path / "secret.key"
    path.write_bytes(secrets.token_bytes(32).hex().encode() + "\u00a0\n".encode())
    with pytest.raises(ConfigError) as refused:
        read_secret_key(str(path))
    assert str(refused.value) == f"cannot read the secret key from {path}: not hex digits"


def test_without_a_key_nothing_is_sealed_and_the_refusal_says_why() -> None:
    with pytest.raises(SealError) as refused:
        Vault(b"").seal(b"hidden deployment", "state|g1")
    assert str(refused.value) == "the matchmaker has no secret key"


def test_without_a_key_a_sealed_value_does_not_open_and_the_refusal_says_why() -> None:
    """A replica started without the key meets a value another replica sealed: it cannot
    open it and says it lacks the key (not that the value was altered); plain values
    still read as they are."""
    sealed = Vault(secrets.token_bytes(32)).seal(b"hidden deployment", "state|g1")
    keyless = Vault(b"")
    assert keyless.open(b"plain state", "state|g1") == b"plain state"
    with pytest.raises(SealError) as refused:
        keyless.open(sealed, "state|g1")
    assert str(refused.value) == "the matchmaker has no secret key"


def test_without_a_key_file_the_refusal_says_how_to_name_and_make_one() -> None:
    with pytest.raises(ConfigError) as refused:
        read_secret_key("")
    assert str(refused.value) == (
        "the matchmaker needs its secret key: --secret-key-file "
        "(WARGAME_MATCHMAKER_SECRET_KEY_FILE) naming a file of 64 hex digits; "
        "make one with: python -c 'import secrets; print(secrets.token_hex(32))'"
    )
