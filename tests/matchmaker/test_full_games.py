"""A game of each kind played through the matchmaker by two clients, start to finish, and
its record replayed by the engine to the very state the matchmaker stored."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores, players_of
from tests.matchmaker.helpers import play_moves, sealed_array, start_game, submit_text
from wargame.v1 import engine_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

SIDES = {
    "war": ("south", "north"),
    "battle": ("attacker", "defender"),
    "napoleonic": ("red", "black"),
}


def check_record(client: Client, engine: Any, game_id: str) -> mm.GameView:
    """The record of a game replays to the stored final state."""
    stored: mm.GameView = client.GetGame(mm.GetGameRequest(game_id=game_id)).game
    record = client.GetRecord(mm.GetRecordRequest(game_id=game_id)).record
    replayed = engine.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
    assert replayed.final_state == stored.state
    assert [a.notation for a in replayed.actions] == list(stored.moves)
    return stored


@pytest.mark.parametrize("ruleset", ["war", "battle", "napoleonic"])
@both_stores
def test_full_game_then_resignation(
    ruleset: str, matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    first, second = SIDES[ruleset]
    players = {
        first: clients(matchmaker.address, first),
        second: clients(matchmaker.address, second),
    }
    created = (
        players[first].CreateGame(mm.CreateGameRequest(game=ruleset, side=first, rated=True)).game
    )
    players[second].JoinGame(mm.JoinGameRequest(game_id=created.id))
    game = play_moves(engine_stub, players, created.id, 30, random.Random(ruleset))
    assert len(game.moves) >= 10 or game.status == mm.GAME_STATUS_FINISHED
    if game.status == mm.GAME_STATUS_RUNNING:
        players[second].OfferDraw(mm.OfferDrawRequest(game_id=game.id))
        players[first].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=False))
        game = players[game.state.to_act[0]].Resign(mm.ResignRequest(game_id=game.id)).game
    assert game.status == mm.GAME_STATUS_FINISHED and game.outcome.reason
    stored = check_record(players[first], engine_stub, game.id)
    assert stored.outcome == game.outcome
    ratings = [
        players[side].GetPlayer(mm.GetPlayerRequest()).player.ratings for side in (first, second)
    ]
    assert all(len(r) == 1 and r[0].game == ruleset and r[0].games == 1 for r in ratings)


def test_attack_at_dawn_commit_and_reveal_through_the_matchmaker(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    players = players_of(matchmaker.address, clients, "red", "black")
    game = start_game(players, "napoleonic", options={"scenario": "attack_at_dawn"})
    salts = {side: secrets.token_hex(32) for side in players}

    def act(side: str, text: str) -> mm.GameView:
        return submit_text(players[side], game.id, text).game

    for side in ("red", "black"):
        act(side, f"commit {sealed_array(side)} salt {salts[side]}")
    revealed = act("red", f"reveal {sealed_array('red')} salt {salts['red']}")
    # Black, still to reveal, must not see red's array nor salt anywhere.
    seen = players["black"].GetGame(mm.GetGameRequest(game_id=game.id)).game.SerializeToString()
    assert salts["red"].encode() not in seen and bytes.fromhex(salts["red"]) not in seen
    assert b"a2=I" not in seen and revealed.version > game.version
    act("black", f"reveal {sealed_array('black')} salt {salts['black']}")
    game = play_moves(engine_stub, players, game.id, 12, random.Random(8))
    if game.status == mm.GAME_STATUS_RUNNING:
        players["black"].Resign(mm.ResignRequest(game_id=game.id))
    stored = check_record(players["red"], engine_stub, game.id)
    assert any(salts["red"] in move for move in stored.moves)  # laid out: open to all now
