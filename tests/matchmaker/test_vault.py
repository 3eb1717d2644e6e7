"""The matchmaker's secret key and sealing at rest, in process: what a key file must hold,
and what a matchmaker without a key says when asked to seal."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from matchmaker.vault import SealError, Vault, check_secret_key, is_sealed, read_secret_key
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


def test_a_missing_key_file_is_refused_with_the_systems_reason(tmp_path: Path) -> None:
    path = tmp_path / "absent.key"
    with pytest.raises(ConfigError) as refused:
        read_secret_key(str(path))
    assert (
        str(refused.value) == f"cannot read the secret key from {path}: No such file or directory"
    )


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (bytes(range(16)), "has 16 bytes; it needs 32 (64 hex digits)"),
        (bytes(32), "is all zeros"),
        (bytes(range(8)) * 4, "is a placeholder, not a random key"),
    ],
)
def test_a_key_file_that_is_not_32_random_bytes_is_refused_naming_the_file(
    tmp_path: Path, key: bytes, problem: str
) -> None:
    path = tmp_path / "secret.key"
    path.write_text(key.hex(), encoding="ascii")
    with pytest.raises(ConfigError) as refused:
        read_secret_key(str(path))
    assert str(refused.value) == (
        f"the secret key in {path} {problem}; "
        "make one with: python -c 'import secrets; print(secrets.token_hex(32))'"
    )


def test_a_sealed_value_opens_with_the_key_for_its_context_only() -> None:
    """Every replica of one installation opens what another sealed, for the same purpose
    and game; the same value read for another game, or with another key, is refused."""
    key = secrets.token_bytes(32)
    sealed = Vault(key).seal(b"hidden deployment", "state|g1")
    assert is_sealed(sealed) and b"hidden deployment" not in sealed
    assert Vault(key).open(sealed, "state|g1") == b"hidden deployment"
    for vault, context in ((Vault(key), "state|g2"), (Vault(secrets.token_bytes(32)), "state|g1")):
        with pytest.raises(SealError) as refused:
            vault.open(sealed, context)
        assert str(refused.value) == f"a sealed value for {context} does not open with this key"


def test_sealed_text_is_text_that_opens_to_what_was_sealed() -> None:
    vault = Vault(secrets.token_bytes(32))
    sealed = vault.seal_text("e2-e4 hidden", "move|g1")
    assert is_sealed(sealed) and "hidden" not in sealed
    assert vault.open_text(sealed, "move|g1") == "e2-e4 hidden"
    assert vault.open_text("plain text", "move|g1") == "plain text"
    assert not is_sealed("plain text") and not is_sealed(b"plain")


# A key and what this version derived and sealed with it: a later version (another
# replica after an upgrade) must derive the same secrets and open what is already stored.
KNOWN_KEY = bytes(range(101, 133))
KNOWN_BOT_SEED = "f33560f864b2e2f00ac5c834090130a461089620e9a8d3932bb6746c99360ee6"
KNOWN_SEALED = (
    "00cf13ea994f478fbf0637d09f9ce2fe48449b42ec0afe29db2d5392d03ac2e7f7a23fad6f98b9b9c92fd5e9f95c"
)


def test_secrets_derived_from_a_key_stay_the_same_across_versions() -> None:
    vault = Vault(KNOWN_KEY)
    assert vault.derive("bot seed|g1|south").hex() == KNOWN_BOT_SEED
    assert vault.derive("bot seed|g1|north") != vault.derive("bot seed|g1|south")


def test_a_value_sealed_by_an_earlier_version_still_opens() -> None:
    assert Vault(KNOWN_KEY).open(bytes.fromhex(KNOWN_SEALED), "state|g1") == b"hidden deployment"


def test_without_a_key_no_secret_is_derived_and_the_refusal_says_why() -> None:
    with pytest.raises(SealError) as refused:
        Vault(b"").derive("bot seed|g1|south")
    assert str(refused.value) == "the matchmaker has no secret key"


def test_a_key_given_directly_is_refused_as_the_secret_key() -> None:
    """The replica checks a key from its settings (not from a file) under a plain name."""
    with pytest.raises(ConfigError) as refused:
        check_secret_key(bytes(range(16)))
    assert str(refused.value).startswith("the secret key has 16 bytes; it needs 32")


def test_a_key_of_12_distinct_bytes_is_random_enough_and_of_11_a_placeholder() -> None:
    twelve = bytes(range(12)) * 2 + bytes(range(1, 9))
    eleven = bytes(range(1, 12)) * 2 + bytes(range(1, 11))
    assert len(twelve) == len(eleven) == 32
    assert (len(set(twelve)), len(set(eleven))) == (12, 11)
    check_secret_key(twelve)
    with pytest.raises(ConfigError) as refused:
        check_secret_key(eleven)
    assert "is a placeholder, not a random key" in str(refused.value)
