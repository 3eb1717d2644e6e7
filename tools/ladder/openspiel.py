"""OpenSpiel's own MCTS bot as a ladder player: the issue's outside yardstick itself.

OpenSpiel (`pip install .[ladder]`, open_spiel) is an optional extra of the ladder, never a
dependency of the engine: `pyspiel` is imported only when the "openspiel" player plays, and
`OpenSpielMissing` says how to install it when it is not there.

Where things are:

- `game_of` registers and returns a pyspiel game over one of the rules' games ("war",
  "battle"), written here against the public `Ruleset` interface; `state_at` wraps a
  ruleset state as that game's state;
- `openspiel_action` is the player: `open_spiel.python.algorithms.mcts.MCTSBot` with a
  `RandomRolloutEvaluator` (uct_c `UCT_C`, one rollout a leaf, a seeded numpy RandomState),
  given a budget of CPU seconds per move (see "Time" below).

The adapter's game: two players (the ruleset's sides in order), sequential, deterministic,
perfect information, zero-sum, rewards only at the end (1 a win, -1 a loss, 0 a draw). An
action is an index into the position's own list of legal actions (the ruleset's list, in its
order, kept to those of the side to act), so `num_distinct_actions` is a bound on that
list's length (`MAX_ACTIONS`, checked on every list). A wrapped state counts as a drawn end
(terminal, returns 0) `PLY_CAP` plies after the position it was started from, or when the
side to act has no action of its own, so that the bot's random rollouts end, as
`mcts.py`'s ROLLOUT_PLIES does for our own UCT (the search has no evaluation to judge an
unfinished position by). The rules' states are immutable (`play` returns a new one), so a
clone shares its `Position`.

Time: MCTSBot has a number of simulations, not a time limit. The player calibrates: a search
of `CALIBRATION` simulations measures the thread's CPU time per simulation in this
position, then a search sized to the rest of the budget plays the move. The CPU time used,
calibration included, is returned with the action so the ladder can report it against the
budget (the mean ratio backs "ten times a level's time").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from engine_service.rules.base import AnyRuleset, Outcome

UCT_C = 2.0  # OpenSpiel's default exploration constant, for returns from -1 to 1
CALIBRATION = 8  # simulations of the search that measures a simulation's CPU time
PLY_CAP = 400  # plies from the wrapped position after which a state is a drawn end
MAX_ACTIONS = 4096  # a bound on a position's legal actions in War and Battle (checked)
GAMES = ("war", "battle")


class OpenSpielMissing(SystemExit):
    """The "openspiel" player was asked for and OpenSpiel is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "ladder: the openspiel player needs OpenSpiel: "
            '.venv/bin/pip install ".[ladder]" -c constraints.txt (open_spiel)'
        )


def pyspiel_module() -> Any:
    """The `pyspiel` module, or OpenSpielMissing."""
    try:
        import pyspiel
    except ImportError as error:
        raise OpenSpielMissing() from error
    return pyspiel


_GAMES: dict[str, Any] = {}


