"""`check_state` on states that could not arise in play (3, 10.6): each problem named. A
position text cannot write these (a surrendered player is always out, an army holds only
letters of unit types), but a state sent back by a client can hold them."""

from __future__ import annotations

from engine_service.rules.napoleonic.state import NapoleonicState, Player
from tests.engine_service.rules.napoleonic.helpers import RULESET

SETUP = "board 8x8; red: d4=I h1=G; black: d5=I a8=G"


def start() -> NapoleonicState:
    state = RULESET.new_game(RULESET.resolve_options({}), SETUP)
    assert RULESET.check_state(state) == []
    return state


def test_10_6_a_surrendered_player_is_out_of_the_game() -> None:
    state = start()
    _red, black = state.players
    surrendered = state.evolve(players=(Player("red", "red", surrendered=True), black))
    assert RULESET.check_state(surrendered) == ["red surrendered but is not out"]


def test_3_an_army_holds_only_unit_types_of_the_rules() -> None:
    state = start()
    (_red, red_army), black = state.armies
    armies = (("red", (*red_army, "dragon", "zouave")), black)
    assert RULESET.check_state(state.evolve(armies=armies)) == [
        "red's army has unknown unit types ['dragon', 'zouave']"
    ]
