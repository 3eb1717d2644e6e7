"""A finished Napoleonic Chess game on the wire: its outcome is the rules' (spec 8).

A state in phase game_over must carry an outcome the rules can end a game with, and a
winner that is a player; the winner and the reason come back as they were sent.
"""

from __future__ import annotations

import pytest

from engine_service.rules.game import Game
from engine_service.rules.napoleonic.actions import Attack, EndPhase, NapoleonicAction
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.convert.helpers import state_refusal, structured
from tests.engine_service.convert.test_napoleonic import CONVERSIONS, RULESET
from wargame.v1 import game_pb2

# Red's artillery (2) and cavalry (1) attack the black Guards (defence 2): the commander
# falls and black's army with him (on_commander_loss = remove_army).
SETUP = "board 8x8; red: d4=A#R_A e4=C#R_C h1=G#R_G; black: d5=G#B_G a8=I#B_I"


def played_to_the_end(
    options: dict[str, str], setup: str, actions: tuple[NapoleonicAction, ...]
) -> game_pb2.GameState:
    """The structured state of a game from `setup` once `actions` ended it."""
    game: Game[NapoleonicState] = Game(
        RULESET, RULESET.new_game(RULESET.resolve_options(options), setup)
    )
    for action in actions:
        game, _ = game.apply(action.side, action)
    assert game.state.phase is Phase.GAME_OVER and game.outcome is not None
    return structured(CONVERSIONS, game, ply=len(actions))


# Red's artillery and cavalry attack the black Guards, and red ends the phase.
RED_ATTACKS = (Attack("red", "R_A", "B_G"), Attack("red", "R_C", "B_G"), EndPhase("red"))


def finished() -> game_pb2.GameState:
    return played_to_the_end({}, SETUP, RED_ATTACKS)


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


def test_a_win_by_the_fall_of_the_guards_goes_to_the_player_whose_guards_stand() -> None:
    state = finished()
    state.outcome.winner = "black"  # a player, but the one whose Guards fell
    assert state_refusal(CONVERSIONS, state) == (
        "INVALID_STATE",
        "state",
        "the outcome says black eliminated the enemy's Guards, but the Guards of red stand",
    )


# Three players, each its own alliance (three_way); green has surrendered. Red's artillery
# and cavalry take black's Guards: black is out, and red's alliance is the one left (10.6).
THREE_WAY = (
    "board 8x8; players: red/red black/black green/green!surrendered; "
    "red: d4=A e4=C h1=G; black: d5=G a8=I; turn: red attack_declaration 0; pending: red"
)


def finished_three_way() -> game_pb2.GameState:
    options = {"scenario": "three_way", "auto_skip_defence": "false"}
    return played_to_the_end(options, THREE_WAY, (*RED_ATTACKS, EndPhase("black")))


def test_a_game_of_alliances_is_won_by_the_alliance_left_with_its_players() -> None:
    message = finished_three_way()
    assert (message.outcome.winner, list(message.outcome.winners)) == ("red", ["red"])
    outcome = CONVERSIONS.game_from_proto(message).outcome
    assert outcome is not None
    assert (outcome.winner, outcome.reason, outcome.winners) == ("red", "ENEMIES_OUT", ("red",))


@pytest.mark.parametrize(
    ("winner", "field", "message"),
    [
        ("white", "state.outcome.winner", "winner 'white' is no alliance of this game"),
        (
            "black",
            "state",
            "the outcome says black won with every enemy out, but the alliances in the game "
            "are red",
        ),
        (
            "green",
            "state",
            "the outcome says green won with every enemy out, but the alliances in the game "
            "are red",
        ),
    ],
)
def test_a_game_of_alliances_names_as_winner_the_alliance_left(
    winner: str, field: str, message: str
) -> None:
    state = finished_three_way()
    state.outcome.winner = winner
    assert state_refusal(CONVERSIONS, state) == ("INVALID_STATE", field, message)
