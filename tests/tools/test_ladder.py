"""The bot ladder (`tools/ladder`): maximum-likelihood Elo, the pairs it plays, a game."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from engine_service.rules.base import AnyRuleset
from tools.ladder.__main__ import interleaved, pairs, table
from tools.ladder.elo import Result, expected, ratings
from tools.ladder.games import (
    MCTS,
    RANDOM,
    Pairing,
    Played,
    pairings,
    play,
    ruleset_of,
    seats,
)
from tools.ladder.mcts import mcts_action


def results(first: str, second: str, wins: int, draws: int, losses: int) -> list[Result]:
    return (
        [Result(first, second, 1.0)] * wins
        + [Result(first, second, 0.5)] * draws
        + [Result(first, second, 0.0)] * losses
    )


def test_the_rating_difference_is_the_logistic_inverse_of_the_score() -> None:
    # 76 % against one opponent is 400·log10(76/24) = 200.2 Elo, whoever is anchored.
    games = results("b", "a", 70, 12, 18)
    by_player = {r.player: r for r in ratings(games, anchor="a", prior=0)}
    assert by_player["a"].elo == 1000 and by_player["a"].interval == 0
    assert by_player["b"].elo - 1000 == pytest.approx(400 * math.log10(76 / 24), abs=1e-3)
    assert expected(by_player["b"].elo - 1000) == pytest.approx(0.76)
    assert by_player["b"].score == pytest.approx(0.76) and by_player["b"].games == 100


def test_a_chain_of_players_is_rated_through_its_links() -> None:
    # c never met a: its rating comes through b; more games narrow the interval.
    few = results("b", "a", 15, 0, 5) + results("c", "b", 15, 0, 5)
    many = results("b", "a", 150, 0, 50) + results("c", "b", 150, 0, 50)
    for games in (few, many):
        by_player = {r.player: r for r in ratings(games, anchor="a", prior=0)}
        step = 400 * math.log10(3)
        assert by_player["c"].elo - 1000 == pytest.approx(2 * step, abs=1e-3)
    wide = {r.player: r.interval for r in ratings(few, anchor="a", prior=0)}
    narrow = {r.player: r.interval for r in ratings(many, anchor="a", prior=0)}
    assert narrow["c"] < wide["c"] < math.inf and narrow["c"] > narrow["b"]


def test_a_sweep_keeps_a_finite_rating_through_the_prior_draws() -> None:
    games = results("b", "a", 10, 0, 0)
    (a, b) = sorted(ratings(games, anchor="a"), key=lambda r: r.elo)
    assert b.elo > a.elo and math.isfinite(b.elo) and math.isfinite(b.interval)
    assert b.score == 1.0 and b.games == 10  # the virtual draws are not reported


def test_the_ladder_plays_adjacent_levels_and_level_1_against_the_random_mover() -> None:
    assert pairs("adjacent") == [("5", "4"), ("4", "3"), ("3", "2"), ("2", "1"), ("1", RANDOM)]
    assert len(pairs("all")) == 15
    assert pairs("5-4,1-random") == [("5", "4"), ("1", RANDOM)]
    with pytest.raises(SystemExit, match="no pair"):
        pairs("6-5")


def test_each_pair_takes_the_first_side_in_turn_with_seeds_of_their_own() -> None:
    games = pairings("war", [("2", "1")], 4, 0.01, seed=3)
    assert [g.players for g in games] == [("2", "1"), ("1", "2")] * 2
    assert len({g.seed for g in games}) == 4


def test_in_a_game_of_alliances_each_player_of_a_pair_takes_every_seat_of_one() -> None:
    # grand_battle_2v2's turn order is red, black, blue, green: south, north, south, north.
    assert seats("grand_battle_2v2") == [("red", 0), ("black", 1), ("blue", 0), ("green", 1)]
    war = [side.id for side in ruleset_of("war").sides]
    assert seats("war") == [(war[0], 0), (war[1], 1)]


def test_a_game_of_alliances_is_played_and_tabled() -> None:
    played = play(Pairing("grand_battle_2v2", (RANDOM, "1"), 2, 0.005))
    assert played.score in (0.0, 0.5, 1.0) and played.plies > 0
    assert "1-random" in table("grand_battle_2v2", [played])


def test_a_ladder_game_is_played_to_its_end_and_tabled() -> None:
    played = [play(Pairing("war", ("1", RANDOM), seed, 0.005)) for seed in (1, 2)]
    for game in played:
        assert game.score in (0.0, 0.5, 1.0) and game.plies > 0
    text = table("war", played)
    assert "level 1" in text and "random" in text and "1-random" in text


def test_a_ladder_without_level_1_is_anchored_at_its_weakest_player() -> None:
    games = [Pairing("war", ("5", "4"), seed, 0.01) for seed in range(2)]
    played = [Played(game, 1.0, "played out", 10) for game in games]
    text = table("war", played)
    assert "level 4    1000" in text and "5-4" in text


def winning_in_one(game: str, seed: int) -> tuple[Any, list[Any]]:
    """The first position of a seeded random game where some, not all, of the actions of
    the side to act win at once; and those actions."""
    ruleset = ruleset_of(game)
    rng = random.Random(seed)
    state = ruleset.new_game(ruleset.resolve_options({}))
    while ruleset.outcome(state) is None:
        side = ruleset.to_act(state)[0]
        own = [a for a in ruleset.legal_actions(state) if ruleset.actor(state, a) == side]
        wins = [a for a in own if side in _winners(ruleset, ruleset.play(state, a))]
        if wins and len(wins) < len(own):
            return state, wins
        state = ruleset.play(state, rng.choice(own) if own else ruleset.random_action(state, rng))
    raise AssertionError("the random game ended without a choice of a winning action")


def _winners(ruleset: AnyRuleset, state: Any) -> tuple[str, ...]:
    outcome = ruleset.outcome(state)
    return () if outcome is None else outcome.winning_sides


def test_the_mcts_yardstick_takes_a_win_in_one() -> None:
    # Seed 13's random game reaches such a choice: 1 winning action of 24 (most random
    # games of War end by a citadel held, which no single action decides).
    state, wins = winning_in_one("war", seed=13)
    action = mcts_action(ruleset_of("war"), state, 0, seed=1, simulations=400)
    assert action in wins


def test_the_mcts_yardstick_with_a_number_of_simulations_is_its_seed_s() -> None:
    ruleset = ruleset_of("war")
    state = ruleset.new_game(ruleset.resolve_options({}))
    first = mcts_action(ruleset, state, 0, seed=4, simulations=30)
    assert first == mcts_action(ruleset, state, 0, seed=4, simulations=30)
    assert first in ruleset.legal_actions(state)


def test_a_game_against_the_mcts_yardstick_is_played_and_tabled() -> None:
    played = play(Pairing("war", (MCTS, RANDOM), 1, 0.0005))
    assert played.score in (0.0, 0.5, 1.0) and played.plies > 0
    assert "mcts-random" in table("war", [played])
    assert pairs("5-mcts") == [("5", MCTS)]


def test_the_games_go_in_rounds_a_game_of_each_pair_a_round() -> None:
    todo = pairings("war", [("2", "1"), ("1", RANDOM)], 3, 0.01, seed=1)
    todo += pairings("battle", [("2", "1")], 2, 0.01, seed=1)
    ordered = interleaved(todo)
    assert sorted(ordered, key=lambda p: (p.game, p.seed)) == sorted(
        todo, key=lambda p: (p.game, p.seed)
    )
    first_pairs = [(p.game, frozenset(p.players)) for p in ordered[:3]]
    assert len(set(first_pairs)) == 3  # one of each pair of each game before any second
