"""Tab completion of the full-screen view's input line: the client's words and the legal
actions that start with what is typed, whatever its case, each once, the typed text replaced
by the candidate as written (a candidate already typed exactly is not offered)."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from cli_client import commands
from cli_client.display.fullscreen import _Words

LEGAL = ["e3-e4", "e3-e5", "E7-e8"]


def offered(typed: str, candidates: list[str] | None = None) -> list[tuple[str, int]]:
    """What Tab offers after `typed`: each candidate and where its text starts."""
    source = commands.words() + LEGAL if candidates is None else candidates
    completer = _Words(lambda: source)
    found = completer.get_completions(Document(typed), CompleteEvent(completion_requested=True))
    return [(c.text, c.start_position) for c in found]


def test_what_is_typed_completes_to_the_words_and_actions_that_start_with_it() -> None:
    assert offered("h") == [("help", -1), ("hint", -1)]
    assert offered("e3") == [("e3-e4", -2), ("e3-e5", -2)]
    assert offered("re") == [("resign", -2), ("rematch", -2)]
    assert offered("x") == []


def test_case_does_not_matter_and_the_candidate_replaces_the_typed_text() -> None:
    # The whole typed text is replaced by the candidate as it is written.
    assert offered("HE") == [("help", -2)]
    assert offered("Res") == [("resign", -3)]
    assert offered("E3-") == [("e3-e4", -3), ("e3-e5", -3)]
    assert offered("e7") == [("E7-e8", -2)]


def test_a_candidate_typed_exactly_is_not_offered_but_one_typed_in_another_case_is() -> None:
    assert offered("help") == []
    assert offered("HELP") == [("help", -4)]
    assert offered("e3-e4") == []


def test_nothing_typed_offers_everything_once_in_order() -> None:
    assert offered("", ["draw", "e3-e4", "draw", "accept"]) == [
        ("draw", 0),
        ("e3-e4", 0),
        ("accept", 0),
    ]
    assert [text for text, _start in offered("")] == commands.words() + LEGAL
