"""A player losing its Guards in a game of alliances (8, 10.6, option on_commander_loss):
what becomes of its army is told, and the player is told to be out."""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.napoleonic.actions import Attack, EndPhase
from tests.engine_service.rules.napoleonic.helpers import RULESET
from tests.engine_service.rules.napoleonic.test_multiplayer import GUARDS_FALL, play, start


@pytest.mark.parametrize(
    ("loss", "told"),
    [
        ("remove_army", ("Black's army leaves the field.", "black")),
        ("army_passes_to_ally", ("Black's units pass to green.", "green")),
    ],
)
def test_8_losing_the_guards_puts_the_player_out_and_says_what_becomes_of_its_army(
    loss: str, told: tuple[str, str]
) -> None:
    state = start(GUARDS_FALL, on_commander_loss=loss)
    state = play(state, Attack("red", "R_A", "B_G"), Attack("blue", "U_I", "B_G"))
    state = play(state, EndPhase("red"), EndPhase("blue"), EndPhase("black"))
    state, events = RULESET.apply(state, EndPhase("green"))
    after = [(e.kind, e.text, e.side) for e in events]
    eliminated = [e.kind for e in events].index(EventKind.ELIMINATED)
    assert after[eliminated + 1 : eliminated + 3] == [
        (EventKind.PHASE_CHANGED, *told),
        (EventKind.PLAYER_OUT, "Black has lost its Guards and is out of the game.", "black"),
    ]
