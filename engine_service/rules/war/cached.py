"""Per-position caches of the legal actions and the outcome.

A request usually asks several questions about one position (is it over, what is legal,
is this action legal, what does this text mean), so the answers are kept for the last few
hundred positions. States are immutable and hashable, which makes them safe keys.
"""

from __future__ import annotations

from engine_service.memo import memo
from engine_service.rules.base import Outcome
from engine_service.rules.war.actions import Action
from engine_service.rules.war.endings import outcome
from engine_service.rules.war.legal import legal_actions
from engine_service.rules.war.state import WarState


@memo(512)
def legal(state: WarState) -> tuple[tuple[Action, ...], frozenset[Action]]:
    """The legal actions of a position, as a tuple (in order) and as a set."""
    actions = tuple(legal_actions(state))
    return actions, frozenset(actions)


@memo(512)
def ended(state: WarState) -> Outcome | None:
    """The outcome of a position."""
    return outcome(state)


def clear_caches() -> None:
    """Forget the cached legal actions and outcomes (for benchmarks of uncached work)."""
    legal.cache_clear()
    ended.cache_clear()
