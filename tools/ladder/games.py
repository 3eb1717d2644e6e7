"""One ladder game between two players, and the pairs a ladder plays.

A game is one of the rules' games ("war", "battle", "napoleonic") or a Napoleonic Chess
scenario of alliances ("grand_battle_2v2"): there the pair's first player takes every seat
of the first alliance in turn order (red and blue), the second every seat of the other.

A player is a level, "1" to "5", "random" (a uniformly random legal action of its own),
"mcts" (a plain Monte Carlo tree search with random rollouts, `mcts.py`, given TIME_FACTOR
times a level's budget) or "openspiel" (OpenSpiel's own MCTS bot with random rollouts,
`openspiel.py`, War and Battle only, given the same; OpenSpiel is an optional extra). The
levels search with a budget of CPU time per action and a wall-clock cap far beyond it
(`engine_service/ai/budget.py`), so the result does not depend on the machine's load. Each
game has its own seed; the seed also picks the choices of the random mover and of the tree
searches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from engine_service.ai import evaluate, suggest
from engine_service.rules import rulesets
from engine_service.rules.base import AnyRuleset
from engine_service.rules.game import Game
from tools.ladder.mcts import TIME_FACTOR, mcts_action
from tools.ladder.openspiel import openspiel_action

RANDOM = "random"
MCTS = "mcts"
OPENSPIEL = "openspiel"
# Plies (actions; in Napoleonic Chess player-turns) after which a game is adjudicated; a
# game of four players takes some 60-360 player-turns to end by the rules.
MAX_PLIES = {"war": 200, "battle": 200, "napoleonic": 60, "grand_battle_2v2": 600}
# The Napoleonic Chess scenarios the ladder plays, beside the games' default starts.
SCENARIOS = ("grand_battle_2v2",)
ADJUDICATION = 1.0  # material units the evaluation must show for an adjudicated win
WALL_CAP = 3600.0  # seconds: never the limit, so a busy machine does not change the play
LADDER_SEAL_KEY = bytes(range(1, 33))  # any key: the ladder's sealed arrays stay in-process


@dataclass(frozen=True)
class Pairing:
    """One game to play: the game, the player of each side (in turn order), its seed."""

    game: str
    players: tuple[str, str]
    seed: int
    budget: float  # CPU seconds per action of a level


@dataclass(frozen=True)
class Played:
    """A finished ladder game: `score` for the first player, and how it ended; with the
    "openspiel" player, the mean of its CPU time per searched move over its budget."""

    pairing: Pairing
    score: float
    end: str  # "played out" or "adjudicated"
    plies: int
    cpu_ratio: float | None = None


_RULESETS: dict[str, AnyRuleset] = {}


def ruleset_of(game: str) -> AnyRuleset:
    """The ruleset of a game or of a scenario's game (built once per process)."""
    if not _RULESETS:
        _RULESETS.update(rulesets(LADDER_SEAL_KEY))
    return _RULESETS["napoleonic" if game in SCENARIOS else game]


def options_of(game: str) -> dict[str, str]:
    """The options the ladder plays a game or a scenario under (else the defaults)."""
    return {"scenario": game} if game in SCENARIOS else {}


def seats(game: str) -> list[tuple[str, int]]:
    """Every side of the game in turn order, with the pair's player it is played by: 0 for
    the first alliance's seats (a side without an alliance is its own), 1 for the rest."""
    ruleset = ruleset_of(game)
    sides = ruleset.sides_of(ruleset.resolve_options(options_of(game)))
    first = sides[0].alliance or sides[0].id
    return [(side.id, 0 if (side.alliance or side.id) == first else 1) for side in sides]


def pairings(
    game: str, pairs: list[tuple[str, str]], games_per_pair: int, budget: float, seed: int
) -> list[Pairing]:
    """`games_per_pair` games of each pair, the players taking the first side in turn."""
    out: list[Pairing] = []
    for a, b in pairs:
        for n in range(games_per_pair):
            players = (a, b) if n % 2 == 0 else (b, a)
            out.append(Pairing(game, players, seed * 1_000_003 + len(out), budget))
    return out


def play(pairing: Pairing) -> Played:
    """Play one game to its end or its cap of plies."""
    ruleset = ruleset_of(pairing.game)
    state: Any = ruleset.new_game(ruleset.resolve_options(options_of(pairing.game)))
    sides = seats(pairing.game)
    player_of = {side: pairing.players[index] for side, index in sides}
    rng = random.Random(pairing.seed)
    actions = 0
    ratios: list[float] = []
    cap = MAX_PLIES[pairing.game]
    while ruleset.outcome(state) is None and _plies(ruleset.id, state, actions) < cap:
        side = ruleset.to_act(state)[0]
        player = player_of[side]
        if player == RANDOM:
            own = [a for a in ruleset.legal_actions(state) if ruleset.actor(state, a) == side]
            action = rng.choice(own) if own else ruleset.random_action(state, rng)
        elif player == MCTS:
            budget = pairing.budget * TIME_FACTOR
            action = mcts_action(ruleset, state, budget, pairing.seed + actions)
        elif player == OPENSPIEL:
            budget = pairing.budget * TIME_FACTOR
            move = openspiel_action(pairing.game, ruleset, state, budget, pairing.seed + actions)
            action = move.action
            if move.cpu:
                ratios.append(move.cpu / budget)
        else:
            action = suggest(
                Game(ruleset, state),
                side=side,
                seconds=pairing.budget,
                seed=pairing.seed + actions,
                strength=int(player),
                wall=WALL_CAP,
            ).action
        state = ruleset.play(state, action)
        actions += 1
    plies = _plies(ruleset.id, state, actions)
    outcome = ruleset.outcome(state)
    first = sides[0][0]
    ratio = sum(ratios) / len(ratios) if ratios else None
    if outcome is not None:
        score = 0.5 if outcome.winner is None else float(first in outcome.winning_sides)
        return Played(pairing, score, "played out", plies, ratio)
    value = evaluate(ruleset, state, first, None)
    score = 1.0 if value > ADJUDICATION else 0.0 if value < -ADJUDICATION else 0.5
    return Played(pairing, score, "adjudicated", plies, ratio)


def _plies(game: str, state: Any, actions: int) -> int:
    return int(state.turn_number) if game == "napoleonic" else actions
