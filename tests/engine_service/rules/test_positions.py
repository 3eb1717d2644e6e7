"""Position texts (docs/positions.md): the shared words, every example of the document, the
repetition history written as steps back, and texts that must be refused.

The round trip and the canonical form over random games of every game are in the
conformance suite (`test_conformance.py`).
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.position import (
    PositionError,
    keys_text,
    quote,
    read_position,
    sections,
    unquote,
    words,
    write_position,
)

DOC = Path(__file__).parents[3] / "docs" / "positions.md"
RULESETS = rulesets(bytes(range(32)))


def _examples() -> list[tuple[str, str]]:
    """(game, text) of every example block under a game's heading in the document (the
    blocks with `<placeholders>` are grammars, the `sh` blocks commands)."""
    heading = {
        "## The Game of War": "war",
        "## The Game of Battle": "battle",
        "## Napoleonic Chess": "napoleonic",
    }
    found = []
    game = ""
    blocks = re.split(r"^```", DOC.read_text(encoding="utf-8"), flags=re.M)
    for number, block in enumerate(blocks):
        if number % 2 == 0:  # prose between the blocks
            for line in block.splitlines():
                game = heading.get(line.strip(), game)
        elif game and not block.startswith("sh") and "<" not in block:
            found.append((game, block.strip()))
    return found


EXAMPLES = _examples()


def test_the_document_has_an_example_of_every_game() -> None:
    assert {game for game, _text in EXAMPLES} == {"war", "battle", "napoleonic"}


@pytest.mark.parametrize(("game_id", "text"), EXAMPLES, ids=[g for g, _t in EXAMPLES])
def test_every_example_of_the_document_reads_and_is_canonical(game_id: str, text: str) -> None:
    game = read_position(RULESETS[game_id], text)
    assert write_position(game) == text


@pytest.mark.parametrize("value", ["plain", "", "two words", 'a "quote"', "back\\slash", "a;b"])
def test_values_are_quoted_when_they_must_be(value: str) -> None:
    written = quote(value)
    assert unquote(written) == value
    assert words(f"k={written} next=1") == [f"k={written}", "next=1"]
    assert sections(f"a: k={written}; b: 1") == [f"a: k={written}", "b: 1"]


def test_an_option_with_spaces_travels_in_quotes() -> None:
    war = RULESETS["war"]
    custom = "9k/10/10/t9/10/10/10/10/10/K8M S -:-"
    game: Game[Any] = Game(war, war.new_game(war.resolve_options({"initial_position": custom})))
    text = write_position(game)
    assert f'initial_position="{custom}"' in text
    assert read_position(war, text) == game


def test_only_options_off_their_defaults_are_written() -> None:
    napoleonic = RULESETS["napoleonic"]
    # The scenario's own values are its defaults: attack_at_dawn sets the deployment.
    options = napoleonic.resolve_options({"scenario": "attack_at_dawn", "turn_limit": "40"})
    game: Game[Any] = Game(napoleonic, napoleonic.new_game(options))
    text = write_position(game)
    assert text.endswith("; options: scenario=attack_at_dawn turn_limit=40")
    assert read_position(napoleonic, text) == game


@pytest.mark.parametrize("game_id", ["war", "battle"])
def test_a_history_no_move_explains_is_written_as_keys(game_id: str) -> None:
    ruleset = RULESETS[game_id]
    rng = random.Random(5)
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    while len(game.state.history) < 4:
        action = ruleset.random_action(game.state, rng)
        game, _ = game.apply(ruleset.actor(game.state, action), action)
        if game.outcome is not None:  # pragma: no cover - the seed plays on
            pytest.fail("the game ended before a history grew")
    made_up = (12345, 67890, *game.state.history[2:])
    if game_id == "war":
        state = game.state._replace(history=made_up)
    else:
        state = type(game.state).make(
            game.state.board,
            game.state.side,
            game.state.quiet,
            made_up,
            options=game.state.options,
            rules=game.state.rules,
        )
    odd = replace(game, state=state)
    text = write_position(odd)
    assert f"histkeys={keys_text([67890, 12345])}" in text
    assert read_position(ruleset, text).state.history == made_up


@pytest.mark.parametrize(
    ("game_id", "text", "words_in_reason"),
    [
        ("war", "10/10/10/10/10/10/10/10/10/10 X -:-", "neither S nor N"),
        ("war", "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10 ply=x", "ply"),
        ("war", "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10 hist=AAAB", "step 1"),
        ("war", "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10 end=resign:east", "end="),
        ("war", 'k9/10/10/10/10/10/10/10/10/K9 S -:- initial_position="open', "not closed"),
        ("battle", "W129t19 a compulsion=huff", "compulsion"),
        ("battle", "W129t19i7i8i11i12i13i14 a", "at most 5"),
        ("napoleonic", "board 8x8; red: a1=G; black: h8=G; turn: red dance 3", "phase"),
        (
            "napoleonic",
            "board 8x8; red: a1=G; black: h8=G; turn: red movement 0; sealed black: x",
            "phase movement",
        ),
    ],
)
def test_texts_that_could_not_arise_are_refused_with_a_reason(
    game_id: str, text: str, words_in_reason: str
) -> None:
    with pytest.raises(RuleError) as refusal:
        read_position(RULESETS[game_id], text)
    assert refusal.value.reason == "INVALID_STATE" and refusal.value.field == "position"
    assert words_in_reason in refusal.value.message, refusal.value.message


def test_unquote_refuses_an_open_quote() -> None:
    with pytest.raises(PositionError):
        unquote('"open')


def test_a_copy_that_withholds_a_sealed_array_reads_with_who_has_sealed() -> None:
    napoleonic = RULESETS["napoleonic"]
    options = napoleonic.resolve_options(
        {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    )
    game: Game[Any] = Game(napoleonic, napoleonic.new_game(options))
    seal = napoleonic.random_action(game.state, random.Random(1))
    assert seal is not None
    game, _ = game.apply(seal.side, seal)
    text = write_position(game)
    hidden = re.sub(rf"(sealed {seal.side}: )[^;]*", r"\1withheld", text)
    assert hidden != text
    copy = read_position(napoleonic, hidden)
    assert copy.to_act() == game.to_act() and len(copy.to_act()) == 1
    assert write_position(copy) == hidden
