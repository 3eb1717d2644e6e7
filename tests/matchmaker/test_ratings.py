"""Glicko-2 against Glickman's published worked example, the rating helpers, and the team
ratings of multiplayer games (openskill)."""

from __future__ import annotations

import math
from typing import NamedTuple

import pytest

from matchmaker.ratings import (
    Rating,
    Result,
    _volatility,
    pool,
    score_of,
    team_update,
    update,
)


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
    # Step 6: phi* = sqrt(phi^2 + sigma^2) on the Glicko-2 scale (phi = RD / 173.7178).
    scale = 173.7178
    assert after.deviation == pytest.approx(math.sqrt((80 / scale) ** 2 + 0.06**2) * scale)
    assert 80 < after.deviation < 81


def test_only_the_difference_of_ratings_counts() -> None:
    """Glicko-2 works on mu = (r - 1500) / 173.7178: a game between 1700 and 1600 moves
    both as a game between 1600 and 1500 does, shifted by 100."""
    results = [Result(Rating(1600, 30), 1.0), Result(Rating(1650, 120), 0.0)]
    high = update(Rating(1700, 200, 0.06), results)
    lower = [
        Result(Rating(r.opponent.rating - 100, r.opponent.deviation), r.score) for r in results
    ]
    low = update(Rating(1600, 200, 0.06), lower)
    assert high.rating - 100 == pytest.approx(low.rating, abs=1e-6)
    assert high.deviation == pytest.approx(low.deviation, abs=1e-9)
    assert high.volatility == pytest.approx(low.volatility, abs=1e-12)


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
    assert pool("napoleonic", 3) == "napoleonic.multiplayer"  # three: already a crowd
    assert pool("napoleonic", 4) == "napoleonic.multiplayer"


class Step5(NamedTuple):
    """The inputs of step 5 (the new volatility), on the Glicko-2 scale."""

    sigma: float
    phi: float
    v: float
    delta: float
    tau: float


def paper_f(x: float, given: Step5) -> float:
    """Step 5.1 of Glickman's "Example of the Glicko-2 system", as the paper writes it."""
    sigma, phi, v, delta, tau = given
    a = math.log(sigma**2)
    return (
        math.exp(x) * (delta**2 - phi**2 - v - math.exp(x)) / (2 * (phi**2 + v + math.exp(x)) ** 2)
        - (x - a) / tau**2
    )


def new_volatility(given: Step5) -> float:
    """The volatility `update` computes, checked to be exp(A/2) with A the root of f: f
    changes sign within 1e-5 either side of ln(sigma'^2) (f falls everywhere; the
    iteration stops within 1e-6 of the root)."""
    new_sigma = _volatility(*given)
    x = math.log(new_sigma**2)
    assert paper_f(x - 1e-5, given) > 0
    assert paper_f(x + 1e-5, given) < 0
    return new_sigma


def test_volatility_of_the_worked_example_is_the_root_of_f() -> None:
    # The paper's step 3 and 4 figures: v = 1.7785, delta = -0.4834, phi = 1.1513. Its
    # printed sigma' (0.05999) is too coarse to tell a slightly wrong f, the root is not.
    new_sigma = new_volatility(Step5(0.06, 1.1513, 1.7785, -0.4834, 0.5))
    assert new_sigma == pytest.approx(0.05999, abs=1e-5)


@pytest.mark.parametrize(
    "given",
    [
        Step5(0.06, 1.1513, 1.7785, -0.4834, 3.0),  # the worked example, a loose tau
        Step5(0.06, 0.5, 1.0, 0.3, 5.0),
        Step5(1.0, 0.01, 0.0001, 0.0, 3.0),  # the lower bracket takes two steps (below)
    ],
)
def test_volatility_falls_to_the_root_of_f_when_the_result_is_as_expected(
    given: Step5,
) -> None:
    """delta^2 <= phi^2 + v: f(ln sigma^2) <= 0, so the root, and sigma', lie below."""
    assert given.delta**2 <= given.phi**2 + given.v
    assert 0 < new_volatility(given) <= given.sigma


def test_the_lower_bracket_may_take_more_than_one_step() -> None:
    """With delta^2 far below phi^2 + v and a volatility large beside them, f(a - tau) is
    still negative: step 5.2 steps on to a - 2 tau, where f is positive."""
    given = Step5(1.0, 0.01, 0.0001, 0.0, 3.0)
    a, tau = math.log(given.sigma**2), given.tau
    assert paper_f(a - tau, given) < 0 < paper_f(a - 2 * tau, given)
    assert math.exp((a - 2 * tau) / 2) < new_volatility(given) < math.exp((a - tau) / 2)


