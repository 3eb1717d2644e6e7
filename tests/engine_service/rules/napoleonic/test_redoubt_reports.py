"""What a redoubt's construction reports (10.4): the builder, the square, the unit and how
many turns of occupation it takes; and why a redoubt cannot be begun."""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import BeginRedoubt
from tests.engine_service.rules.napoleonic.helpers import RULESET, play_text
from tests.engine_service.rules.napoleonic.test_redoubts import start


def test_10_4_beginning_a_redoubt_names_builder_square_unit_and_turns() -> None:
    _state, events = play_text(RULESET, start(redoubt_build_turns="3"), ["red redoubt d4"])
    (event,) = events
    assert (event.kind, event.text, event.side, event.cells, event.unit) == (
        EventKind.REDOUBT_STARTED,
        "Red begins a redoubt on d4 (3 turns of occupation to complete).",
        "red",
        ("d4",),
        "R_I",
    )


def test_10_4_a_redoubt_is_begun_only_under_ones_own_unit() -> None:
    with pytest.raises(RuleError) as error:
        RULESET.apply(start(), BeginRedoubt("red", "d7"))
    assert (error.value.reason, error.value.message) == (
        Reason.NOT_OWN_UNIT,
        "black infantry on d7 is not red's: red cannot dig there",
    )
