"""One conformance suite for every registered game (OpenSpiel's games_sim_test, here).

Random playouts under each game's defaults and presets: at every position the state is
consistent, the legal actions all apply (by `apply` and by the fast `play`, to the same
state), their notation reads back to the same action, and a finished game offers nothing
more. At the end the game's record replays to the same final state.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, OfferDraw, Resign
from engine_service.rules.record import parse_record, record_of, replay

GAMES = ["war", "battle", "napoleonic"]
PLAYOUTS = 6
MAX_PLIES = 400
ACTIONS_CHECKED_PER_POSITION = 25


def _option_sets(ruleset: AnyRuleset) -> list[tuple[str, Any]]:
    sets: list[tuple[str, Any]] = [("defaults", ruleset.resolve_options({}))]
    sets += [(f"preset {name}", ruleset.resolve_options({}, name)) for name in ruleset.presets]
    return sets


def _check_position(ruleset: AnyRuleset, game: Game[Any], rng: random.Random) -> None:
    state = game.state
    assert ruleset.check_state(state) == [], ruleset.check_state(state)
    assert hash(state) == hash(state)
    actions = ruleset.legal_actions(state)
    if game.outcome is not None:
        assert actions == [] and game.to_act() == ()
        return
    assert len(set(actions)) == len(actions), "legal actions repeat"
    for action in rng.sample(actions, min(len(actions), ACTIONS_CHECKED_PER_POSITION)):
        text = ruleset.format_action(state, action)
        side = ruleset.actor(state, action)
        assert ruleset.parse_action(state, text, side) == action, text
        after, _ = ruleset.apply(state, action)
        assert ruleset.play(state, action) == after, text
        assert ruleset.check_state(after) == [], (text, ruleset.check_state(after))


@pytest.mark.parametrize("game_id", GAMES)
def test_random_playouts_keep_every_invariant(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    for label, options in _option_sets(ruleset):
        for seed in range(PLAYOUTS):
            rng = random.Random(f"{game_id}-{label}-{seed}")
            initial: Game[Any] = Game(ruleset, ruleset.new_game(options))
            game = initial
            played: list[tuple[str, Any]] = []
            for _ in range(MAX_PLIES):
                _check_position(ruleset, game, rng)
                if game.outcome is not None:
                    break
                action = ruleset.random_action(game.state, rng)
                assert action is not None, "an unfinished game must offer an action"
                side = ruleset.actor(game.state, action)
                game, _ = game.apply(side, action)
                played.append((side, action))
            text = record_of(initial, played)
            final, _ = replay(ruleset, parse_record(text))
            assert final.state == game.state, f"{label} seed {seed}: replay differs"


@pytest.mark.parametrize("game_id", GAMES)
def test_a_finished_game_refuses_every_action(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    side = ruleset.sides[0].id
    over, _ = game.apply(side, Resign(side))
    assert over.outcome is not None and over.outcome.winner == ruleset.sides[1].id
    assert over.legal_actions() == [] and over.to_act() == ()
    action = ruleset.legal_actions(game.state)[0]
    with pytest.raises(RuleError) as error:
        over.apply(ruleset.actor(game.state, action), action)
    assert error.value.reason == "GAME_OVER"


@pytest.mark.parametrize("game_id", GAMES)
def test_draw_offer_stands_until_answered(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    game: Game[Any] = Game(ruleset, ruleset.new_game(ruleset.resolve_options({})))
    first, second = (info.id for info in ruleset.sides)
    offered, _ = game.apply(first, OfferDraw(first))
    assert offered.draw_offer == first
    with pytest.raises(RuleError) as error:
        offered.apply(first, offered.parse("accept draw", first))
    assert error.value.reason == "DRAW_NOT_OFFERED"
    drawn, _ = offered.apply(second, offered.parse("accept draw", second))
    assert drawn.outcome is not None and drawn.outcome.winner is None


@pytest.mark.parametrize("game_id", GAMES)
def test_options_are_checked_and_named(game_id: str) -> None:
    ruleset = rulesets()[game_id]
    with pytest.raises(RuleError) as error:
        ruleset.resolve_options({"no_such_option": "1"})
    assert error.value.reason == "UNKNOWN_OPTION" and "no_such_option" in error.value.message
    for spec in ruleset.option_specs:
        assert spec.parse(spec.default) is not None or spec.default == ""
        if spec.allowed and spec.kind.value == "enum":
            with pytest.raises(RuleError) as bad:
                ruleset.resolve_options({spec.name: "not-a-value"})
            assert bad.value.reason == "INVALID_OPTION_VALUE"
            assert spec.name in bad.value.message
            assert all(value in bad.value.message for value in spec.allowed)
