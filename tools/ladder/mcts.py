"""A plain Monte Carlo tree search: the outside yardstick the levels are placed against.

The issue asks for OpenSpiel's MCTS with random rollouts: `openspiel.py` plays OpenSpiel's
own bot where the optional extra `ladder` is installed. This is the same textbook algorithm,
written for the public `Ruleset` interface and knowing nothing of any game, with no
dependency and in every game:

- **selection**: from the root, while a node is fully expanded, the child with the highest
  UCT value, mean reward + C · sqrt(ln N(parent) / N(child)) (C = `EXPLORATION`, as
  OpenSpiel's default `uct_c` = 2, for rewards from -1 to 1 as OpenSpiel's returns);
- **expansion**: one untried action of the node, in a seeded random order;
- **simulation**: uniformly random legal actions (`Ruleset.random_action`) to the end of the
  game, or for at most `ROLLOUT_PLIES` actions, after which the rollout counts as a draw
  (the search has no evaluation to judge an unfinished position by);
- **backpropagation**: each node on the path adds the rollout's reward for the side that
  chose the action leading to it (1 a win, 0 a draw, -1 a loss).

It simulates until its CPU time is spent or it has run `simulations` of them (at least one),
then plays the root's most visited action, as OpenSpiel's `MCTSBot` does; with a number of
simulations and no time limit it is deterministic for its seed. The ladder gives it
`TIME_FACTOR` times a level's budget: the issue's "level 5 at 1 s against MCTS at 10 s".
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from engine_service.rules.base import AnyRuleset

EXPLORATION = 2.0
ROLLOUT_PLIES = 400
TIME_FACTOR = 10.0  # the search's CPU time, in levels' budgets


class Node:
    """A position in the tree: the side that chose the action into it, its children by
    action, the actions not yet tried, and the visits and total reward so far."""

    __slots__ = ("actions", "children", "mover", "reward", "state", "untried", "visits")

    def __init__(self, ruleset: AnyRuleset, state: Any, mover: str, rng: random.Random) -> None:
        self.state = state
        self.mover = mover
        self.children: dict[int, Node] = {}
        self.actions = _own_actions(ruleset, state) if ruleset.outcome(state) is None else []
        self.untried = list(range(len(self.actions)))
        rng.shuffle(self.untried)
        self.visits = 0
        self.reward = 0.0

    def select(self) -> Node:
        """The child with the highest UCT value."""
        log_n = math.log(self.visits)
        return max(
            self.children.values(),
            key=lambda c: c.reward / c.visits + EXPLORATION * math.sqrt(log_n / c.visits),
        )


def mcts_action(
    ruleset: AnyRuleset, state: Any, seconds: float, seed: int, simulations: int = 0
) -> Any:
    """The most visited action at the root after `seconds` of CPU time of simulations
    (0: no limit) or `simulations` of them (0: no limit), whichever ends first."""
    rng = random.Random(seed)
    root = Node(ruleset, state, "", rng)
    if len(root.actions) == 1:
        return root.actions[0]
    if not root.actions:  # nothing to list (a secret deployment): a random action
        return ruleset.random_action(state, rng)
    deadline = time.thread_time() + seconds if seconds else math.inf
    while True:
        _simulate(ruleset, root, rng)
        if root.visits == simulations or time.thread_time() > deadline:
            break
    best = max(root.children.items(), key=lambda item: item[1].visits)[0]
    return root.actions[best]


def _simulate(ruleset: AnyRuleset, root: Node, rng: random.Random) -> None:
    """One selection, expansion, rollout and backpropagation."""
    path = [root]
    node = root
    while not node.untried and node.children:
        node = node.select()
        path.append(node)
    if node.untried:
        index = node.untried.pop()
        mover = ruleset.to_act(node.state)[0]
        child = Node(ruleset, ruleset.play(node.state, node.actions[index]), mover, rng)
        node.children[index] = child
        node = child
        path.append(node)
    rewards = _rollout(ruleset, node.state, rng)
    for visited in path:
        visited.visits += 1
        visited.reward += rewards.get(visited.mover, 0.0)


def _rollout(ruleset: AnyRuleset, state: Any, rng: random.Random) -> dict[str, float]:
    """Each side's reward after uniformly random play from `state` (a draw at the cap)."""
    for _ in range(ROLLOUT_PLIES):
        if ruleset.outcome(state) is not None:
            break
        action = ruleset.random_action(state, rng)
        if action is None:
            break
        state = ruleset.play(state, action)
    outcome = ruleset.outcome(state)
    if outcome is None or outcome.winner is None:
        return {}
    return {side: 1.0 if side in outcome.winning_sides else -1.0 for side in _sides(ruleset)}


def _sides(ruleset: AnyRuleset) -> list[str]:
    return [side.id for side in ruleset.sides]


def _own_actions(ruleset: AnyRuleset, state: Any) -> list[Any]:
    """The legal actions of the (first) side to act."""
    side = ruleset.to_act(state)[0]
    return [a for a in ruleset.legal_actions(state) if ruleset.actor(state, a) == side]
