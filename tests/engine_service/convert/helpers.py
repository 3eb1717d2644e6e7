"""Helpers shared by the converter tests: send a state over the wire, expect a refusal."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from wargame.v1 import game_pb2


def wire(conversions: Conversions, game: Game[Any], ply: int | None = None) -> game_pb2.GameState:
    """The state as a client of the contract before the position existed sends it back:
    the structured view alone, through bytes (`ply` sets the game's ply first)."""
    if ply is not None:
        game = replace(game, ply=ply)
    msg = conversions.game_to_proto(game)
    msg.ClearField("position")
    return game_pb2.GameState.FromString(msg.SerializeToString())


def structured(
    conversions: Conversions, game: Game[Any], *, ply: int | None = None
) -> game_pb2.GameState:
    """The state in its structured form alone (position left out), not through bytes: a
    message for a test to change and send."""
    if ply is not None:
        game = replace(game, ply=ply)
    msg = conversions.game_to_proto(game)
    msg.ClearField("position")
    return msg


def compact(conversions: Conversions, game: Game[Any]) -> game_pb2.GameState:
    """The state as a server that keeps only the position sends it: game and position."""
    msg = conversions.game_to_proto(game, view=False)
    return game_pb2.GameState.FromString(
        game_pb2.GameState(game=msg.game, position=msg.position).SerializeToString()
    )


def refused(conversions: Conversions, msg: game_pb2.GameState) -> RuleError:
    """The INVALID_STATE error a malformed state must get."""
    with pytest.raises(RuleError) as error:
        conversions.game_from_proto(msg)
    assert error.value.reason == "INVALID_STATE"
    return error.value


def state_refusal(conversions: Conversions, msg: game_pb2.GameState) -> tuple[str, str | None, str]:
    """The (reason, field, message) of the refusal a state that must be refused gets."""
    with pytest.raises(RuleError) as error:
        conversions.game_from_proto(msg)
    return (error.value.reason, error.value.field, error.value.message)


def wire_round_trips(
    conversions: Conversions,
    start: Callable[[], Game[Any]],
    *,
    ply: int,
    seeds: int,
    plies: int,
    actions_too: bool = False,
) -> int:
    """Random playouts from `start()`, one a seed: every state is sent over the wire (at
    `ply`) and must come back equal, with its outcome (and, `actions_too`, every action
    chosen through its message). The number of states compared."""
    compared = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        game = start()
        for _ in range(plies):
            back = conversions.game_from_proto(wire(conversions, game, ply))
            assert back.state == game.state and back.ply == ply
            assert back.outcome == game.outcome
            compared += 1
            actions = game.legal_actions()
            if not actions:
                break
            action = rng.choice(actions)
            if actions_too:
                wire_action = conversions.action_to_proto(game, action)
                assert conversions.action_from_proto(game, wire_action) == action
            game, _ = game.apply(game.actor(action), action)
    return compared
