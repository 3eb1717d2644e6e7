"""The ladder's "openspiel" player (`tools/ladder/openspiel.py`): OpenSpiel's MCTS bot on a
pyspiel game over the rules. The tests that play need OpenSpiel (the optional extra
`ladder`) and are skipped without it."""

from __future__ import annotations

import random
import sys

import pytest

from tools.ladder import openspiel
from tools.ladder.__main__ import main, pairs, table
from tools.ladder.games import OPENSPIEL, Pairing, Played, ruleset_of
from tools.ladder.openspiel import OpenSpielMissing, game_of, openspiel_action, state_at


@pytest.mark.parametrize("game", ["war", "battle"])
def test_openspiel_s_bot_plays_legal_actions(game: str) -> None:
    pytest.importorskip("pyspiel")
    ruleset = ruleset_of(game)
    state = ruleset.new_game(ruleset.resolve_options({}))
    for ply in range(4):
        side = ruleset.to_act(state)[0]
        move = openspiel_action(game, ruleset, state, 0, seed=ply, simulations=12)
        assert move.action in ruleset.legal_actions(state)
        assert ruleset.actor(state, move.action) == side
        assert move.cpu > 0
        state = ruleset.play(state, move.action)


@pytest.mark.parametrize("game", ["war", "battle"])
def test_the_adapter_s_state_is_a_drawn_end_at_its_cap_of_plies(
    game: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyspiel")
    monkeypatch.setattr(openspiel, "PLY_CAP", 6)
    ruleset = ruleset_of(game)
    spiel = game_of(game, ruleset)
    state = state_at(spiel, ruleset.new_game(ruleset.resolve_options({})))
    rng = random.Random(5)
    for ply in range(6):
        assert not state.is_terminal() and state.current_player() == ply % 2
        before = state.clone()
        state.apply_action(rng.choice(state.legal_actions()))
        assert before.position.plies == ply and not before.is_terminal()  # a clone stays
    assert state.is_terminal() and state.legal_actions() == []
    assert state.returns() == [0.0, 0.0]
    assert ruleset.outcome(state.position.state) is None  # the cap ended it, not the rules


def test_the_openspiel_player_is_named_by_the_pairs_and_its_cpu_ratio_tabled() -> None:
    assert pairs("5-openspiel") == [("5", OPENSPIEL)]
    games = [Pairing("war", ("5", OPENSPIEL), 1, 1.0), Pairing("war", (OPENSPIEL, "5"), 2, 1.0)]
    played = [
        Played(games[0], 1.0, "played out", 40, 0.98),
        Played(games[1], 0.0, "played out", 50, 1.02),
    ]
    text = table("war", played)
    assert "5-openspiel" in text and "CPU time per move 1.00 of its budget" in text


def test_without_openspiel_the_openspiel_player_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # an import of it fails
    with pytest.raises(OpenSpielMissing, match="needs OpenSpiel"):
        main(["--games", "war", "--pairs", "5-openspiel", "--per-pair", "1"])
