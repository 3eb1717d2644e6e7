"""The rules of the three games: pure Python, no I/O, one `Ruleset` interface.

`rulesets()` is the registry (python-chess's plain variant list, looked up by id); each
game lives in its own package and adds only what is its own to the shared layer
(`base`, `board`, `options`, `game`, `record`).
"""

from __future__ import annotations

from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset
from engine_service.rules.errors import Reason, RuleError


@memo(8)
def rulesets(seal_key: bytes | None = None) -> dict[str, AnyRuleset]:
    """Every game by id, in display order; `seal_key` is the engine's key for sealed deployment."""
    from engine_service.rules.battle import BattleRuleset
    from engine_service.rules.napoleonic import NapoleonicRuleset
    from engine_service.rules.war import WarRuleset

    games: list[AnyRuleset] = [WarRuleset(), BattleRuleset(), NapoleonicRuleset(seal_key=seal_key)]
    return {game.id: game for game in games}


def find_ruleset(game_id: str, seal_key: bytes | None = None) -> AnyRuleset:
    """The ruleset with this id, or UNKNOWN_GAME listing the ids there are."""
    games = rulesets(seal_key)
    try:
        return games[game_id]
    except KeyError:
        raise RuleError(
            Reason.UNKNOWN_GAME,
            f"unknown game {game_id!r}; games: {', '.join(games)}",
            field="game",
        ) from None
