"""A refused move says what the unit may do (3.1, 3.2, 4; ruling 24): one square or one or
two, exactly two under variant_two_square_move = exactly_two, in its directions."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.napoleonic.helpers import RULESET

SETUP = "board 8x8; red: d4=D c4=I e1=G a1=A g4=C; black: a8=G"


@pytest.mark.parametrize(
    ("move", "message"),
    [
        (
            "d4-d5",
            "Dragoons on d4 cannot move to d5: it moves exactly two squares in any direction "
            "(variant_two_square_move)",
        ),
        ("c4-c6", "Infantry on c4 cannot move to c6: it moves one square in any direction"),
        ("a1-b2", "Artillery on a1 cannot move to b2: it moves one square orthogonally only"),
        ("g4-g7", "Cavalry on g4 cannot move to g7: it moves one or two squares in any direction"),
    ],
)
def test_4_a_refused_move_states_the_units_allowance(move: str, message: str) -> None:
    options = RULESET.resolve_options({"variant_two_square_move": "exactly_two"})
    state = RULESET.new_game(options, SETUP)
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, RULESET.parse_action(state, move, "red"))
    assert error.value.reason == Reason.ILLEGAL_MOVE_GEOMETRY
    assert error.value.message == message
