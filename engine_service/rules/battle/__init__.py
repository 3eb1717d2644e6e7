"""War-Chess, or the Game of Battle (Col. Charles Richardson, 1866).

Modules follow the specification `game_of_battle.md`: `board` (1-2: diamonds, river,
fords, bridge), `pieces` and `setup` (3), `movement` (5), `artillery` (6: range,
protection, exposure), `legal` (10: the per-move tests and the forced reply, the Citadel
duty and the Wagon's cover), `play` (making a move), `endings` (9: winning and drawing),
`notation` and `explain` (text in and out), `options` (15), `ruleset` (the shared
interface).
"""

from __future__ import annotations

from engine_service.rules.battle.movement import Move
from engine_service.rules.battle.ruleset import BattleRuleset
from engine_service.rules.battle.state import BattleState

__all__ = ["BattleRuleset", "BattleState", "Move"]
