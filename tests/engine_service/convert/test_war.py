"""Game of War states and actions through the contract's messages, and malformed input."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.convert.war import WarConverter
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.war import WarRuleset
from tests.engine_service.convert.helpers import refused, wire, wire_round_trips
from wargame.v1 import game_pb2

RULES = WarRuleset()
CONVERSIONS = Conversions({"war": WarConverter(RULES)})


def _game(setup: str | None = None, **opts: str) -> Game[Any]:
    return Game(RULES, RULES.new_game(RULES.resolve_options(opts), setup))


def _wire(game: Game[Any]) -> game_pb2.GameState:
    return wire(CONVERSIONS, game, 7)


def _refused(msg: game_pb2.GameState) -> RuleError:
    return refused(CONVERSIONS, msg)


@pytest.mark.parametrize(
    "opts",
    [{}, {"compulsion": "huff"}, {"en_passant": "displacement_only", "no_progress_limit": "30"}],
)
def test_states_round_trip_through_the_wire(opts: dict[str, str]) -> None:
    compared = wire_round_trips(CONVERSIONS, lambda: _game(**opts), ply=7, seeds=4, plies=150)
    assert compared > 300


def test_the_proto_carries_the_war_detail() -> None:
    game = _game(en_passant="displacement_only")
    game, _ = game.apply("south", RULES.parse_action(game.state, "F@e5"))
    game, _ = game.apply("north", RULES.parse_action(game.state, "d9-d7"))
    msg = CONVERSIONS.game_to_proto(game)
    assert msg.war.side_to_move == "south"
    assert (msg.war.south_reserve, msg.war.north_reserve) == (1, 2)
    assert (msg.war.south_citadel, msg.war.north_citadel) == ("f1", "f10")
    assert msg.war.en_passant == "d8"
    assert msg.war.move_number == 2
    machines = [p for p in msg.pieces if p.kind == "flying_machine"]
    assert [(p.cell, p.side) for p in machines] == [("e5", "south")]
    troop = next(p for p in msg.pieces if p.cell == "d7")
    assert troop.kind == "troop" and troop.moved
    assert list(msg.to_act) == ["south"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda m: setattr(m.pieces[0], "cell", "k11"), "state.pieces[0].cell"),
        (lambda m: setattr(m.pieces[0], "cell", "A1"), "state.pieces[0].cell"),
        (lambda m: setattr(m.pieces[0], "kind", "queen"), "state.pieces[0].kind"),
        (lambda m: setattr(m.pieces[0], "side", "east"), "state.pieces[0].side"),
        (lambda m: setattr(m.pieces[1], "cell", m.pieces[0].cell), "state.pieces[1].cell"),
        (lambda m: setattr(m.pieces[0], "moved", True), "state.pieces[0].moved"),
        (lambda m: setattr(m.war, "south_reserve", 3), "state.war.south_reserve"),
        (lambda m: setattr(m.war, "side_to_move", "west"), "state.war.side_to_move"),
        (lambda m: setattr(m.war, "north_citadel", "z9"), "state.war.north_citadel"),
        (lambda m: setattr(m.war, "north_citadel", "f1"), "state.war.north_citadel"),
        (lambda m: m.war.huffable.append("q1"), "state.war.huffable[0]"),
        (lambda m: setattr(m.war, "en_passant", "d11"), "state.war.en_passant"),
        (lambda m: m.pieces.add(kind="king", side="south", cell="e5"), "state.pieces"),
        (
            lambda m: m.pieces.add(kind="flying_machine", side="north", cell="e5"),
            "state.pieces",
        ),
        (lambda m: m.ClearField("war"), "state.detail"),
    ],
)
def test_malformed_states_are_refused_naming_the_field(change: Any, field: str) -> None:
    msg = _wire(_game())  # pieces[0] is South's Mortar on a1
    change(msg)
    assert _refused(msg).field == field


def test_rule_level_problems_come_from_check_state() -> None:
    msg = _wire(_game())
    troop = next(p for p in msg.pieces if p.cell == "e3")
    troop.cell = "e5"  # still marked as not moved
    msg.war.ClearField("position_history")
    error = _refused(msg)
    assert error.field == "state" and "e5" in error.message and "not moved" in error.message


def test_every_rule_level_problem_is_told_in_one_message() -> None:
    msg = _wire(_game())
    for cell in ("e3", "c3"):
        troop = next(p for p in msg.pieces if p.cell == cell)
        troop.cell = cell[0] + "5"  # still marked as not moved
    msg.war.ClearField("position_history")
    error = _refused(msg)
    problem = (
        "the South Troop on {} is marked as not moved but stands where no Troop of its side "
        "starts (its ranks 2 and 3, or the squares of initial_position)"
    )
    assert (error.field, error.message) == (
        "state",
        f"{problem.format('c5')}; {problem.format('e5')}",
    )


def test_three_flying_machines_for_a_side_are_refused() -> None:
    msg = _wire(_game())
    msg.pieces.add(kind="flying_machine", side="south", cell="e5")
    assert _refused(msg).field == "state.pieces"


def test_a_huffable_square_without_a_troop_is_refused() -> None:
    msg = _wire(_game(compulsion="huff"))
    msg.war.huffable.append("e5")
    msg.war.ClearField("position_history")
    error = _refused(msg)
    assert "huffable" in error.message and "e5" in error.message


def test_a_wrong_history_is_refused() -> None:
    msg = _wire(_game())
    msg.war.position_history[-1] ^= 1
    assert "key" in _refused(msg).message


def test_both_kings_missing_is_a_position_of_play() -> None:
    game = _game("10/3g6/10/10/4k5/10/4K5/10/10/4G5 S -:-")
    for text in ("Ke4-e5", "Ke6xe5", "Ge1xe5"):
        game, _ = game.apply(game.to_act()[0], RULES.parse_action(game.state, text))
    back = CONVERSIONS.game_from_proto(_wire(game))
    assert back.state == game.state


def test_actions_round_trip() -> None:
    for opts in (
        {},
        {"compulsion": "huff", "passing_allowed": "true"},
        {"placement_uses_turn": "false"},
    ):
        rng = random.Random(3)
        game = _game(**opts)
        for _ in range(40):
            actions = game.legal_actions()
            if not actions:
                break
            for action in rng.sample(actions, min(20, len(actions))):
                msg = game_pb2.Action.FromString(
                    CONVERSIONS.action_to_proto(game, action).SerializeToString()
                )
                assert CONVERSIONS.action_from_proto(game, msg) == action
            action = rng.choice(actions)
            game, _ = game.apply(game.actor(action), action)


def test_notation_actions_are_parsed() -> None:
    game = _game()
    msg = game_pb2.Action(side="south", notation="e3-e5")
    assert RULES.format_action(game.state, CONVERSIONS.action_from_proto(game, msg)) == "e3-e5"


def _move(origin: str, *path: str) -> Any:
    def build(action: game_pb2.Action) -> None:
        action.war.move.origin = origin
        action.war.move.path.extend(path)

    return build


def _placement_without_place(action: game_pb2.Action) -> None:
    _move("e3", "e4")(action)
    action.war.move_after_placement.path.append("e5")


def _place(cell: str) -> Any:
    def build(action: game_pb2.Action) -> None:
        action.war.place.cell = cell

    return build


@pytest.mark.parametrize(
    ("build", "reason", "field"),
    [
        (_move("", "e4"), "UNKNOWN_CELL", "action.war.move.origin"),
        (lambda a: a.war.SetInParent(), "ILLEGAL_ACTION", "action.war.kind"),
        (_place("z1"), "UNKNOWN_CELL", "action.war.place.cell"),
        (_move("e3", "e11"), "UNKNOWN_CELL", "action.war.move.path[0]"),
        (_move("e3"), "ILLEGAL_ACTION", "action.war.move.path"),
        (_placement_without_place, "ILLEGAL_ACTION", "action.war.move_after_placement"),
    ],
)
def test_malformed_actions_are_refused(build: Any, reason: str, field: str) -> None:
    game = _game()
    msg = game_pb2.Action(side="south")
    build(msg)
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, msg)
    assert (error.value.reason, error.value.field) == (reason, field)
