"""Iterative-deepening alpha-beta over any `Ruleset`, within a time budget.

Works for any turn structure: at each node the side to act is read from the state, and the
search maximises when it is the suggesting side and minimises otherwise (so Napoleonic
Chess, where one side acts several times in a row and the defender acts in the middle of a
turn, needs no special case here). Evaluations come from `engine_service.ai.evaluation`.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from engine_service.ai.evaluation import WIN, evaluate
from engine_service.rules.base import AnyRuleset

CHECK_EVERY = 256  # nodes between clock checks


@dataclass
class Suggestion:
    """The search's answer."""

    action: Any
    evaluation: float
    depth: int
    line: list[str] = field(default_factory=list)
    nodes: int = 0


class _OutOfTime(Exception):
    pass


@dataclass
class _Search:
    ruleset: AnyRuleset
    side: str
    deadline: float
    rng: random.Random
    nodes: int = 0
    table: dict[Any, tuple[int, float, Any]] = field(default_factory=dict)

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes % CHECK_EVERY == 0 and time.perf_counter() > self.deadline:
            raise _OutOfTime

    def actions(self, state: Any) -> list[Any]:
        actions = self.ruleset.legal_actions(state)
        if not actions:
            fallback = self.ruleset.random_action(state, self.rng)
            return [fallback] if fallback is not None else []
        return actions

    def value(self, state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        """Minimax value of `state` for `self.side`, searched `depth` plies deep."""
        self.tick()
        outcome = self.ruleset.outcome(state)
        if outcome is not None or depth == 0:
            score = evaluate(self.ruleset, state, self.side, outcome)
            # Prefer quicker wins and slower losses.
            return score - ply if score >= WIN / 2 else score + ply if score <= -WIN / 2 else score
        actions = self.actions(state)
        if not actions:
            return evaluate(self.ruleset, state, self.side, None)
        maximising = self.ruleset.to_act(state)[0] == self.side
        remembered = self.table.get(state)
        if remembered is not None and remembered[2] in actions:
            best_first = remembered[2]
            actions.remove(best_first)
            actions.insert(0, best_first)
        best_action = actions[0]
        if maximising:
            best = -float("inf")
            for action in actions:
                score = self.value(self.ruleset.play(state, action), depth - 1, alpha, beta, ply + 1)
                if score > best:
                    best, best_action = score, action
                alpha = max(alpha, best)
                if alpha >= beta:
                    break
        else:
            best = float("inf")
            for action in actions:
                score = self.value(self.ruleset.play(state, action), depth - 1, alpha, beta, ply + 1)
                if score < best:
                    best, best_action = score, action
                beta = min(beta, best)
                if alpha >= beta:
                    break
        self.table[state] = (depth, best, best_action)
        return best

    def principal_line(self, state: Any, first: Any, length: int) -> list[str]:
        """The expected line: the chosen action, then the remembered best replies."""
        line = [self.ruleset.format_action(state, first)]
        state = self.ruleset.play(state, first)
        seen = {state}
        while len(line) < length and self.ruleset.outcome(state) is None:
            remembered = self.table.get(state)
            if remembered is None:
                break
            action = remembered[2]
            line.append(self.ruleset.format_action(state, action))
            state = self.ruleset.play(state, action)
            if state in seen:
                break
            seen.add(state)
        return line


def search(
    ruleset: AnyRuleset,
    state: Any,
    side: str,
    *,
    seconds: float,
    max_depth: int = 0,
    seed: int = 0,
) -> Suggestion:
    """The best action for `side` found by iterative deepening within `seconds`."""
    started = time.perf_counter()
    rng = random.Random(seed or 0x5EED)
    worker = _Search(ruleset, side, started + seconds, rng)
    actions = worker.actions(state)
    if not actions:
        raise ValueError("no action to suggest")
    rng.shuffle(actions)  # tie-breaking varies with the seed, not with listing order
    best: Suggestion = Suggestion(actions[0], evaluate(ruleset, state, side, None), 0, [], 0)
    if len(actions) == 1:
        best.line = [ruleset.format_action(state, actions[0])]
        return best
    depth = 0
    while max_depth == 0 or depth < max_depth:
        depth += 1
        try:
            scored = []
            alpha = -float("inf")
            for action in actions:
                score = worker.value(ruleset.play(state, action), depth - 1, alpha, float("inf"), 1)
                scored.append((score, action))
                alpha = max(alpha, score)
        except _OutOfTime:
            break
        scored.sort(key=lambda pair: pair[0], reverse=True)
        actions = [action for _, action in scored]  # best first for the next iteration
        best = Suggestion(scored[0][1], scored[0][0], depth, [], worker.nodes)
        if abs(scored[0][0]) >= WIN / 2 or time.perf_counter() > worker.deadline:
            break
    best.nodes = worker.nodes
    best.line = worker.principal_line(state, best.action, depth)
    return best
