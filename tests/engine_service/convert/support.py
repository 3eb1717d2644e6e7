"""Helpers shared by the converter tests: send a state over the wire, expect a refusal."""

from __future__ import annotations

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
