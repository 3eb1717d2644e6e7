"""Game of Battle states and actions through the contract's messages, and malformed input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.convert.battle import BattleConverter
from engine_service.rules.battle import BattleRuleset, Move
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from tests.engine_service.convert.helpers import refused, wire, wire_round_trips
from wargame.v1 import game_pb2

RULES = BattleRuleset()
CONVERSIONS = Conversions({"battle": BattleConverter(RULES)})


def _game(setup: str | None = None, **opts: str) -> Game[Any]:
    return Game(RULES, RULES.new_game(RULES.resolve_options(opts), setup))


def _wire(game: Game[Any]) -> game_pb2.GameState:
    return wire(CONVERSIONS, game, 5)


def _refused(msg: game_pb2.GameState) -> RuleError:
    return refused(CONVERSIONS, msg)


@pytest.mark.parametrize(
    "opts",
    [{}, {"forced_reply": "lose_figure"}, {"first_player": "defender", "no_capture_limit": "30"}],
)
def test_states_round_trip_through_the_wire(opts: dict[str, str]) -> None:
    compared = wire_round_trips(
        CONVERSIONS, lambda: _game(**opts), ply=5, seeds=3, plies=120, actions_too=True
    )
    assert compared > 150


def test_the_proto_carries_every_piece_and_the_detail() -> None:
    msg = _wire(_game())
    kinds = {(p.kind, p.side, p.cell) for p in msg.pieces}
    assert ("citadel", "defender", "19") in kinds and ("wagon", "attacker", "129") in kinds
    assert len(msg.pieces) == 28
    assert msg.battle.side_to_move == "attacker" and msg.battle.no_capture_plies == 0
    assert len(msg.battle.position_history) == 1
    assert list(msg.to_act) == ["attacker"]


def test_a_state_without_history_starts_one() -> None:
    msg = _wire(_game())
    del msg.battle.position_history[:]
    back = CONVERSIONS.game_from_proto(msg)
    assert back.state == _game().state


def _index(msg: game_pb2.GameState, cell: str) -> int:
    return next(i for i, p in enumerate(msg.pieces) if p.cell == cell)


def _set(square: str, **values: Any) -> Callable[[game_pb2.GameState], str]:
    def change(msg: game_pb2.GameState) -> str:
        index = _index(msg, square)
        for name, value in values.items():
            setattr(msg.pieces[index], name, value)
        return f"state.pieces[{index}].{next(iter(values))}"

    return change


def _add(kind: str, side: str, cell: str) -> Callable[[game_pb2.GameState], str]:
    def change(msg: game_pb2.GameState) -> str:
        msg.pieces.add(kind=kind, side=side, cell=cell)
        return f"state.pieces[{len(msg.pieces) - 1}]." + (
            "cell" if any(p.cell == cell for p in msg.pieces[:-1]) else "kind"
        )

    return change


def _detail(name: str, value: Any) -> Callable[[game_pb2.GameState], str]:
    def change(msg: game_pb2.GameState) -> str:
        setattr(msg.battle, name, value)
        return f"state.battle.{name}"

    return change


@pytest.mark.parametrize(
    "change",
    [
        _set("45", cell="140"),  # unknown square
        _set("45", cell="0"),
        _set("45", cell="e5"),
        _set("45", kind="hussar"),  # unknown kind
        _set("45", side="north"),
        _set("45", cell="43"),  # two pieces on a square
        _add("cavalry", "defender", "50"),  # a third Cavalry
        _add("artillery", "attacker", "60"),  # a third battery
        _add("citadel", "defender", "30"),  # a second Citadel
        _set("19", side="attacker"),  # the Citadel on the wrong side
        _set("129", side="defender"),  # the Wagon on the wrong side
        _set("45", id="u1"),
        _detail("side_to_move", "north"),
    ],
)
def test_malformed_states_are_refused_naming_the_field(
    change: Callable[[game_pb2.GameState], str],
) -> None:
    msg = _wire(_game())
    field = change(msg)
    assert _refused(msg).field == field


def test_a_history_that_does_not_end_with_the_position_is_refused() -> None:
    msg = _wire(_game())
    msg.battle.position_history[-1] ^= 1
    assert _refused(msg).field == "state.battle.position_history"
    msg = _wire(_game())
    msg.battle.position_history.insert(0, 12345)
    assert _refused(msg).field == "state.battle.position_history"


def test_rule_level_problems_are_reported_by_check_state() -> None:
    msg = _wire(_game(no_capture_limit="5"))
    msg.battle.no_capture_plies = 11
    error = _refused(msg)
    assert error.field == "state" and "no_capture_limit" in error.message


def test_the_outcome_must_agree_with_the_position() -> None:
    game = _game("attacker to move; attacker: C22 W134; defender: T19 L45")
    over, _ = game.apply("attacker", game.parse("22x19"))
    msg = _wire(over)
    assert msg.outcome.reason == game_pb2.OUTCOME_REASON_CITADEL_CAPTURED
    back = CONVERSIONS.game_from_proto(msg)
    assert back.outcome is not None and back.outcome.winner == "attacker"
    wrong_winner = game_pb2.GameState()
    wrong_winner.CopyFrom(msg)
    wrong_winner.outcome.winner = "defender"  # the right reason, the wrong winner
    error = _refused(wrong_winner)
    assert error.field == "state.outcome" and error.message.startswith(
        "the outcome says CITADEL_CAPTURED for defender, but the rules say: "
    )
    msg.ClearField("outcome")
    error = _refused(msg)
    assert error.field == "state.outcome" and error.message.startswith("the game is over (")
    assert error.message.endswith(") but the state has no outcome")


@pytest.mark.parametrize(
    ("reason", "winner", "field", "message"),
    [
        (
            "RESIGNATION",
            "east",
            "state.outcome.winner",
            "outcome RESIGNATION cannot have winner 'east'",
        ),
        ("RESIGNATION", "", "state.outcome.winner", "outcome RESIGNATION cannot have winner ''"),
        (
            "AGREEMENT",
            "attacker",
            "state.outcome.winner",
            "outcome AGREEMENT cannot have winner 'attacker'",
        ),
        (
            "CITADEL_CAPTURED",
            "attacker",
            "state.outcome.reason",
            "the outcome CITADEL_CAPTURED does not follow from the position",
        ),
    ],
)
def test_an_ending_by_the_players_names_a_side_that_can_have_it(
    reason: str, winner: str, field: str, message: str
) -> None:
    """A position the rules do not end may carry an ending by the players' hands (a
    resignation, a time-out, an agreement): only with a winner who is one of the sides, and
    none for an agreement."""
    msg = _wire(_game())
    msg.outcome.reason = game_pb2.OutcomeReason.Value(f"OUTCOME_REASON_{reason}")
    msg.outcome.winner = winner
    error = _refused(msg)
    assert (error.field, error.message) == (field, message)
    if reason != "CITADEL_CAPTURED":  # with a winner it can have, the ending is taken
        msg.outcome.winner = "defender" if reason == "RESIGNATION" else ""
        del msg.to_act[:]  # (a game over has nobody to act)
        outcome = CONVERSIONS.game_from_proto(msg).outcome
        assert outcome is not None and (outcome.reason, outcome.winner or "") == (
            reason,
            msg.outcome.winner,
        )


@pytest.mark.parametrize(
    ("origin", "destination", "field"),
    [("140", "50", "action.battle.move.origin"), ("45", "x", "action.battle.move.destination")],
)
def test_malformed_actions_are_refused(origin: str, destination: str, field: str) -> None:
    game = _game()
    msg = game_pb2.Action(side="defender")
    msg.battle.move.origin = origin
    msg.battle.move.destination = destination
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, msg)
    assert (error.value.reason, error.value.field) == ("UNKNOWN_CELL", field)


def test_an_empty_battle_action_is_refused() -> None:
    game = _game()
    msg = game_pb2.Action(side="attacker")
    msg.battle.SetInParent()
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, msg)
    assert error.value.field == "action.battle.move"


def test_moves_travel_as_square_numbers() -> None:
    game = _game()
    move = game.parse("113-104", "attacker")
    msg = CONVERSIONS.action_to_proto(game, move)
    assert (msg.side, msg.battle.move.origin, msg.battle.move.destination) == (
        "attacker",
        "113",
        "104",
    )
    assert isinstance(CONVERSIONS.action_from_proto(game, msg), Move)
