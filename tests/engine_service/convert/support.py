"""Helpers shared by the converter tests: send a state over the wire, expect a refusal."""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from wargame.v1 import game_pb2


def wire(conversions: Conversions, game: Game[Any], ply: int) -> game_pb2.GameState:
    """To proto and through bytes, as a client would send it back."""
    msg = conversions.game_to_proto(game, ply=ply)
    return game_pb2.GameState.FromString(msg.SerializeToString())


def refused(conversions: Conversions, msg: game_pb2.GameState) -> RuleError:
    """The INVALID_STATE error a malformed state must get."""
    with pytest.raises(RuleError) as error:
        conversions.game_from_proto(msg)
    assert error.value.reason == "INVALID_STATE"
    return error.value