def game_of(name: str, ruleset: AnyRuleset) -> Any:
    """The pyspiel game over `ruleset` (registered as "wargame_<name>" once a process)."""
    if name in _GAMES:
        return _GAMES[name]
    pyspiel = pyspiel_module()
    sides = [side.id for side in ruleset.sides]
    game_type = pyspiel.GameType(
        short_name=f"wargame_{name}",
        long_name=f"wargame {name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={},
    )
    game_info = pyspiel.GameInfo(
        num_distinct_actions=MAX_ACTIONS,
        max_chance_outcomes=0,
        num_players=2,
        min_utility=-1.0,
        max_utility=1.0,
        utility_sum=0.0,
        max_game_length=PLY_CAP,
    )

    class State(pyspiel.State):  # type: ignore[misc,name-defined]
        """A `Position` of the rules' game (one attribute, shared by clones)."""

        def __init__(self, game: Any, position: Position) -> None:
            super().__init__(game)
            self.position = position

        def current_player(self) -> int:
            if self.is_terminal():
                return int(pyspiel.PlayerId.TERMINAL)
            return sides.index(ruleset.to_act(self.position.state)[0])

        def _legal_actions(self, player: int) -> list[int]:
            return list(range(len(self.position.actions)))

        def _apply_action(self, action: int) -> None:
            now = self.position
            self.position = position_of(
                ruleset, ruleset.play(now.state, now.actions[action]), now.plies + 1
            )

        def _action_to_string(self, player: int, action: int) -> str:
            return ruleset.format_action(self.position.state, self.position.actions[action])

        def is_terminal(self) -> bool:
            return not self.position.actions

        def returns(self) -> list[float]:
            outcome = self.position.outcome
            if outcome is None or outcome.winner is None:
                return [0.0, 0.0]
            return [1.0 if side in outcome.winning_sides else -1.0 for side in sides]

        def __str__(self) -> str:
            return ruleset.setup_text(self.position.state)

    class Game(pyspiel.Game):  # type: ignore[misc,name-defined]
        """The rules' game from its default start, under its default options."""

        def __init__(self, params: Any = None) -> None:
            super().__init__(game_type, game_info, params or {})
            # pyspiel clones a state by making an initial state and copying its attributes
            # into it: the initial position is worked out once.
            start = ruleset.new_game(ruleset.resolve_options({}))
            self.start = position_of(ruleset, start, 0)

        def new_initial_state(self) -> State:
            return State(self, self.start)

        def wrap(self, state: Any) -> State:
            return State(self, position_of(ruleset, state, 0))

    pyspiel.register_game(game_type, Game)
    _GAMES[name] = Game()
    return _GAMES[name]


def state_at(game: Any, state: Any) -> Any:
    """`state` (a ruleset state) as a state of `game` (`game_of`), its plies counted from 0."""
    return game.wrap(state)


@dataclass(frozen=True, slots=True)
class Position:
    """A ruleset state, the plies played since the wrapped one, the legal actions of the side
    to act (none at a drawn or decided end) and the outcome. Immutable, as the rules' states
    are: a deep copy (pyspiel's `clone` deep-copies a state's attributes) is the same object."""

    state: Any
    plies: int
    actions: tuple[Any, ...]
    outcome: Outcome | None

    def __deepcopy__(self, memo: dict[int, Any]) -> Position:
        return self


def position_of(ruleset: AnyRuleset, state: Any, plies: int) -> Position:
    """`state`, `plies` after the wrapped position, as a `Position`."""
    outcome = ruleset.outcome(state)
    if outcome is not None or plies >= PLY_CAP:
        return Position(state, plies, (), outcome)
    side = ruleset.to_act(state)[0]
    actions = tuple(a for a in ruleset.legal_actions(state) if ruleset.actor(state, a) == side)
    if len(actions) > MAX_ACTIONS:
        raise ValueError(f"{len(actions)} legal actions, above MAX_ACTIONS {MAX_ACTIONS}")
    return Position(state, plies, actions, outcome)


@dataclass(frozen=True)
class Move:
    """The bot's action (the ruleset's), and the CPU seconds it used (0 when forced)."""

    action: Any
    cpu: float


def openspiel_action(
    name: str, ruleset: AnyRuleset, state: Any, seconds: float, seed: int, *, simulations: int = 0
) -> Move:
    """OpenSpiel's MCTSBot's action after about `seconds` of the thread's CPU time, or after
    `simulations` of them (not 0: no calibration, the same action for the same seed)."""
    game = game_of(name, ruleset)
    root = state_at(game, state)
    actions = root.position.actions
    if len(actions) == 1:
        return Move(actions[0], 0.0)
    import numpy as np
    from open_spiel.python.algorithms import mcts

    start = time.thread_time()
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    if not simulations:
        probe = mcts.MCTSBot(
            game, UCT_C, CALIBRATION, evaluator, random_state=np.random.RandomState(seed)
        )
        probe.mcts_search(root)
        used = time.thread_time() - start
        # At least two: the first simulation only evaluates the root.
        simulations = max(2, int((seconds - used) / (used / CALIBRATION)))
    bot = mcts.MCTSBot(
        game, UCT_C, simulations, evaluator, random_state=np.random.RandomState(seed)
    )
    index = bot.step(root)
    return Move(actions[index], time.thread_time() - start)