@pytest.mark.parametrize(
    "given",
    [
        Step5(0.06, 0.17, 2.0, 3.0, 0.5),
        Step5(0.06, 0.3, 1.0, 2.0, 0.5),
        Step5(0.06, 0.5, 0.5, 2.0, 1.2),
    ],
)
def test_volatility_rises_to_the_root_of_f_after_a_surprise(given: Step5) -> None:
    """delta^2 > phi^2 + v: the root lies between ln(sigma^2) and ln(delta^2 - phi^2 - v),
    where f is positive and negative."""
    excess = given.delta**2 - given.phi**2 - given.v
    assert excess > 0
    assert given.sigma < new_volatility(given) < math.sqrt(excess)


def test_a_surprising_win_raises_the_volatility() -> None:
    """A player who beats someone 400 points stronger (both deviations small) takes the
    delta^2 > phi^2 + v branch: the volatility rises."""
    after = update(Rating(1500, 30, 0.06), [Result(Rating(1900, 30), 1)])
    assert after.volatility > 0.06 and after.rating > 1500


def paper_step5(given: Step5, epsilon: float = 1e-6) -> float:
    """sigma' by steps 5.2 to 5.5 of Glickman's "Example of the Glicko-2 system" as printed:
    the Illinois algorithm, which halves f(A) when A is kept."""
    sigma, phi, v, delta, tau = given
    big_a = math.log(sigma**2)
    if delta**2 > phi**2 + v:
        big_b = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while paper_f(math.log(sigma**2) - k * tau, given) < 0:
            k += 1
        big_b = math.log(sigma**2) - k * tau
    f_a, f_b = paper_f(big_a, given), paper_f(big_b, given)
    while abs(big_b - big_a) > epsilon:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = paper_f(big_c, given)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a = f_a / 2
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2)


@pytest.mark.parametrize(
    "given",
    [
        Step5(0.06, 1.1513, 1.7785, -0.4834, 0.5),  # the worked example
        Step5(0.06, 0.38, 0.13, 0.1, 0.5),  # A is kept (and f(A) halved) on the way
        Step5(0.07, 0.12, 0.33, -0.2, 0.5),
        # f(B) and f(C) of one sign, their product far below 1: A is kept and the paper
        # takes a third step; an iteration that let B replace A there (losing the bracket)
        # would stop a step early, a millionth off the paper's sigma'.
        Step5(0.06, 0.3, 0.1, 0.1, 0.5),
        # delta^2 > phi^2 + v: step 5.2 takes B = ln(delta^2 - phi^2 - v) (a far and a near
        # one: 9 > 2.0289, and 1 > 0.75 by less than 1, phi being below 1)
        Step5(0.06, 0.17, 2.0, 3.0, 0.5),
        Step5(0.06, 0.5, 0.5, 1.0, 0.5),
        # delta^2 = phi^2 + v exactly (0.25 + 0.75 = 1, all exact in binary): the paper's
        # "if delta^2 > phi^2 + v" is false, so B comes from the steps a - k tau
        Step5(0.06, 0.5, 0.75, 1.0, 0.5),
        # a loose tau (update takes any): step 5.2 steps down by tau, to k = 2 here
        Step5(1.0, 0.01, 0.0001, 0.0, 3.0),
    ],
)
def test_volatility_follows_the_papers_iteration_to_its_last_digits(given: Step5) -> None:
    """The iteration stops within 1e-6 of the root, where it stops depends on its steps:
    the same steps as the paper give the same sigma' as every Glicko-2 that follows it (to
    rounding: f is written in another order here), not merely one near the root."""
    assert _volatility(*given) == pytest.approx(paper_step5(given), rel=1e-12)


def test_team_ratings_start_from_each_players_own_rating_and_deviation() -> None:
    """A game of alliances moves each player from where they stood: a well-known strong
    player who wins stays near their rating and keeps a small deviation; a new player
    moves further."""
    strong = Rating(rating=1900, deviation=80, games=30)
    (winner,), (loser,) = team_update([[strong], [Rating()]], [1, 2])
    assert 1900 < winner.rating < 1920 and winner.deviation < 81 and winner.games == 31
    assert loser.rating < 1500 and 80 < loser.deviation < 350
    assert winner.rating - 1900 < 1500 - loser.rating  # the new player moves more
