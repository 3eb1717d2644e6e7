"""Ruling 3, `forced_reply = lose_figure`: a figure exposed before the move and still
exposed after it is lost; one the move relieves, by taking the battery, is not.
"""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind
from engine_service.rules.battle.legal import Duty
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    captured,
    exposed_squares,
    mv,
    position,
    sq,
)

# The attacking battery on 33 exposes the Light Infantry on 8; the Infantry of the Line on
# 18 stands outside its range and can take it.
BATTERY_TAKEN = "defender to move; attacker: A33 I127 W134; defender: T22 I18 L8 C45"


def test_ruling_3_taking_the_battery_saves_the_exposed_figure() -> None:
    state = position(BATTERY_TAKEN, forced_reply="lose_figure")
    assert exposed_squares(state, "defender") == {8}
    after, events = RULES.apply(state, mv("18x33"))
    assert {p.cell for p in RULES.pieces(after) if p.side == "defender"} == {"22", "33", "8", "45"}
    taken = "Defending Infantry of the Line 18x33 takes the attacking Artillery on 33."
    assert events == [captured("defender", "18x33", "artillery", taken)]


def test_ruling_3_a_move_that_leaves_it_exposed_loses_it() -> None:
    state = position(BATTERY_TAKEN, forced_reply="lose_figure")
    after, events = RULES.apply(state, mv("45-44"))
    assert {p.cell for p in RULES.pieces(after) if p.side == "defender"} == {"22", "18", "44"}
    assert events[1] == Event(
        EventKind.CAPTURED,
        "The defender's Light Infantry on 8, left exposed to enemy Artillery, is lost "
        "(forced_reply=lose_figure).",
        side="defender",
        cells=("8",),
        piece="light_infantry",
    )


def test_ruling_3_no_duty_but_the_figure_is_known_exposed() -> None:
    found = analysis(position(BATTERY_TAKEN, forced_reply="lose_figure"))
    assert found.duty is Duty.NONE and found.exposed == {sq(8)}
    assert not found.lapsed
