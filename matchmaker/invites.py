"""Invite codes: 80 random bits a person can read out and type.

A code is 16 characters of Crockford's base32 (digits and letters without I, L, O, U) in
four dash-separated groups, "7K3M-9QX2-HF4P-T8WZ". Reading one back forgives what people
get wrong: case, missing or extra dashes and spaces, I or L for 1, O for 0. The normalized
form (16 characters, no dashes) is what Redis stores; wrong codes are limited per player,
per address and in all (`limits.py`), so guessing one of 2^80 is hopeless. A right code is
never refused by those limits: a miss alone is charged to them.
"""

from __future__ import annotations

import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
LENGTH = 16
GROUP = 4
_CONFUSED = str.maketrans({"I": "1", "L": "1", "O": "0"})
_SEPARATORS = str.maketrans("", "", "- _.")


def new_code() -> str:
    """A fresh invite code, as people see it (groups of four)."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
    return "-".join(raw[i : i + GROUP] for i in range(0, LENGTH, GROUP))


def normalize(text: str) -> str | None:
    """The stored form of a typed code, or None if it cannot be one."""
    if len(text) > 4 * LENGTH:
        return None
    raw = text.upper().translate(_SEPARATORS).translate(_CONFUSED)
    if len(raw) != LENGTH or any(char not in ALPHABET for char in raw):
        return None
    return raw
