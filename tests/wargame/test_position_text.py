"""The grammar every position text shares (`wargame/position_text.py`), written once for the
engine, which writes and reads texts, and the matchmaker, which splits them to withhold
secrets (docs/positions.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import engine_service.rules.position as engine_position
import matchmaker.states as matchmaker_states
from wargame import position_text
from wargame.position_text import (
    PositionError,
    head_and_body,
    pair_of,
    quote,
    sections,
    split_sections,
)

VALUES = st.text(alphabet='ab ;:="\\', max_size=8)
SECTION = st.lists(
    st.one_of(st.text(alphabet="ab :=", min_size=1, max_size=6), VALUES.map(quote)),
    min_size=1,
    max_size=4,
).map("".join)


def test_both_services_split_texts_with_the_one_grammar() -> None:
    assert engine_position.sections is position_text.sections
    assert engine_position.PositionError is PositionError
    assert vars(matchmaker_states)["position_text"] is position_text
    assert vars(matchmaker_states)["SECRET_PHASES"] is position_text.SECRET_PHASES


@given(st.lists(SECTION, min_size=1, max_size=5))
def test_sections_split_outside_quotes_and_join_back_to_the_text(parts: list[str]) -> None:
    text = ";".join(parts)
    assert split_sections(text) == parts
    assert sections(text) == [part.strip() for part in parts if part.strip()]


@given(st.text(alphabet='a;"\\', max_size=12))
def test_any_text_splits_back_to_itself_or_is_refused(text: str) -> None:
    try:
        parts = split_sections(text)
    except PositionError as error:
        assert "not closed" in str(error)
        return
    assert ";".join(parts) == text


def test_a_quote_left_open_is_refused_not_skipped() -> None:
    # A text the engine never writes: splitting it must not drop the stray quote (which
    # would change the text a viewer gets).
    for text in ('turn: red deploy_reveal 0; revealed red: "a2=A', 'a; b="x\\"'):
        with pytest.raises(PositionError):
            split_sections(text)
        with pytest.raises(PositionError):
            sections(text)


def test_a_section_has_a_head_and_a_body() -> None:
    assert head_and_body(" turn: red movement 2") == ("turn", " red movement 2")
    assert head_and_body("revealed red: a2=A") == ("revealed red", " a2=A")
    assert head_and_body("board 8x8") == ("", "board 8x8")
    assert head_and_body('game: end="a: b"') == ("game", ' end="a: b"')


@given(VALUES)
def test_a_quoted_value_reads_back(value: str) -> None:
    assert pair_of(f"note={quote(value)}") == ("note", value)
