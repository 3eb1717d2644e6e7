"""What a redoubt's construction reports (10.4): the builder, the square, the unit and how
many turns of occupation it takes."""

from __future__ import annotations

from engine_service.rules.base import EventKind
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
