"""The view's pieces, appended from each distinct piece's wire form made once, are the
ruleset's pieces one for one, in order, with every field."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import unknown_fields

from engine_service.convert import conversions
from engine_service.rules import rulesets
from engine_service.rules.game import Game
from tests.conftest import TEST_SEAL_KEY
from wargame.v1 import game_pb2


@pytest.mark.parametrize("game_id", ["war", "battle", "napoleonic"])
def test_the_view_holds_the_rulesets_pieces_in_order(game_id: str) -> None:
    games = rulesets(TEST_SEAL_KEY)
    converted = conversions(games)
    ruleset = games[game_id]
    rng = random.Random(f"view pieces {game_id}")
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    seen = 0
    for _ in range(30):
        expected = [
            game_pb2.Piece(
                kind=p.kind, side=p.side, cell=p.cell, id=p.id, moved=p.moved, tags=p.tags
            )
            for p in ruleset.pieces(game.state)
        ]
        state = converted.game_to_proto(game)
        assert list(state.pieces) == expected
        assert len(unknown_fields.UnknownFieldSet(state)) == 0  # only the pieces were merged
        assert state.position and state.options == ruleset.options_of(game.state).as_text()
        seen += len(expected)
        action = ruleset.random_action(game.state, rng)
        if action is None or game.outcome is not None:
            break
        game, _ = game.apply(ruleset.actor(game.state, action), action)
    assert seen > 0
