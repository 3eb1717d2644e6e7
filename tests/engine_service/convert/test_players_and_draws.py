"""The fields of a state every game shares with Napoleonic Chess's players (10.6) through
the contract: who is out and why, and who answered a draw offer.

A player whose Guards fell is out but did not surrender; a player who resigned is both;
a draw offer is accepted by the other players, never by its own offerer.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.convert.napoleonic import NapoleonicConverter
from engine_service.convert.war import WarConverter
from engine_service.rules.base import OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import AcceptDraw, Game, OfferDraw, Resign
from engine_service.rules.position import read_position
from engine_service.rules.war import WarRuleset
from tests.engine_service.convert.helpers import state_refusal, structured, wire
from tests.engine_service.rules.napoleonic.helpers import RULESET
from tests.engine_service.rules.napoleonic.test_multiplayer import fall, scenario
from wargame.v1 import game_pb2

WAR = WarRuleset()
CONVERSIONS = Conversions({"napoleonic": NapoleonicConverter(RULESET), "war": WarConverter(WAR)})


def _players(msg: Any) -> dict[str, tuple[bool, bool]]:
    """Each player's (out, surrendered) as the state's view shows it."""
    return {p.id: (p.out, p.surrendered) for p in msg.napoleonic.players}


# docs/positions.md's grand battle: black out (its Guards fell), blue surrendered.
GRAND_BATTLE = (
    "board 16x10; players: red/south black/north!out blue/south!surrendered green/north; "
    "red: h1=G d4=A; green: e4=I p10=G; army black: 1G; turn: red movement 9; "
    "options: scenario=grand_battle_2v2"
)


def test_a_player_whose_guards_fell_in_play_is_shown_out_and_not_surrendered() -> None:
    game: Game[Any] = Game(RULESET, fall())
    msg = CONVERSIONS.game_to_proto(game)
    assert _players(msg) == {
        "red": (False, False),
        "black": (True, False),
        "blue": (False, False),
        "green": (False, False),
    }


def test_players_out_and_surrendered_cross_the_structured_form_as_they_are() -> None:
    game = read_position(RULESET, GRAND_BATTLE)
    msg = wire(CONVERSIONS, game)
    assert _players(msg) == {
        "red": (False, False),
        "black": (True, False),
        "blue": (True, True),
        "green": (False, False),
    }
    assert CONVERSIONS.game_from_proto(msg) == game


def test_a_player_who_resigns_is_shown_out_and_surrendered() -> None:
    game: Game[Any] = Game(RULESET, scenario("grand_battle_2v2"))
    game, _events = game.apply("blue", Resign("blue"))
    msg = wire(CONVERSIONS, game)
    assert _players(msg)["blue"] == (True, True)
    assert _players(msg)["red"] == (False, False)
    assert CONVERSIONS.game_from_proto(msg) == game


def test_the_two_flags_are_read_as_sent_not_derived() -> None:
    game = read_position(RULESET, GRAND_BATTLE)
    msg = structured(CONVERSIONS, game)
    msg.napoleonic.players[1].surrendered = True  # black, whose Guards fell
    back = CONVERSIONS.game_from_proto(msg)
    player = back.state.player("black")
    assert player is not None and (player.out, player.surrendered) == (True, True)
    assert back != game


def _offered(game_id: str) -> tuple[Game[Any], str, str]:
    """A game where one side offered a draw that another accepted: (game, offerer, accepter)
    for napoleonic's four players (the offer stands until all three answer); war's two
    players end the game on an accept, so its offer stands unanswered."""
    if game_id == "napoleonic":
        game: Game[Any] = Game(RULESET, scenario("grand_battle_2v2"))
        game, _e = game.apply("red", OfferDraw("red"))
        game, _e = game.apply("black", AcceptDraw("black"))
        return game, "red", "black"
    war: Game[Any] = Game(WAR, WAR.new_game(WAR.resolve_options({})))
    war, _e = war.apply("south", OfferDraw("south"))
    return war, "south", "north"


@pytest.mark.parametrize("game_id", ["napoleonic", "war"])
def test_a_draw_offer_with_its_answers_comes_back_as_it_was(game_id: str) -> None:
    game, offerer, _accepter = _offered(game_id)
    msg = wire(CONVERSIONS, game)
    assert msg.draw_offer == offerer
    assert CONVERSIONS.game_from_proto(msg) == game


@pytest.mark.parametrize("game_id", ["napoleonic", "war"])
def test_a_draw_offerer_listed_among_those_accepting_is_refused(game_id: str) -> None:
    game, offerer, _accepter = _offered(game_id)
    msg = structured(CONVERSIONS, game)
    msg.draw_accepted.append(offerer)
    reason, field, message = state_refusal(CONVERSIONS, msg)
    assert (reason, field) == ("INVALID_STATE", "state.draw_accepted")
    assert offerer in message


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda msg, a: msg.draw_accepted.extend([a, a]), "accepted twice"),
        (lambda msg, a: msg.draw_accepted.append("purple"), "no side"),
        (lambda msg, a: (msg.draw_accepted.append(a), msg.ClearField("draw_offer")), "no offer"),
    ],
)
def test_other_impossible_draw_answers_are_refused(change: Any, why: str) -> None:
    game, _offerer, accepter = _offered("war")
    msg = structured(CONVERSIONS, game)
    change(msg, accepter)
    reason, field, _message = state_refusal(CONVERSIONS, msg)
    assert (reason, field) == ("INVALID_STATE", "state.draw_accepted"), why


def test_a_draw_offer_by_no_side_is_refused_naming_the_offer() -> None:
    game, _offerer, _accepter = _offered("war")
    msg = structured(CONVERSIONS, game)
    msg.draw_offer = "purple"
    assert state_refusal(CONVERSIONS, msg) == (
        "INVALID_STATE",
        "state.draw_offer",
        "draw_offer 'purple' is no side",
    )


@pytest.mark.parametrize("reason", ["RESIGNATION", "TIME", "ABANDONED"])
def test_a_resignation_from_the_wire_keeps_its_side_and_reason(reason: str) -> None:
    game: Game[Any] = Game(RULESET, scenario("grand_battle_2v2"))
    msg = game_pb2.Action(side="blue")
    msg.resign.reason = game_pb2.OutcomeReason.Value(f"OUTCOME_REASON_{reason}")
    assert CONVERSIONS.action_from_proto(game, msg) == Resign("blue", OutcomeReason(reason))


def test_an_empty_action_is_refused_naming_the_action() -> None:
    game: Game[Any] = Game(WAR, WAR.new_game(WAR.resolve_options({})))
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, game_pb2.Action(side="south"))
    assert (error.value.reason, error.value.field) == ("ILLEGAL_ACTION", "action.kind")


def test_the_army_a_player_commands_crosses_the_wire() -> None:
    """Divided command (10.6): blue commands a wing of red's army, green of black's (red and
    black command their own: the empty army)."""
    game: Game[Any] = Game(RULESET, scenario("divided_command"))
    msg = wire(CONVERSIONS, game)
    assert {p.id: p.army for p in msg.napoleonic.players} == {
        "red": "",
        "black": "",
        "blue": "red",
        "green": "black",
    }
    assert CONVERSIONS.game_from_proto(msg) == game
