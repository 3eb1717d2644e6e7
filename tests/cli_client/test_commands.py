"""What typed lines mean: client words, deployment placements, or notation for the engine."""

from __future__ import annotations

import pytest

from cli_client.commands import Command, help_lines, is_placements, parse, words


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", Command("empty")),
        ("   ", Command("empty")),
        ("moves", Command("moves")),
        ("moves e3", Command("moves", "e3")),
        ("MOVES e3", Command("moves", "e3")),
        ("hint", Command("hint")),
        ("resign", Command("resign")),
        ("resign!", Command("resign", "!")),  # no question asked
        ("rematch", Command("rematch")),
        ("again", Command("rematch")),
        ("draw", Command("draw")),
        ("accept", Command("accept")),
        ("decline", Command("decline")),
        ("help", Command("help")),
        ("?", Command("help")),
        ("quit", Command("quit")),
        ("exit", Command("quit")),
        ("board", Command("board")),
        ("flip", Command("flip")),
        ("e3-e4", Command("action", "e3-e4")),
        ("  Md1xd6 ", Command("action", "Md1xd6")),
        ("36-51", Command("action", "36-51")),
        ("attack d4>e5", Command("action", "attack d4>e5")),
        ("end", Command("action", "end")),
        ("draw now", Command("action", "draw now")),  # not the client's word: the engine reads it
        (
            "a2=A b2=C",
            Command("action", "a2=A b2=C"),
        ),  # placements mean nothing outside a deployment
    ],
)
def test_lines_outside_a_deployment(line: str, expected: Command) -> None:
    assert parse(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a2=A b2=C", Command("place", "a2=A b2=C")),
        ("a2=A, b2=C", Command("place", "a2=A, b2=C")),
        ("army", Command("army")),
        ("clear", Command("clear")),
        ("commit", Command("commit")),
        ("commit a2=A b2=C", Command("commit", "a2=A b2=C")),
        ("commit 0123abcd", Command("action", "commit 0123abcd")),
        ("help", Command("help")),
    ],
)
def test_lines_during_a_secret_deployment(line: str, expected: Command) -> None:
    assert parse(line, deploying=True) == expected


def test_placements_are_recognised_strictly() -> None:
    assert is_placements("a2=A")
    assert is_placements("aa10=G b3=i")
    assert not is_placements("a2=AB")
    assert not is_placements("a2-a3")
    assert not is_placements("")


def test_help_lists_the_words_and_the_games_notation() -> None:
    lines = help_lines("Squares a1..j10: e3-e4", deploying=False)
    text = "\n".join(lines)
    for word in ("moves", "hint", "draw", "accept", "resign", "help", "quit"):
        assert word in text
    assert lines[-1] == "Notation: Squares a1..j10: e3-e4"
    assert "commit" not in text
    assert "commit" in "\n".join(help_lines("", deploying=True))


def test_board_flip_turns_the_board() -> None:
    assert parse("board flip") == Command("flip")
    assert parse("Board Flip") == Command("flip")
    assert parse("board") == Command("board")
    assert "board flip" in "\n".join(help_lines(""))


def test_the_words_to_complete() -> None:
    assert "hint" in words() and "commit" not in words()
    assert "commit" in words(deploying=True)
    assert "hint" not in words(spectator=True) and "moves" in words(spectator=True)
