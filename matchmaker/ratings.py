"""Ratings: Glicko-2 for games of two players, from Mark Glickman's description of the
algorithm ("Example of the Glicko-2 system", steps 1 to 8), one rating period per finished
rated game; and for games of more than two players, in alliances, the Plackett-Luce model
of the `openskill` library (Weng and Lin's Bayesian ratings for teams and many players),
in a pool of their own (`pool`) on the same 1500-centred scale.

Pure functions over small values; `players.py` keeps them in Redis per player and pool.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from openskill.models import PlackettLuce

SCALE = 173.7178  # Glicko-2 scale factor (400 / ln 10)
DEFAULT_RATING = 1500.0
DEFAULT_DEVIATION = 350.0
DEFAULT_VOLATILITY = 0.06
TAU = 0.5  # system constant: how much volatility may change per period (Glickman: 0.3..1.2)
EPSILON = 1e-6  # convergence tolerance of the volatility iteration


@dataclass(frozen=True)
class Rating:
    """A player's Glicko rating in one ruleset, on the Glicko (1500-centred) scale."""

    rating: float = DEFAULT_RATING
    deviation: float = DEFAULT_DEVIATION
    volatility: float = DEFAULT_VOLATILITY
    games: int = 0

    def text(self) -> str:
        """The stored form, read back by `Rating.parse`."""
        return f"{self.rating!r},{self.deviation!r},{self.volatility!r},{self.games}"

    @classmethod
    def parse(cls, text: str | bytes | None) -> Rating:
        """A rating from its stored form; the default rating for None or empty."""
        if not text:
            return cls()
        raw = text.decode() if isinstance(text, bytes) else text
        rating, deviation, volatility, games = raw.split(",")
        return cls(float(rating), float(deviation), float(volatility), int(games))


@dataclass(frozen=True)
class Result:
    """One game of a rating period: the opponent's rating and the score (1, 0.5 or 0)."""

    opponent: Rating
    score: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _volatility(sigma: float, phi: float, variance: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois variant of regula falsi."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        top = ex * (delta * delta - phi * phi - variance - ex)
        bottom = 2.0 * (phi * phi + variance + ex) ** 2
        return top / bottom - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + variance:
        big_b = math.log(delta * delta - phi * phi - variance)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Rating, results: Sequence[Result], tau: float = TAU) -> Rating:
    """The player's rating after one rating period with `results` (Glicko-2 steps 2-8).

    With no results only the deviation grows (step 6). `games` counts the results.
    """
    mu = (player.rating - DEFAULT_RATING) / SCALE
    phi = player.deviation / SCALE
    sigma = player.volatility
    if not results:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        return replace(player, deviation=min(DEFAULT_DEVIATION, phi_star * SCALE))
    inverse_variance = 0.0
    improvement = 0.0
    for result in results:
        mu_j = (result.opponent.rating - DEFAULT_RATING) / SCALE
        phi_j = result.opponent.deviation / SCALE
        expected = _expected(mu, mu_j, phi_j)
        g = _g(phi_j)
        inverse_variance += g * g * expected * (1.0 - expected)
        improvement += g * (result.score - expected)
    variance = 1.0 / inverse_variance
    delta = variance * improvement
    new_sigma = _volatility(sigma, phi, variance, delta, tau)
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / variance)
    new_mu = mu + new_phi * new_phi * improvement
    return Rating(
        rating=SCALE * new_mu + DEFAULT_RATING,
        deviation=min(DEFAULT_DEVIATION, SCALE * new_phi),
        volatility=new_sigma,
        games=player.games + len(results),
    )


def score_of(winner: str, side: str) -> float:
    """The Glicko score of `side` in a game won by `winner` ("" for a draw)."""
    if not winner:
        return 0.5
    return 1.0 if winner == side else 0.0


# Multiplayer games: the openskill defaults (mu 25, sigma 25/3, beta sigma/2, tau sigma/100)
# scaled onto the Glicko scale, so both kinds of rating read alike.
TEAM_MODEL = PlackettLuce(
    mu=DEFAULT_RATING,
    sigma=DEFAULT_DEVIATION,
    beta=DEFAULT_DEVIATION / 2,
    tau=DEFAULT_DEVIATION / 100,
)
MULTIPLAYER = "multiplayer"  # the suffix of a ruleset's pool of multiplayer ratings


def pool(ruleset: str, seats: int) -> str:
    """Where a game's ratings are kept: the ruleset's own for two players, its pool of
    multiplayer games ("napoleonic.multiplayer") for more."""
    return ruleset if seats <= 2 else f"{ruleset}.{MULTIPLAYER}"


def team_update(teams: Sequence[Sequence[Rating]], ranks: Sequence[int]) -> list[list[Rating]]:
    """Everyone's rating after one game of alliances (`ranks`: 1 for the winners, higher
    for the others; equal ranks draw), by openskill's Plackett-Luce model."""
    rated = TEAM_MODEL.rate(
        [[TEAM_MODEL.rating(mu=r.rating, sigma=r.deviation) for r in team] for team in teams],
        ranks=[float(rank) for rank in ranks],
    )
    return [
        [
            replace(old, rating=new.mu, deviation=min(DEFAULT_DEVIATION, new.sigma),
                    games=old.games + 1)
            for old, new in zip(team, after, strict=True)
        ]
        for team, after in zip(teams, rated, strict=True)
    ]  # fmt: skip
