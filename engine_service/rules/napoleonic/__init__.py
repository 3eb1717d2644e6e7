"""Napoleonic Chess (Peter J Carroll, 2016): the rules core.

The specification is `napoleonic_chess.md` of the shared rules folder.

Modules follow the rules document: `pieces` (3), `movement` (4), `setup` and `deployment`
(5, 10.1, 10.2), `phases` (6), `combat` (7), `endings` (8), `terrain` (10.4), `options`
(14), `scenarios` (scenarios as data), `notation`, `consistency`, `ruleset`.
"""

from engine_service.rules.napoleonic.ruleset import NapoleonicRuleset

__all__ = ["NapoleonicRuleset"]
