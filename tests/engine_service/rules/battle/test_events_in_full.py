"""What `apply` reports, in full: captures (5), exposure (6), the commanded Citadel (7) and
the end of the game (9), each event with its sentence, side, squares and piece kind.
"""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind, OutcomeReason
from tests.engine_service.rules.battle.helpers import RULES, captured, mv, position


def _events(text: str, move: str) -> list[Event]:
    return RULES.apply(position(text), mv(move))[1]


def test_5_a_capture_names_the_taker_and_the_taken() -> None:
    events = _events(
        "defender to move; attacker: C52 W134 A120 I127; defender: T19 L45 A11", "45x52"
    )
    taken = "Defending Light Infantry 45x52 takes the attacking Cavalry on 52."
    assert events == [captured("defender", "45x52", "cavalry", taken)]


def test_9_1_taking_the_wagon_wins_for_the_defender() -> None:
    events = _events("defender to move; attacker: W127 I101; defender: I119 A135 T19 L1", "119x127")
    message = "The defender has taken the Wagon and wins."
    taken = "Defending Infantry of the Line 119x127 takes the Wagon on 127."
    assert events == [
        captured("defender", "119x127", "wagon", taken),
        Event(EventKind.GAME_OVER, message, side="defender"),
    ]


def test_9_2_an_attacker_left_with_artillery_cannot_take_the_citadel() -> None:
    text = "defender to move; attacker: C52 W134 A120; defender: T19 L45 L10 A11"
    after, events = RULES.apply(position(text), mv("45x52"))
    message = (
        "The attacker has no Light Infantry, Infantry of the Line or Cavalry left, and "
        "Artillery cannot take the Citadel: the defender wins."
    )
    outcome = RULES.outcome(after)
    assert outcome is not None and outcome.reason is OutcomeReason.ONLY_ARTILLERY_LEFT
    assert (outcome.winner, outcome.message) == ("defender", message)
    assert events[-1] == Event(EventKind.GAME_OVER, message, side="defender")


def test_9_2_a_figure_on_square_1_still_counts() -> None:
    state = position("attacker to move; attacker: I127 W134 A120; defender: T19 L1 A9")
    assert RULES.outcome(state) is None
    assert RULES.to_act(state) == ("attacker",)


def test_6_newly_exposed_figures_are_reported_with_the_battery() -> None:
    events = _events(
        "attacker to move; attacker: A60 A54 I127 W134; defender: I16 I26 A1 T19 L45", "54-40"
    )
    assert events[1:] == [
        Event(
            EventKind.EXPOSED,
            f"The defender's Infantry of the Line on {square} is exposed to the attacker's "
            "Artillery on 40.",
            side="defender",
            cells=(square, "40"),
            piece="infantry_of_the_line",
        )
        for square in ("16", "26")
    ]


def test_7_the_newly_commanded_citadel_is_reported() -> None:
    events = _events("attacker to move; attacker: A41 I127 W134; defender: T19 C38 L45", "41-33")
    assert events[-1] == Event(
        EventKind.CITADEL_COMMANDED,
        "Attacking Artillery on 33 commands the Citadel on 19: the defender must take or drive "
        "it off before moving otherwise.",
        side="attacker",
        cells=("19", "33"),
        piece="citadel",
    )
