"""Iterative-deepening alpha-beta over any `Ruleset`, within a time budget.

The search knows nothing of a game's rules beyond its `Policy`: what the legal actions
are, whose turn it is, a cheap test for a finished game, a static evaluation and a
static ordering of actions. Games with a policy of their own (`engine_service.ai.war`,
`engine_service.ai.battle`) get a fast key, an evaluation of their objectives and
capture-first ordering; any other game gets `RulesetPolicy`, which uses the public
`Ruleset` interface and counts material. `SearchStrategy` is a game's AI made of the
search and its policy.

The search is minimax on the side to act (so it works for any turn structure), with:

- a transposition table keyed by the policy's `key` (bounded: it is cleared when full),
  holding the depth, the value, whether that value is exact or a bound, and the best
  action, which is searched first on the next visit;
- move ordering: the table's action, then the policy's static order (wins and captures
  first), with killer actions (two per ply) and a history table for quiet actions;
- a capture-only quiescence search at the leaves (captures and recaptures), for the
  policies that list captures, and a one-ply extension where a policy says a leaf is too
  sharp to judge statically;
- a first, static ply before the clock is read, so that even a spent budget returns an
  action that was looked at;
- a budget read at every node (`budget.py`: CPU time of the searching thread, so a busy
  machine does not make it shallower, capped by the wall clock): when it runs out the
  iteration is abandoned and the best action of the last completed iteration is kept (or a
  better one the abandoned iteration had already proved).

Values are from the suggesting side's view; a won game is worth `WIN` less the plies to
get there, so quicker wins and slower losses are preferred.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine_service.ai.budget import Budget
from engine_service.ai.evaluation import WIN, material, outcome_value
from engine_service.ai.levels import LEVELS, STRONGEST, Level
from engine_service.rules.base import AnyRuleset, Outcome

TABLE_LIMIT = 400_000  # transposition-table entries before the table is cleared
QUIESCENCE_PLIES = 2  # captures and recaptures followed at the leaves
INFINITY = float("inf")

EXACT, LOWER, UPPER = 0, 1, 2  # kinds of table values: exact, at least, at most


@dataclass
class Suggestion:
    """The AI's answer: the action, its value, the depth reached, the expected line.

    `wins_in` is the number of turns of the winning side until a win the search has proved
    (the suggested action counts when the suggesting side wins), negative when the
    suggesting side loses whatever it does, 0 when the search proved neither.
    """

    action: Any
    evaluation: float
    depth: int
    line: list[str] = field(default_factory=list)
    nodes: int = 0
    wins_in: int = 0
    cut_short: bool = False  # the wall-clock cap ended the search before its budget


@dataclass(frozen=True, slots=True)
class Terms:
    """What a suggestion is asked within: `seconds` of CPU time, a depth cap (`max_depth`
    0: none), the `seed` that breaks ties, the `level` played (its noise and share of the
    work; `levels.py`) and the wall-clock cap (`wall` seconds, 0: `budget.py`'s default)."""

    seconds: float
    max_depth: int = 0
    seed: int = 0
    level: Level = LEVELS[STRONGEST]
    wall: float = 0.0


def wins_in(value: float) -> int:
    """The turns to a proved end from a search value (WIN less the plies to it), or 0.

    Sides alternate one action per turn in the games the search plays, so the winner's
    turns are half the plies, rounded up: a win on the suggested action is 1, a loss to
    the reply is -1.
    """
    if abs(value) < WIN / 2:
        return 0
    plies = max(1, round(WIN - abs(value)))
    turns = (plies + 1) // 2
    return turns if value > 0 else -turns


class Policy(Protocol):
    """What the search needs to know about a game (see `RulesetPolicy` for the generic one)."""

    ruleset: AnyRuleset
    # The game's unit of material, the worth of its infantry (War's Troop, Battle's
    # Infantry of the Line): a level's noise (`levels.py`) is in these units.
    unit: float

    def key(self, state: Any) -> Hashable:
        """A hashable key of the position for the transposition table."""

    def mover(self, state: Any) -> str:
        """The side to act (only called on unfinished states)."""

    def ended(self, state: Any) -> Outcome | None:
        """A cheap test for a finished game; may miss endings that need the legal actions."""

    def actions(self, state: Any) -> list[Any]:
        """The legal actions (empty once the game is over or nobody can act)."""

    def outcome(self, state: Any) -> Outcome | None:
        """The exact ending, asked only when `actions` is empty."""

    def evaluate(self, state: Any, side: str) -> float:
        """The static value of an unfinished state for `side`."""

    def order(self, state: Any, actions: list[Any]) -> list[tuple[float, Any]]:
        """Each action with a static ordering score (higher first): wins, captures, ..."""

    def captures(self, state: Any, actions: list[Any]) -> list[Any] | None:
        """The actions the quiescence search follows, or None to stop at the leaf."""

    def extend(self, state: Any) -> bool:
        """Whether a leaf is too sharp to evaluate statically (search one ply more)."""


class RulesetPolicy:
    """The generic policy: the public `Ruleset` interface and the material evaluation."""

    unit = 1.0  # every piece is worth 1

    def __init__(self, ruleset: AnyRuleset) -> None:
        self.ruleset = ruleset

    def key(self, state: Any) -> Hashable:
        """States are hashable immutable values."""
        key: Hashable = state
        return key

    def mover(self, state: Any) -> str:
        """The first side to act."""
        return self.ruleset.to_act(state)[0]

    def ended(self, state: Any) -> Outcome | None:
        """The ruleset's outcome."""
        return self.ruleset.outcome(state)

    def actions(self, state: Any) -> list[Any]:
        """The legal actions, or a random one when they cannot be listed."""
        actions = self.ruleset.legal_actions(state)
        if not actions and self.ruleset.to_act(state):
            fallback = self.ruleset.random_action(state, random.Random(0))
            return [fallback] if fallback is not None else []
        return actions

    def outcome(self, state: Any) -> Outcome | None:
        """The ruleset's outcome."""
        return self.ruleset.outcome(state)

    def evaluate(self, state: Any, side: str) -> float:
        """Material, every piece worth 1."""
        return material(self.ruleset, state, side, {})

    def order(self, state: Any, actions: list[Any]) -> list[tuple[float, Any]]:
        """No static knowledge: listing order."""
        return [(0.0, action) for action in actions]

    def captures(self, state: Any, actions: list[Any]) -> list[Any] | None:
        """No quiescence search."""
        return None

    def extend(self, state: Any) -> bool:
        """No extensions."""
        return False


class OutOfTimeError(Exception):
    """The budget is spent: the current iteration is abandoned."""


@dataclass
class _Entry:
    depth: int
    value: float
    kind: int
    action: Any


class Searcher:
    """One search: the clock, the counters and the tables of a single `search` call."""

    def __init__(self, policy: Policy, side: str, budget: Budget) -> None:
        self.policy = policy
        self.side = side
        self.budget = budget
        self.nodes = 0
        self.table: dict[Hashable, _Entry] = {}
        self.killers: dict[int, list[Any]] = {}
        self.history: dict[Any, int] = {}

    # -- helpers ---------------------------------------------------------------------

    def tick(self) -> None:
        """Count a node and stop the iteration when the budget is spent."""
        self.nodes += 1
        if self.budget.spent():
            raise OutOfTimeError

    def score(self, outcome: Outcome, ply: int) -> float:
        """The value of a finished game `ply` plies from the root."""
        value = outcome_value(outcome, self.side)
        if value > 0:
            return value - ply
        if value < 0:
            return value + ply
        return value

    def ordered(self, state: Any, actions: list[Any], ply: int, first: Any) -> list[Any]:
        """Actions in search order: the table's, static score, killers, history."""
        killers = self.killers.get(ply, ())
        history = self.history
        scored = []
        for static, action in self.policy.order(state, actions):
            bonus = static
            if action == first:
                bonus += 1e9
            elif static <= 0:
                if action in killers:
                    bonus += 50.0
                bonus += history.get(action, 0) * 1e-4
            scored.append((bonus, action))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [action for _, action in scored]

    def remember(self, key: Hashable, depth: int, value: float, kind: int, action: Any) -> None:
        """Store a result, clearing the table when it is full (bounded memory)."""
        table = self.table
        if len(table) >= TABLE_LIMIT:
            table.clear()
        old = table.get(key)
        if old is None or old.depth <= depth:
            table[key] = _Entry(depth, value, kind, action)

    def cutoff(self, action: Any, ply: int, depth: int, quiet: bool) -> None:
        """Killer and history bookkeeping for an action that caused a cut-off."""
        if not quiet:
            return
        killers = self.killers.setdefault(ply, [])
        if action not in killers:
            killers.insert(0, action)
            del killers[2:]
        self.history[action] = self.history.get(action, 0) + depth * depth

    # -- the search ------------------------------------------------------------------

    def value(self, state: Any, depth: int, alpha: float, beta: float, ply: int) -> float:
        """The minimax value of `state` for the root side, searched `depth` plies deep."""
        self.tick()
        policy = self.policy
        ended = policy.ended(state)
        if ended is not None:
            return self.score(ended, ply)
        if depth <= 0:
            if ply < 64 and policy.extend(state):
                depth = 1
            else:
                return self.quiesce(state, alpha, beta, ply, QUIESCENCE_PLIES)
        key = policy.key(state)
        entry = self.table.get(key)
        first = None
        if entry is not None:
            first = entry.action
            if entry.depth >= depth:
                if entry.kind == EXACT:
                    return entry.value
                if entry.kind == LOWER and entry.value >= beta:
                    return entry.value
                if entry.kind == UPPER and entry.value <= alpha:
                    return entry.value
        actions = policy.actions(state)
        if not actions:
            outcome = policy.outcome(state)
            if outcome is not None:
                return self.score(outcome, ply)
            return policy.evaluate(state, self.side)
        maximising = policy.mover(state) == self.side
        original_alpha, original_beta = alpha, beta
        best = -INFINITY if maximising else INFINITY
        best_action = None
        play = policy.ruleset.play
        for action in self.ordered(state, actions, ply, first):
            child = self.value(play(state, action), depth - 1, alpha, beta, ply + 1)
            if maximising:
                if child > best:
                    best, best_action = child, action
                    alpha = max(alpha, best)
            elif child < best:
                best, best_action = child, action
                beta = min(beta, best)
            if alpha >= beta:
                self.cutoff(action, ply, depth, _quiet(policy, state, action))
                break
        # Fail-soft bounds read the same at both kinds of node: a value at or below the
        # window's floor is an upper bound, at or above its ceiling a lower bound.
        if best <= original_alpha:
            kind = UPPER
        elif best >= original_beta:
            kind = LOWER
        else:
            kind = EXACT
        self.remember(key, depth, best, kind, best_action)
        return best

    def quiesce(self, state: Any, alpha: float, beta: float, ply: int, left: int) -> float:
        """Captures only, with the static value as the side to move's fallback."""
        policy = self.policy
        stand = policy.evaluate(state, self.side)
        if left <= 0:
            return stand
        maximising = policy.mover(state) == self.side
        if maximising:
            if stand >= beta:
                return stand
            alpha = max(alpha, stand)
        else:
            if stand <= alpha:
                return stand
            beta = min(beta, stand)
        actions = policy.actions(state)
        captures = policy.captures(state, actions) if actions else None
        if not captures:
            if not actions:
                outcome = policy.outcome(state)
                if outcome is not None:
                    return self.score(outcome, ply)
            return stand
        best = stand
        play = policy.ruleset.play
        for _, action in sorted(
            policy.order(state, captures), key=lambda pair: pair[0], reverse=True
        ):
            self.tick()
            child_state = play(state, action)
            ended = policy.ended(child_state)
            if ended is not None:
                child = self.score(ended, ply + 1)
            else:
                child = self.quiesce(child_state, alpha, beta, ply + 1, left - 1)
            if maximising:
                if child > best:
                    best = child
                    alpha = max(alpha, best)
            elif child < best:
                best = child
                beta = min(beta, best)
            if alpha >= beta:
                break
        return best

    def principal_line(self, state: Any, first: Any, length: int) -> list[str]:
        """The expected line: the chosen action, then the table's best replies."""
        ruleset = self.policy.ruleset
        line = [ruleset.format_action(state, first)]
        state = ruleset.play(state, first)
        seen = {self.policy.key(state)}
        while len(line) < max(length, 1) and ruleset.outcome(state) is None:
            entry = self.table.get(self.policy.key(state))
            if entry is None or entry.action is None:
                break
            if entry.action not in self.policy.actions(state):
                break
            line.append(ruleset.format_action(state, entry.action))
            state = ruleset.play(state, entry.action)
            key = self.policy.key(state)
            if key in seen:
                break
            seen.add(key)
        return line


def _quiet(policy: Policy, state: Any, action: Any) -> bool:
    """Whether an action is quiet (no static ordering bonus): killers and history only."""
    return all(score <= 0 for score, _ in policy.order(state, [action]))


def search(
    policy: Policy,
    state: Any,
    side: str,
    *,
    seconds: float,
    max_depth: int = 0,
    seed: int = 0,
    noise: float = 0.0,
    wall: float = 0.0,
) -> Suggestion:
    """The best action for `side` found by iterative deepening within `seconds` of CPU
    time, capped at `wall` seconds of the clock (0: the default cap, `budget.py`).

    `max_depth` 0 means as deep as the time allows. The seed breaks ties between actions
    the search cannot tell apart, so that different seeds vary the play. With `noise`
    (a weaker level, `levels.py`) each root action gets a Gaussian offset of that
    deviation, drawn once, and the action picked is the best by value plus offset; the
    root's window takes the offsets in (an action is searched only for a value that would
    beat the best so far once its offset is added), so a noisy level prunes as deeply as
    the strongest and its depth cap, not the noise, sets how far it sees.
    """
    # A little of the budget is kept for the last node in flight and the expected line.
    searcher = Searcher(policy, side, Budget(max(seconds - 0.003, 0.85 * seconds), wall))
    actions = policy.actions(state)
    if not actions:
        raise ValueError("no action to suggest")
    ruleset = policy.ruleset
    rng = random.Random(seed)
    rng.shuffle(actions)  # ties between equal actions vary with the seed
    actions = [action for _, action in _stable_order(policy.order(state, actions))]
    maximising = policy.mover(state) == side
    # A first, static ply (no clock): every action is scored at least once, so even an
    # exhausted budget returns a considered action.
    scored_once = []
    for action in actions:
        searcher.nodes += 1
        child = ruleset.play(state, action)
        ended = policy.ended(child)
        value = searcher.score(ended, 1) if ended is not None else policy.evaluate(child, side)
        scored_once.append((value if maximising else -value, action))
    ranked_once = _stable_order(scored_once)
    actions = [action for _, action in ranked_once]
    top = ranked_once[0][0]
    best = Suggestion(actions[0], top if maximising else -top, 1, [], searcher.nodes)
    offsets = {id(action): rng.gauss(0.0, noise) for action in actions} if noise else {}
    if noise:
        best = _noisy_pick(scored_once, 1, maximising, offsets)
    if len(actions) == 1 or abs(top) >= WIN / 2:
        return _finished(best, searcher, state)
    depth = 0
    while max_depth == 0 or depth < max_depth:
        depth += 1
        scored: list[tuple[float, Any]] = []
        alpha, beta = -INFINITY, INFINITY
        noisy_best = -INFINITY  # the best value plus offset so far, for the root's mover
        noisy_choice: tuple[float, Any] | None = None  # its exact value and action
        try:
            for action in actions:
                child = ruleset.play(state, action)
                if noise:
                    # Only a value beating `noisy_best` once offset matters: the window.
                    offset = offsets[id(action)]
                    if maximising:
                        value = searcher.value(child, depth - 1, noisy_best - offset, beta, 1)
                    else:
                        value = searcher.value(child, depth - 1, alpha, offset - noisy_best, 1)
                    if (value if maximising else -value) + offset > noisy_best:
                        noisy_best = (value if maximising else -value) + offset
                        noisy_choice = (value, action)
                    scored.append((value, action))
                    continue
                value = searcher.value(child, depth - 1, alpha, beta, 1)
                scored.append((value, action))
                if maximising:
                    alpha = max(alpha, value)
                else:
                    beta = min(beta, value)
        except OutOfTimeError:
            if not noise:
                _adopt_partial(best, scored, depth, maximising, searcher.nodes)
            elif noisy_choice is not None and noisy_choice[1] is not scored[0][1]:
                # The first action searched was the last pick: one that beat it (offsets
                # counted) at this depth is the better pick at this depth.
                best = Suggestion(noisy_choice[1], noisy_choice[0], depth, [], searcher.nodes)
            break
        # Actions not better than the best are bounds only; keep their previous order.
        ranked = sorted(
            enumerate(scored),
            key=lambda item: (item[1][0] if maximising else -item[1][0], -item[0]),
            reverse=True,
        )
        actions = [action for _, (_, action) in ranked]
        top_value, top_action = scored[ranked[0][0]]
        best = Suggestion(top_action, top_value, depth, [], searcher.nodes)
        if noisy_choice is not None:
            best = Suggestion(noisy_choice[1], noisy_choice[0], depth, [], searcher.nodes)
        if abs(top_value) >= WIN / 2 or searcher.budget.spent():
            break
    return _finished(best, searcher, state)


def _finished(best: Suggestion, searcher: Searcher, state: Any) -> Suggestion:
    """The answer with its node count, expected line and proved end."""
    best.nodes = max(searcher.nodes, 1)
    best.line = searcher.principal_line(state, best.action, max(best.depth, 1))
    best.wins_in = wins_in(best.evaluation)
    best.cut_short = searcher.budget.cut_short
    return best


def _noisy_pick(
    ordering: Sequence[tuple[float, Any]],
    depth: int,
    maximising: bool,
    offsets: dict[int, float],
) -> Suggestion:
    """The action best by its ordering score (higher is better for the root's mover) plus
    its offset; its evaluation from the suggesting side's view."""
    value, action = max(ordering, key=lambda pair: pair[0] + offsets[id(pair[1])])
    return Suggestion(action, value if maximising else -value, depth)


def _stable_order(scored: Sequence[tuple[float, Any]]) -> list[tuple[float, Any]]:
    """Highest static score first, keeping the given order among equals."""
    return sorted(scored, key=lambda pair: pair[0], reverse=True)


def _adopt_partial(
    best: Suggestion, scored: list[tuple[float, Any]], depth: int, maximising: bool, nodes: int
) -> None:
    """Use an abandoned iteration's results when they already prove a better action.

    The first action searched is the previous best; any action searched after it whose
    value beats it at this depth is better at this depth (alpha-beta gives exact values
    for improvements), so it is taken.
    """
    if not scored:
        return
    reference = scored[0][0]
    pick = max(scored, key=lambda pair: pair[0] if maximising else -pair[0])
    if (pick[0] > reference) if maximising else (pick[0] < reference):
        best.action, best.evaluation = pick[1], pick[0]
        best.depth = depth
    best.nodes = nodes


class SearchStrategy:
    """A game's AI made of the search and the game's policy."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def suggest(self, state: Any, side: str, terms: Terms) -> Suggestion:
        """The best action the search finds for `side` within the terms (with the level's
        noise, in the game's units of material, on the root values)."""
        return search(
            self.policy,
            state,
            side,
            seconds=terms.seconds,
            max_depth=terms.max_depth,
            seed=terms.seed,
            noise=terms.level.noise * self.policy.unit,
            wall=terms.wall,
        )

    def evaluate(self, state: Any, side: str) -> float:
        """The policy's static value of an unfinished state for `side`."""
        return self.policy.evaluate(state, side)
