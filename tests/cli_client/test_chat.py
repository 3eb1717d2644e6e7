"""The client shows chat lines safely whatever a server sends: nothing a terminal obeys."""

from __future__ import annotations

from cli_client.chat import line_text, safe
from wargame.v1 import matchmaker_pb2


def test_a_line_loses_escapes_bells_and_bidirectional_overrides() -> None:
    assert safe("a\x1b[2Jb\x07c\x9bd\u202ee\u200bf") == "a[2Jbcdef"
    assert safe(" two\r\n\tlines ") == "two lines"
    assert safe("Ça va? 👍") == "Ça va? 👍"


def test_the_speaker_and_the_text_are_both_cleaned() -> None:
    line = matchmaker_pb2.ChatLine(side="south", name="x", text="gg\x1b]0;title\x07")
    assert line_text(line, "South (\x1b[31mx)") == "[chat] South ([31mx): gg]0;title"
