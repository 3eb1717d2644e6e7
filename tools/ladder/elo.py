"""Maximum-likelihood Elo ratings from game results, with their 95 % intervals.

Each game between players i and j scores s (1 win, 0.5 draw, 0 loss for i); its expected
score is the logistic curve of the rating difference, E = 1 / (1 + 10^((Rj - Ri) / 400)).
The ratings maximise the likelihood of all results (draws as half a win and half a loss),
found by Newton's method with one player's rating held at its anchor; a rating's interval
is 1.96 standard errors from the inverse of the likelihood's curvature (the observed
information). Like BayesElo's default prior, every pair of players that met also counts
`PRIOR_DRAWS` virtual draws, so that a pair one player swept keeps a finite (if uncertain)
difference; the games and scores reported are the real ones only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SCALE = 400 / math.log(10)  # Elo points per natural-log unit of the odds
LIMIT = 4000.0  # the farthest a rating may stray from the anchor (a safety net)
PRIOR_DRAWS = 2
Z95 = 1.959964


@dataclass(frozen=True)
class Result:
    """One game: `first` scored `score` (1, 0.5 or 0) against `second`."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class Rating:
    """A player's rating, its 95 % half-interval (inf: unbounded), games and score."""

    player: str
    elo: float
    interval: float
    games: int
    score: float


def expected(difference: float) -> float:
    """The expected score of a player `difference` Elo above its opponent."""
    return 1.0 / (1.0 + math.exp(-difference / SCALE))


def ratings(
    results: Iterable[Result], anchor: str, anchor_elo: float = 1000.0, prior: int = PRIOR_DRAWS
) -> list[Rating]:
    """Every player's maximum-likelihood rating, `anchor` held at `anchor_elo`, with `prior`
    virtual draws for every pair that met."""
    real = list(results)
    met = {tuple(sorted((r.first, r.second))) for r in real}
    games = real + [Result(a, b, 0.5) for a, b in sorted(met) for _ in range(prior)]
    players = sorted({r.first for r in games} | {r.second for r in games})
    if anchor not in players:
        raise ValueError(f"the anchor {anchor} played no game")
    free = [p for p in players if p != anchor]
    index = {p: i for i, p in enumerate(free)}
    elo = dict.fromkeys(players, anchor_elo)
    for _ in range(100):
        gradient, information = _derivatives(games, elo, index)
        step = _solve(information, gradient)
        if step is None:
            break
        for player, change in zip(free, step, strict=True):
            elo[player] = min(anchor_elo + LIMIT, max(anchor_elo - LIMIT, elo[player] + change))
        if max((abs(c) for c in step), default=0.0) < 1e-6:
            break
    _, information = _derivatives(games, elo, index)
    covariance = _inverse(information)
    out = []
    for player in players:
        played = [r for r in real if player in (r.first, r.second)]
        scored = sum(r.score if r.first == player else 1 - r.score for r in played)
        clamped = abs(elo[player] - anchor_elo) >= LIMIT - 1e-6
        if player == anchor:
            interval = 0.0
        elif covariance is None or clamped:
            interval = math.inf
        else:
            variance = covariance[index[player]][index[player]]
            interval = Z95 * math.sqrt(variance) if variance > 0 else math.inf
        out.append(Rating(player, elo[player], interval, len(played), scored / len(played)))
    return out


def _derivatives(
    games: Sequence[Result], elo: dict[str, float], index: dict[str, int]
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient and the information matrix (minus its Hessian)."""
    n = len(index)
    gradient = [0.0] * n
    information = [[0.0] * n for _ in range(n)]
    for r in games:
        e = expected(elo[r.first] - elo[r.second])
        g = (r.score - e) / SCALE
        h = e * (1 - e) / SCALE**2
        i, j = index.get(r.first), index.get(r.second)
        if i is not None:
            gradient[i] += g
            information[i][i] += h
        if j is not None:
            gradient[j] -= g
            information[j][j] += h
        if i is not None and j is not None:
            information[i][j] -= h
            information[j][i] -= h
    return gradient, information


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float] | None:
    """x with matrix · x = vector (Gaussian elimination), None if singular."""
    n = len(vector)
    a = [[*row, vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-15:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col:
                factor = a[r][col] / a[col][col]
                for c in range(col, n + 1):
                    a[r][c] -= factor * a[col][c]
    return [a[i][n] / a[i][i] for i in range(n)]


def _inverse(matrix: list[list[float]]) -> list[list[float]] | None:
    """The inverse of a square matrix, None if singular."""
    n = len(matrix)
    columns = []
    for k in range(n):
        column = _solve(matrix, [1.0 if i == k else 0.0 for i in range(n)])
        if column is None:
            return None
        columns.append(column)
    return [[columns[j][i] for j in range(n)] for i in range(n)]
