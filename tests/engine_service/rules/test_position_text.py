"""The shared parts of position texts (docs/positions.md, "Parts every game shares"), pinned
piece by piece."""

from __future__ import annotations

import pytest

from engine_service.rules.position import PositionError, unb64, words

# --- words and sections ---------------------------------------------------------------------


@pytest.mark.parametrize("space", ["\x0b", "\x0c", "\u00a0"])
def test_words_split_alike_whether_or_not_a_value_is_quoted(space: str) -> None:
    # Unquoted texts split at any whitespace (str.split); a quote elsewhere in the text
    # must not turn the same separator into "a quoted value is not closed".
    assert words(f"a=1{space}b=2") == ["a=1", "b=2"]
    assert words(f'a="1 2"{space}b=2') == ['a="1 2"', "b=2"]


@pytest.mark.parametrize("text", ["AAAA!", "+/8", "AA AA", "AA\nA", "A=AA"])
def test_a_text_outside_the_base64url_alphabet_is_refused(text: str) -> None:
    # RFC 4648 base64url: letters, digits, "-" and "_", padding only at the end; "+" and
    # "/" belong to the other alphabet.
    with pytest.raises(PositionError) as refusal:
        unb64(text, "hist")
    assert str(refusal.value) == f"hist: {text!r} is not base64url"
