"""The Game of War (Hudson Maxim, 1910): rules core behind the shared `Ruleset` interface.

Specification: `shared/rules/game_of_war.md`. Where things are, by role (the same module
names in every game package):

- `ruleset.py`      the interface: `WarRuleset`, dispatching to the modules below
- `options.py`      the rulings of section 16 as options, and `WarRules`, their tables
- `pieces.py`       the armies (1): sides, piece kinds, one-byte cell codes
- `board.py`        the 10 x 10 board (2): steps, rays and leaps per cell
- `state.py`        the immutable position, its Zobrist key, and `Turn`
- `actions.py`      actions as small tuples of cells
- `setup.py`        setup strings (3.2 and the documented extensions), the default set-up
- `start.py`        the start of a game: the initial state, a state's setup string
- `position.py`     the position text: the setup string grown to write every field of a state
- `legal.py`        legal actions (11), remembered per position: the reference
- `check.py`        whether one action is legal, by its own rule path (`apply`'s check)
- `explain.py`      why an action or a text is refused, naming the rule
- `play.py`         making a legal action (the unchecked fast path of perft and search), perft
- `events.py`       what happened, in sentences
- `endings.py`      the Citadel held (9) and the other endings (10)
- `notation.py`     notation (2): printing and reading actions
- `consistency.py`  `check_state`: every way a position could not arise in play
- `describe.py`     the board, pieces and summary for drawing

The game's own rules, by section: `men.py` (6), `troops.py` (7), `compulsion.py` (7.1:
the legality rule and the huff), `flying_machines.py` (8).
"""

from engine_service.rules.base import GameEntry
from engine_service.rules.war.actions import HUFF, PASS, PLACE, Action
from engine_service.rules.war.ruleset import WarRuleset
from engine_service.rules.war.state import WarState

GAME = GameEntry(
    ruleset=WarRuleset,
    converter="engine_service.convert.war:WarConverter",
    ai="engine_service.ai.war:strategy",
)

__all__ = ["GAME", "HUFF", "PASS", "PLACE", "Action", "WarRuleset", "WarState"]
