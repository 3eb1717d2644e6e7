"""Glicko-2 against Glickman's published worked example, the rating helpers, and the team
ratings of multiplayer games (openskill)."""

from __future__ import annotations

import pytest

from matchmaker.ratings import Rating, Result, pool, score_of, team_update, update


def test_glickman_worked_example() -> None:
    # "Example of the Glicko-2 system": 1500/200/0.06 plays 1400/30 (win), 1550/100 (loss),
    # 1700/300 (loss) with tau = 0.5 -> 1464.06 / 151.52 / 0.05999.
    player = Rating(1500, 200, 0.06)
    after = update(
        player,
        [Result(Rating(1400, 30), 1), Result(Rating(1550, 100), 0), Result(Rating(1700, 300), 0)],
    )
    # The paper rounds its intermediate values; unrounded arithmetic lands within 0.02.
    assert after.rating == pytest.approx(1464.06, abs=0.02)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)
    assert after.games == 3


def test_no_games_only_widens_the_deviation() -> None:
    player = Rating(1600, 80, 0.06, games=4)
    after = update(player, [])
    assert after.rating == 1600 and after.games == 4
    assert after.deviation > 80


def test_deviation_never_exceeds_the_start_value() -> None:
    assert update(Rating(), []).deviation == 350


def test_a_win_raises_a_loss_lowers_a_draw_between_equals_keeps() -> None:
    opponent = Rating()
    assert update(Rating(), [Result(opponent, 1.0)]).rating > 1500
    assert update(Rating(), [Result(opponent, 0.0)]).rating < 1500
    assert update(Rating(), [Result(opponent, 0.5)]).rating == pytest.approx(1500)


def test_rating_text_round_trips() -> None:
    rating = Rating(1523.123456789, 77.5, 0.0600001, 12)
    assert Rating.parse(rating.text()) == rating
    assert Rating.parse(rating.text().encode()) == rating
    assert Rating.parse("") == Rating() and Rating.parse(None) == Rating()


def test_score_of() -> None:
    assert score_of("red", "red") == 1.0
    assert score_of("red", "black") == 0.0
    assert score_of("", "black") == 0.5


def test_team_ratings_of_a_two_against_two() -> None:
    """openskill's Plackett-Luce model on the Glicko scale: the winning alliance gains what
    the other loses, each player of a team alike when they start alike; a draw of equals
    changes no rating but lowers every deviation."""
    south, north = [Rating(), Rating()], [Rating(), Rating()]
    (won, lost) = team_update([south, north], [1, 2])
    assert all(r.rating > 1500 and r.games == 1 for r in won)
    assert all(r.rating < 1500 for r in lost)
    assert won[0] == won[1] and abs((won[0].rating - 1500) + (lost[0].rating - 1500)) < 1e-6
    assert all(r.deviation < 350 for r in won + lost)
    drawn = team_update([[Rating()], [Rating()], [Rating()]], [1, 1, 1])
    assert all(abs(team[0].rating - 1500) < 1e-6 for team in drawn)
    # A strong player beaten by weaker ones loses more than an even one would.
    strong = Rating(rating=1900, deviation=80)
    upset = team_update([[strong], [Rating()]], [2, 1])[0][0]
    even = team_update([[Rating(deviation=80)], [Rating()]], [2, 1])[0][0]
    assert 1900 - upset.rating > 1500 - even.rating


def test_multiplayer_games_have_their_own_pool() -> None:
    assert pool("war", 2) == "war"
    assert pool("napoleonic", 4) == "napoleonic.multiplayer"
