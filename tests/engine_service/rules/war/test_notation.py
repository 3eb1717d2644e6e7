"""Section 2: notation printed and read back, forgiving input, helpful refusals."""

from __future__ import annotations

import random

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.war.notation import man_on

from .helpers import RULES, act, notations, options, playout, position


def test_section_2_examples_print_as_written() -> None:
    assert "d9-d7" in notations(position("td9 Ka1", side="N"))
    assert {"c5xd6", "Md1xd6", "c5:e7"} == notations(position("Tc5 td6 Md1 ka10"))
    assert "a3:c5:e7" in notations(position("Ta3 tb4 td6 Kj1"))
    assert "F@e5" in notations(position("Ka1 ka10", reserves="F:-"))


def test_citadel_win_is_marked_hash_c() -> None:
    state = act(position("Tf9 ma10 Ka1"), "f9-f10")
    legal = notations(state)
    assert "Ma10xf10" in legal and "Ma10-a9#C" in legal
    assert RULES.parse_action(state, "Ma10-a9#C") == RULES.parse_action(state, "Ma10-a9")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("md1xd6", "Md1xd6"),
        ("MD1XD6", "Md1xd6"),
        ("Md1-d6", "Md1xd6"),
        ("d1d6", "Md1xd6"),
        ("Tc5xd6", "c5xd6"),
        ("tc5:e7", "c5:e7"),
        ("C5:E7", "c5:e7"),
        ("c5e7", "c5:e7"),
        ("  c5xd6  ", "c5xd6"),
        ("c5xd6!", "c5xd6"),
    ],
)
def test_input_is_forgiving(text: str, canonical: str) -> None:
    state = position("Tc5 td6 Md1 ka10")
    assert RULES.format_action(state, RULES.parse_action(state, text)) == canonical


def test_placement_accepts_either_case() -> None:
    state = position("Ka1 ka10", reserves="F:-")
    for text in ("F@e5", "f@E5", "@e5"):
        assert RULES.format_action(state, RULES.parse_action(state, text)) == "F@e5"


def test_a_chain_may_be_named_by_its_ends_when_that_is_unique() -> None:
    state = position("Ta3 tb4 td6 Kj1")
    assert RULES.format_action(state, RULES.parse_action(state, "a3:e7")) == "a3:c5:e7"


def test_an_ambiguous_chain_lists_the_candidates() -> None:
    state = position("Te3 td4 tf4 td6 tf6 Kj1")
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, "e3:e7")
    assert error.value.reason == "NOTATION_AMBIGUOUS"
    assert "write every landing square" in error.value.message
    assert set(error.value.alternatives) == {"e3:c5:e7", "e3:g5:e7"}


@pytest.mark.parametrize(
    ("text", "reason", "words"),
    [
        ("", "NOTATION_INVALID", "empty"),
        ("hello", "NOTATION_INVALID", "accepted: moves like e3-e4"),
        ("k5-k6", "UNKNOWN_CELL", "'k5'"),
        ("a11-a12", "UNKNOWN_CELL", "a11"),
        ("Ge1-e2", "NOTATION_INVALID", "General"),
        ("Md1-d9", "PATH_BLOCKED", "blocked at d6 rule 6, alternatives: Md1xd6"),
        ("Md1-e2", "ILLEGAL_MOVE_GEOMETRY", "rank or file"),
        ("e4-e5", "NO_PIECE", "no man on e4"),
        ("d6-d5", "NO_PIECE", "not South's"),
        ("c5-c6", "CAPTURE_COMPULSORY", "rule 7.1, alternatives: Md1xd6, c5xd6"),
        ("e3-e4 e4-e5", "NOTATION_INVALID", "unexpected"),
    ],
)
def test_refusals_say_what_was_wrong_and_what_is_accepted(
    text: str, reason: str, words: str
) -> None:
    state = position("Tc5 td6 Md1 Ke1 ka10")
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, text)
    assert error.value.reason == reason
    # The rule in words, and beside it its section, the alternatives and the forms.
    problem = error.value
    beside = [
        f"rule {problem.rule}" if problem.rule else "",
        f"alternatives: {', '.join(problem.alternatives)}" if problem.alternatives else "",
        f"accepted: {problem.accepted}" if problem.accepted else "",
    ]
    assert words in " ".join([problem.message, ", ".join(part for part in beside if part)])


def test_immobile_and_blocked_men_are_explained() -> None:
    state = position("Tc10 Ma1 Tb1 ka10 ma5", opts=options(backward_jumps="true"))
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, "c10-c9")
    assert error.value.reason == "PIECE_IMMOBILE" and "final rank" in error.value.message
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, "Ma1-b1")
    assert error.value.reason == "DESTINATION_OCCUPIED"
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, "Ma1-a7")
    assert error.value.reason == "PATH_BLOCKED" and "a5" in error.value.message


def test_the_side_not_to_move_gets_the_literal_action() -> None:
    state = position("Tc5 td6 Md1 ka10")
    action = RULES.parse_action(state, "d6-d5", "north")
    assert RULES.format_action(state, action) == "d6-d5"
    with pytest.raises(RuleError):
        RULES.parse_action(state, "d6-d5", "west")


@pytest.mark.parametrize(
    ("opts", "plies"),
    [
        ({}, 150),
        ({"compulsion": "huff", "passing_allowed": "true"}, 150),
        ({"placement_uses_turn": "false", "en_passant": "displacement_only"}, 60),
        ({"backward_jumps": "true", "jump_over_non_troops": "true"}, 150),
    ],
    ids=["defaults", "huff+pass", "place-then-move+ep", "backward+any"],
)
def test_every_legal_action_round_trips(opts: dict[str, str], plies: int) -> None:
    checked = 0
    for seed in range(3):
        rng = random.Random(seed)
        for ply, (state, _) in enumerate(playout(RULES.new_game(options(**opts)), rng, plies)):
            actions = RULES.legal_actions(state)
            if ply % 10 == 0:
                texts = [RULES.format_action(state, a) for a in actions]
                assert len(set(texts)) == len(texts), "two actions print alike"
            for action in rng.sample(actions, min(30, len(actions))):
                text = RULES.format_action(state, action)
                assert RULES.parse_action(state, text) == action, text
                assert RULES.parse_action(state, text.upper()) == action, text
                checked += 1
    assert checked > 1000


def test_the_man_on_a_square_is_named_by_kind() -> None:
    state = position("Ka1 md6")
    assert (man_on(state.board, 0), man_on(state.board, 53)) == ("King", "Mortar")
    assert man_on(state.board, 1) == "nothing"
