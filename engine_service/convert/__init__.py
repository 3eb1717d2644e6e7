"""Proto <-> core conversion: the shared part in `base`, one converter module per game.

Each game names its converter in its registry entry (`engine_service.rules.games`).
Where things are:

- `base.py`        whole states and actions of every game (`Conversions`), the common
                   view, and `GameConverter`, the part each game writes
- `war.py`, `battle.py`, `napoleonic.py`  each game's state detail and actions
- `describe.py`    what every game describes the same way: game info, boards, events
- `tags.py`        integrity tags on the position texts the engine writes
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine_service.convert.base import Conversions, GameConverter
from engine_service.convert.tags import PositionTags, tag_key
from engine_service.rules import game_entry, load
from engine_service.rules.base import AnyRuleset


def conversions(rulesets: Mapping[str, AnyRuleset], key: bytes | None = None) -> Conversions:
    """The conversions of these rulesets, each by its game's registered converter; `key`
    tags the position texts they write (`tags.tag_key`; None: this process's own key)."""
    converters: dict[str, GameConverter[Any, Any]] = {}
    for game_id, ruleset in rulesets.items():
        converters[game_id] = load(game_entry(game_id).converter)(ruleset)
    return Conversions(converters, PositionTags(key or tag_key(None)))
