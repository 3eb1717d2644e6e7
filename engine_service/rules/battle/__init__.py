"""War-Chess, or the Game of Battle (Col. Charles Richardson, 1866).

Specification: `shared/rules/game_of_battle.md`. Where things are, by role (the same module
names in every game package):

- `ruleset.py`      the interface: `BattleRuleset`, dispatching to the modules below
- `options.py`      the rulings of section 14 as options (15), and `Rules`, their values
- `pieces.py`       the two armies (3): kinds, sides, one-byte piece codes
- `board.py`        the 139-square diamond board (1, 2): river, fords, bridge, rays, read
                    from `board.json` (a copy of the specification's board)
- `state.py`        the immutable position and its Zobrist key
- `actions.py`      a `Move` from one square to another, interned
- `setup.py`        the set-up text that writes any position
- `position.py`     the repetition history in the position text (docs/positions.md)
- `start.py`        the start of a game: Plate 1's position, or a set-up text's
- `legal.py`        the legal-move procedure (10): artillery tests per move, then the duties
- `explain.py`      why a move is refused, naming the rule
- `play.py`         making a legal move (the unchecked fast path of perft and search)
- `events.py`       what happened, in sentences
- `endings.py`      the end of the game (9; rulings 18-20)
- `notation.py`     the book's square numbers: `36-51`, `36x51`, short forms
- `consistency.py`  `check_state`: every way a position could not arise in play
- `describe.py`     the board, pieces and summary for drawing

The game's own rules, by section: `movement.py` (5: who moves how, who takes what),
`artillery.py` (6: range, protection, exposure).
"""

from __future__ import annotations

from engine_service.rules.base import GameEntry
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.ruleset import BattleRuleset
from engine_service.rules.battle.state import BattleState

GAME = GameEntry(
    ruleset=BattleRuleset,
    converter="engine_service.convert.battle:BattleConverter",
    ai="engine_service.ai.battle:strategy",
)

__all__ = ["GAME", "BattleRuleset", "BattleState", "Move"]
