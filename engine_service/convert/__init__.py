"""Proto <-> core conversion: the shared part in `base`, one converter module per game."""

from __future__ import annotations

from collections.abc import Mapping

from engine_service.convert.base import Conversions
from engine_service.rules.base import AnyRuleset


def conversions(rulesets: Mapping[str, AnyRuleset]) -> Conversions:
    """The conversions of every registered game."""
    from engine_service.convert.battle import BattleConverter
    from engine_service.convert.napoleonic import NapoleonicConverter
    from engine_service.convert.war import WarConverter

    kinds = {cls.game: cls for cls in (WarConverter, BattleConverter, NapoleonicConverter)}
    return Conversions({game_id: kinds[game_id](ruleset) for game_id, ruleset in rulesets.items()})
