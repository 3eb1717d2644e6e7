"""Game of War actions as tuples (actions.py): taken apart and put together again.

Every legal action of positions from play, placements, passes and huffs included, comes
back whole from its parts; malformed tuples are refused; rules objects compare by their
options and Citadels.
"""

from __future__ import annotations

import random

import pytest

from engine_service.rules.war.actions import (
    HUFF,
    PASS,
    PLACE,
    ActionParts,
    join_action,
    split_action,
)
from engine_service.rules.war.options import WarRules, rules_of

from .helpers import RULES, options


def test_every_legal_action_comes_back_whole_from_its_parts() -> None:
    seen: set[tuple[bool, bool, bool]] = set()
    for opts in (options(), options(placement_uses_turn="false"), options(passing_allowed="true")):
        state = RULES.new_game(opts)
        rng = random.Random(5)
        for _ in range(40):
            actions = RULES.legal_actions(state)
            if not actions:
                break
            for action in actions:
                parts = split_action(action)
                assert join_action(parts) == action
                seen.add((parts.place is not None, parts.origin is not None, parts.passes))
            state = RULES.play(state, rng.choice(actions))
    # placements alone, placements with a move, moves and passes all came by
    assert {(True, False, False), (True, True, False), (False, True, False)} <= seen
    assert (False, False, True) in seen


@pytest.mark.parametrize(
    ("parts", "action"),
    [
        (ActionParts(None, None, 12, (22, 32), False), (12, 22, 32)),
        (ActionParts(None, 44, None, (), False), (PLACE, 44)),
        (ActionParts(None, 44, 12, (22,), False), (PLACE, 44, 12, 22)),
        (ActionParts(None, None, None, (), True), (PASS,)),
        (ActionParts(63, None, 12, (22,), False), (HUFF, 63, 12, 22)),
        (ActionParts(63, 44, None, (), False), (HUFF, 63, PLACE, 44)),
    ],
)
def test_parts_and_tuples_correspond(parts: ActionParts, action: tuple[int, ...]) -> None:
    assert join_action(parts) == action
    assert split_action(action) == parts


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ((HUFF, 63), "a huff needs a cell and the action that follows it"),
        ((PLACE,), "a placement needs a cell"),
        ((), "an action needs a move, a placement or a pass"),
        ((12,), "a move needs an origin and at least one landing cell"),
        ((12, 100), "cells are numbers 0..99"),
        ((PLACE, -1), "cells are numbers 0..99"),
    ],
)
def test_malformed_tuples_are_refused(action: tuple[int, ...], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        split_action(action)


def test_rules_compare_by_options_and_citadels() -> None:
    base = rules_of(options(), (5, 95))
    twin = WarRules(options(), (5, 95))  # built apart from the shared one
    assert twin is not base and twin == base and hash(twin) == hash(base)
    assert base != WarRules(options(), (4, 95))
    assert base != WarRules(options(passing_allowed="true"), (5, 95))
    assert base != "WarRules"
