"""Every illegal Troop move (section 7) is refused with the rule it breaks, in words.

One case per way a Troop move can be wrong: the message says which Troop, where it cannot
go and why; the refusal cites the section and lists what it may do instead.
"""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError

from .helpers import RULES, options, position

CASES = [
    (
        "step onto a man",
        "Tc3 tc4 Kj1 ka10",
        "",
        {},
        "c3-c4",
        "DESTINATION_OCCUPIED",
        "'c3-c4': the South Troop on c3 cannot go to c4: a Troop steps forward only to an "
        "empty square; the South Troop on c3 has no legal move",
        "7",
        ("Kj1-j2", "Kj1-i1", "Kj1-i2"),
    ),
    (
        "double step after moving",
        "Tc3 Kj1 ka10",
        "moved=c3",
        {},
        "c3-c5",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3-c5': the South Troop on c3 cannot go to c5: only a Troop that has never moved "
        "double-steps",
        "7.2",
        ("c3-c4",),
    ),
    (
        "double step by a Van Troop (rear_troops_only)",
        "Tc3 Kj1 ka10",
        "",
        {"double_step": "rear_troops_only"},
        "c3-c5",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3-c5': the South Troop on c3 cannot go to c5: only Rear Troops double-step "
        "(double_step = rear_troops_only)",
        "7.2",
        ("c3-c4",),
    ),
    (
        "double step over a man",
        "Tc2 tc3 Kj1 ka10",
        "",
        {},
        "c2-c4",
        "PATH_BLOCKED",
        "'c2-c4': the South Troop on c2 cannot go to c4: a double step needs both squares "
        "empty; the South Troop on c2 has no legal move",
        "7.2",
        ("Kj1-j2", "Kj1-i1", "Kj1-i2"),
    ),
    (
        "double step onto a man",
        "Tc2 tc4 Kj1 ka10",
        "",
        {},
        "c2-c4",
        "PATH_BLOCKED",
        "'c2-c4': the South Troop on c2 cannot go to c4: a double step needs both squares empty",
        "7.2",
        ("c2-c3",),
    ),
    (
        "diagonal step without a capture",
        "Tc3 Kj1 ka10",
        "",
        {},
        "c3-d4",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3-d4': the South Troop on c3 cannot go to d4: a Troop moves diagonally only to "
        "capture; there is no en passant",
        "7.3, 7.7",
        ("c3-c4", "c3-c5"),
    ),
    (
        "diagonal step without a capture (en_passant = displacement_only)",
        "Tc3 Kj1 ka10",
        "",
        {"en_passant": "displacement_only"},
        "c3-d4",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3-d4': the South Troop on c3 cannot go to d4: a Troop moves diagonally only to capture",
        "7.3",
        ("c3-c4", "c3-c5"),
    ),
    (
        "backward jump",
        "Tc5 Kj1 ka10 tb4",
        "",
        {},
        "c5:a3",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c5:a3': the South Troop on c5 cannot go to a3: Troops jump only diagonally forward",
        "7.6",
        ("c5-c6",),
    ),
    (
        "jump over a Mortar",
        "Tc3 Kj1 ka10 md4",
        "",
        {},
        "c3:e5",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3:e5': the South Troop on c3 cannot go to e5: a Troop jumps only over an enemy "
        "Troop; d4 holds the North Mortar",
        "7.4",
        ("c3-c4", "c3-c5", "c3xd4"),
    ),
    (
        "jump over nothing",
        "Tc3 Kj1 ka10",
        "",
        {},
        "c3:e5",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3:e5': the South Troop on c3 cannot go to e5: a Troop jumps only over an enemy "
        "Troop; d4 holds nothing",
        "7.4",
        ("c3-c4", "c3-c5"),
    ),
    (
        "jump onto a man",
        "Tc3 Kj1 ka10 td4 te5",
        "",
        {},
        "c3:e5",
        "DESTINATION_OCCUPIED",
        "'c3:e5': the South Troop on c3 cannot go to e5: a jump lands on an empty square",
        "7.4",
        ("c3-c4", "c3-c5", "c3xd4"),
    ),
    (
        "no Troop move at all",
        "Tc3 Kj1 ka10",
        "",
        {},
        "c3-c6",
        "ILLEGAL_MOVE_GEOMETRY",
        "'c3-c6': the South Troop on c3 cannot go to c6: a Troop steps forward, double-steps "
        "on its first move, captures diagonally forward or jumps an enemy Troop diagonally "
        "forward",
        "7",
        ("c3-c4", "c3-c5"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_an_illegal_troop_move_names_the_rule(
    case: tuple[str, str, str, dict[str, str], str, str, str, str, tuple[str, ...]],
) -> None:
    _title, men, extra, opts, text, reason, message, rule, alternatives = case
    state = position(men, extra=extra, opts=options(**opts))
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, text)
    refusal = error.value
    assert (refusal.reason, refusal.message, refusal.rule) == (reason, message, rule)
    assert refusal.alternatives == alternatives


def test_north_troops_go_the_other_way() -> None:
    state = position("td8 Tc4 Kj1 ka10", side="N")
    with pytest.raises(RuleError) as error:
        RULES.parse_action(state, "d8-d9")
    assert error.value.reason == "ILLEGAL_MOVE_GEOMETRY"
    assert "the North Troop on d8 cannot go to d9" in error.value.message
    assert error.value.alternatives == ("d8-d7", "d8-d6")


@pytest.mark.parametrize(
    ("men", "opts", "text"),
    [
        ("Tc5 Kj1 ka10 tb4", {"backward_jumps": "true"}, "c5:a3"),
        ("Tc2 Kj1 ka10", {"double_step": "rear_troops_only"}, "c2-c4"),
        ("Tc3 Kj1 ka10 td4", {}, "c3xd4"),
    ],
    ids=["a backward jump with backward_jumps", "a Rear Troop's double step", "a capture"],
)
def test_what_the_rules_allow_is_not_refused(men: str, opts: dict[str, str], text: str) -> None:
    state = position(men, opts=options(**opts))
    RULES.apply(state, RULES.parse_action(state, text))
