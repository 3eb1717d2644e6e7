"""Playing strength 1 to 5 (`SuggestActionRequest.level`): what each level leaves out.

Level 5 is the AI at full strength, with a trace of noise (0.05 material units) that
varies its choice among near-equal actions by the seed: two games against it from one start
are not one game, and a hint (another seed) is not the bot's own move. The lower levels
play worse in three ways, each of them deterministic for a given seed and position, so a
bot's game can be replayed:

- **blunders**: a share of their actions is a random legal action of their side;
- **sight**: the search is capped in depth and uses only part of the time budget (the
  Napoleonic planner: that share of its work limits, for kills and candidate plans);
- **judgement**: Gaussian noise (in the game's units of material: a Troop of War, an
  Infantry of the Line of Battle, an Infantry unit of Napoleonic Chess is 1) is added to
  the value of each candidate, so a close alternative, or at level 1 a clearly worse
  one, is picked instead of the best.

The Napoleonic planner plans whole turns without a depth: it takes the blunders, and the
noise spoils its choice among candidate plans and of the squares its units move to.
`tests/engine_service/ai/test_levels.py` (slow) shows each level beating the one below.

A game may play a level differently (`GAME_LEVELS`) where the same share of random actions
weighs less in it, or where a step between two levels came out too narrow for its goal
(each level beats the one below in at least 65 % of games, `make ladder`): at the ladder's
budget of 0.02 CPU s, a pair of 40 games moves by several points from run to run, so a step
must be measured over a hundred games or more, and kept near 75 % or wider, for the slow
suite's sample of it to stay above 65 %.

Napoleonic Chess's level 1 takes half its actions at random, where the other games' takes
40 %: a turn there is many actions (a move per unit, each attack, each support), and after
a random one the planner plans the rest of the phase again, so at 40 % its level 1 still
played most of each turn's plan. It scored 98 % against the random mover and as little as
65 % against level 2: it played nearly as level 2 does, not loosely as the easiest level
should. Its level 4 errs less (3.5 % of its actions, noise 0.45) and its level 2 more
(25 %, noise 2.5): with the shared levels, 4-3 scored 70 % and 76 % (30 and 40 games) and
3-2 71 % (120); now 5-4 scored 82 %, 4-3 83 %, 3-2 80 % and 2-1 81 % (120 games each; at 3 %
and 0.4, 5-4 scored 68 % and 74 %).

The Game of Battle's levels play tighter than the other games': at the ladder's budget
every level sees about one ply of Battle's hundred actions, and the side that moves first,
the attacker, wins most games between near equals, so the levels differ by their blunders
and their noise alone. With the shared table Battle's level 2 scored 54 % to 75 % against
level 1 (six runs of 40 games), while its upper pairs scored 82 % to 91 %: level 2 takes a
tenth of its actions at random with noise 1.5, level 3 9 % with 0.9, level 4 5 % with 0.5
(at 3.5 % and 0.4, 5-4 scored 69 % to 72 %). In 120 games a pair, 5-4 then scored 77 %, 4-3
83 %, 3-2 86 % and 2-1 93 %. Battle's level 1 judges with noise 2 where the others' has 3:
at 3 a third of its games against the random mover ended drawn by the fifty-moves rule, its
noise outweighing every capture on offer, and it scored 79 % to 87 % (60 games; 80 % is the
level's floor); at 2, 88 % to 91 %. How far a search at such a budget gets depends on the
machine, so a pair's score moves from run to run; the blunders, drawn by the seed, do not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

STRONGEST: Final = 5


@dataclass(frozen=True)
class Level:
    """How a level plays: see the module docstring."""

    blunders: float  # share of actions that are a random legal action
    max_depth: int  # search depth cap (0: none)
    time_share: float  # share of the time budget (and of the planner's work) used
    noise: float  # standard deviation of the noise on candidate values


LEVELS: Final = {
    1: Level(blunders=0.4, max_depth=1, time_share=0.2, noise=3.0),
    2: Level(blunders=0.2, max_depth=1, time_share=0.35, noise=2.0),
    3: Level(blunders=0.1, max_depth=2, time_share=0.5, noise=1.0),
    4: Level(blunders=0.04, max_depth=3, time_share=0.75, noise=0.5),
    # A trace of noise: a seeded choice among near-equal actions, so that two games
    # against the strongest level from one start are not one game.
    STRONGEST: Level(blunders=0.0, max_depth=0, time_share=1.0, noise=0.05),
}


# Per game (a ruleset's id), the levels it plays differently from LEVELS: see the module
# docstring.
GAME_LEVELS: Final[dict[str, dict[int, Level]]] = {
    "battle": {
        1: replace(LEVELS[1], noise=2.0),
        2: replace(LEVELS[2], blunders=0.1, noise=1.5),
        3: replace(LEVELS[3], blunders=0.09, noise=0.9),
        4: replace(LEVELS[4], blunders=0.05, noise=0.5),
    },
    "napoleonic": {
        1: replace(LEVELS[1], blunders=0.5),
        2: replace(LEVELS[2], blunders=0.25, noise=2.5),
        4: replace(LEVELS[4], blunders=0.035, noise=0.45),
    },
}


def level(number: int, game: str = "") -> Level:
    """The level numbered `number` (0 means the strongest) as `game` plays it (a ruleset's
    id; default: as every game does); ValueError beyond 1-5."""
    number = number or STRONGEST
    found = GAME_LEVELS.get(game, {}).get(number) or LEVELS.get(number)
    if found is None:
        raise ValueError(f"level {number} is not one of 1-{STRONGEST}")
    return found
