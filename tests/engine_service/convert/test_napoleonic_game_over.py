"""A finished Napoleonic Chess game on the wire: its outcome is the rules' (spec 8).

A state in phase game_over must carry an outcome the rules can end a game with, and a
winner that is a player; the winner and the reason come back as they were sent.
"""

from __future__ import annotations

import pytest

from engine_service.rules.game import Game
from engine_service.rules.napoleonic.actions import Attack, EndPhase
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.convert.helpers import state_refusal, structured
from tests.engine_service.convert.test_napoleonic import CONVERSIONS, RULESET
from wargame.v1 import game_pb2

# Red's artillery (2) and cavalry (1) attack the black Guards (defence 2): the commander
# falls and black's army with him (on_commander_loss = remove_army).
SETUP = "board 8x8; red: d4=A#R_A e4=C#R_C h1=G#R_G; black: d5=G#B_G a8=I#B_I"


def finished() -> game_pb2.GameState:
    state: NapoleonicState = RULESET.new_game(RULESET.resolve_options({}), SETUP)
    game: Game[NapoleonicState] = Game(RULESET, state)
    for side, action in (
        ("red", Attack("red", "R_A", "B_G")),
        ("red", Attack("red", "R_C", "B_G")),
        ("red", EndPhase("red")),
    ):
        game, _ = game.apply(side, action)
    assert game.state.phase is Phase.GAME_OVER and game.outcome is not None
    return structured(CONVERSIONS, game, ply=3)


def test_a_won_game_comes_back_with_its_winner_and_reason() -> None:
    message = finished()
    assert message.outcome.winner == "red"
    game = CONVERSIONS.game_from_proto(message)
    assert game.outcome is not None
    assert (game.outcome.winner, game.outcome.reason) == (
        "red",
        game_pb2.OutcomeReason.Name(message.outcome.reason).removeprefix("OUTCOME_REASON_"),
    )
    assert game.state.outcome is not None and game.state.outcome.winner == "red"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda m: m.ClearField("outcome"),
            "state.outcome",
            "phase game_over needs the outcome",
        ),
        (
            lambda m: setattr(m.outcome, "reason", game_pb2.OUTCOME_REASON_AGREEMENT),
            "state.outcome.reason",
            "outcome AGREEMENT does not end a game in phase game_over",
        ),
        (
            lambda m: setattr(m.outcome, "winner", "white"),
            "state.outcome.winner",
            "'white' is no player (red, black)",
        ),
    ],
    ids=["no outcome", "an ending by agreement", "a winner who is no player"],
)
def test_a_game_over_state_needs_an_ending_of_the_rules(change, field: str, message: str) -> None:
    state = finished()
    change(state)
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        field,
        message,
    )
