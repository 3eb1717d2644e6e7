"""The Game of War (Hudson Maxim, 1910): rules core behind the shared `Ruleset` interface.

Specification: `shared/rules/game_of_war.md`. Modules follow its sections:

- `pieces` (1): sides, piece kinds, one-byte cell codes; `board`: the 10 x 10 board and
  its step, ray and leap tables (from the shared `CellGraph`);
- `setup` (3): setup strings (section 3.2 and the documented extensions) and the default
  position derived from the options; `positions`: states from setups and back;
- `men` (6), `troops` (7), `compulsion` (7.1, the legality rule and the huff),
  `flying_machines` (8), `endings` (9, 10), `legal` (11), `options` (16);
- `actions` (the action tuples), `state` (the immutable position and Zobrist keys), `rules`
  (options turned into tables), `play` (the unchecked fast path), `explain` (why an
  action is illegal), `events`, `notation` and `reading` (2), `consistency` (check_state),
  `cached`, `describe`, and `ruleset` (the interface).
"""

from engine_service.rules.war.actions import HUFF, PASS, PLACE, Action
from engine_service.rules.war.ruleset import WarRuleset
from engine_service.rules.war.state import WarState

__all__ = ["HUFF", "PASS", "PLACE", "Action", "WarRuleset", "WarState"]
