"""The rules of the three games: pure Python, no I/O, one `Ruleset` interface.

`games()` is the registry (python-chess's plain variant list, looked up by id): one
`GameEntry` per game, declared in the game's own package as `GAME` and collected here, in
display order. Every layer reads it: the rulesets (`rulesets`), the converters
(`engine_service.convert`), the AI (`engine_service.ai`) and the conformance suite. Each
game lives in its own package and adds only what is its own to the shared layer
(docs/adding-a-game.md walks a new game through every layer). Where things are:

- `base.py`        the `Ruleset` interface, the values it speaks, and `GameEntry`
- `board.py`       boards as data: cells, drawing positions, one-step links by direction
- `options.py`     engine options: every ruling one, with its documented default
- `draws.py`       the two draw rules every game has: repetition, no progress
- `game.py`        a game in progress: resignation and draws by agreement around any game
- `position.py`    position texts: the grammar the three games' texts share, put together
- `record.py`      game records: options, set-up and actions that replay to the same state
- `errors.py`      `RuleError`, the rules' refusal, with its `Reason` (`wargame/reasons.py`)
- `war/`, `battle/`, `napoleonic/`  one package per game (each with its own map)
"""

from __future__ import annotations

import importlib
from typing import Any

from engine_service.memo import memo
from engine_service.rules.base import AnyRuleset, GameEntry
from engine_service.rules.errors import Reason, RuleError
from wargame.runtime.quoting import quoted


@memo(1)
def games() -> tuple[GameEntry, ...]:
    """Every game, in display order."""
    from engine_service.rules import battle, napoleonic, war

    return (war.GAME, battle.GAME, napoleonic.GAME)


@memo(8)
def rulesets(seal_key: bytes | None = None) -> dict[str, AnyRuleset]:
    """Every game's ruleset by id, in display order; `seal_key` is the engine's key for
    sealed deployment."""
    made = (entry.ruleset(seal_key) for entry in games())
    return {ruleset.id: ruleset for ruleset in made}


def game_entry(game_id: str) -> GameEntry:
    """The registered game with this id, or UNKNOWN_GAME listing the ids there are."""
    for entry in games():
        if entry.id == game_id:
            return entry
    raise _unknown(game_id)


def find_ruleset(game_id: str, seal_key: bytes | None = None) -> AnyRuleset:
    """The ruleset with this id, or UNKNOWN_GAME listing the ids there are."""
    try:
        return rulesets(seal_key)[game_id]
    except KeyError:
        raise _unknown(game_id) from None


def load(reference: str) -> Any:
    """The object a "module:attribute" reference of a `GameEntry` names, imported now."""
    module, _sep, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def _unknown(game_id: str) -> RuleError:
    ids = ", ".join(rulesets())
    return RuleError(
        Reason.UNKNOWN_GAME, f"unknown game {quoted(game_id)}; games: {ids}", field="game"
    )
