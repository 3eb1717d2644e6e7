"""Napoleonic Chess (Peter J Carroll, 2016): the rules core.

Specification: `shared/rules/napoleonic_chess.md`. Where things are, by role (the same
module names in every game package):

- `ruleset.py`      the interface: `NapoleonicRuleset`, dispatching to the modules below
- `options.py`      the rulings (12) as options (14), and `Rules`, their typed values
- `pieces.py`       the unit types (3) from `units.json`, as a game's options make them
- `board.py`        boards of any size (2, 10.5): steps, two-step routes, deployment rows
- `state.py`        the immutable state: units, terrain, phase, the turn's scratch; its key
- `actions.py`      the small actions of a turn, each naming its player
- `setup.py`        arrays (5, 10.1) and the set-up text that writes any position
- `start.py`        the start of a game: a scenario's board, terrain and armies, deployed
- `position.py`     the position text: the set-up text with the sections of a game in progress
- `legal.py`        the listable legal actions of the phase the state is in
- `phases.py`       the turn protocol (6): who may act, what they may send, `EndPhase`
- `events.py`       what happened, in sentences: the events of every rule module, made alike
- `endings.py`      victory and the optional draw rules (8)
- `notation.py`     actions as text, printed and read back
- `consistency.py`  `check_state`: every way a state could not arise in play
- `describe.py`     the board, terrain, unit types and summary for drawing

The game's own rules, by section: `movement.py` (4), `combat.py` (7: attacks, supports,
resolution, advance), `deployment.py` (10.1, 10.2), `terrain.py` (10.4), with
`scenarios.py` (the scenarios, data in `scenarios.json`) and `words.py` (names in
sentences). Refusals and events are made where the rule is: each section's `check_*`
raises the rule's `RuleError`, its `apply_*` says what happened.
"""

from engine_service.rules.base import GameEntry
from engine_service.rules.napoleonic.ruleset import NapoleonicRuleset

GAME = GameEntry(
    ruleset=NapoleonicRuleset,
    converter="engine_service.convert.napoleonic:NapoleonicConverter",
    ai="engine_service.ai.napoleonic:strategy",
)

__all__ = ["GAME", "NapoleonicRuleset"]
