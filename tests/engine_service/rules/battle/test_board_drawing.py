"""The board as a client draws it (DescribeGame): the river's cells as diamonds, and the
closed sides of the fords and the bridge (2.4) where the river runs through them.
"""

from __future__ import annotations

from engine_service.rules.base import Feature
from engine_service.rules.battle import describe
from tests.engine_service.rules.battle.helpers import RULES

# The river cells of 2.3, (6,7), (7,8), (9,10) and (10,11), as diamonds: top, right, bottom, left.
RIVER_DIAMONDS = [
    ((6, 8), (7, 7), (6, 6), (5, 7)),
    ((7, 9), (8, 8), (7, 7), (6, 8)),
    ((9, 11), (10, 10), (9, 9), (8, 10)),
    ((10, 12), (11, 11), (10, 10), (9, 11)),
]
# 2.4: the fords are closed at their east and west corners (one point each), the bridge 70
# (at (8,9)) on its north-east and south-west sides (the side's two corners).
CLOSED_SIDES = [
    Feature("closed_side", ((4, 6),), ("47",), "ford 47: E closed"),
    Feature("closed_side", ((2, 6),), ("47",), "ford 47: W closed"),
    Feature("closed_side", ((9, 9), (8, 10)), ("70",), "bridge 70: NE closed"),
    Feature("closed_side", ((7, 9), (8, 8)), ("70",), "bridge 70: SW closed"),
    Feature("closed_side", ((14, 12),), ("83",), "ford 83: E closed"),
    Feature("closed_side", ((12, 12),), ("83",), "ford 83: W closed"),
]


def test_2_3_river_cells_are_drawn_as_diamonds() -> None:
    features = RULES.describe(RULES.resolve_options({})).features
    river = [f.points for f in features if f.kind == "river_cell"]
    assert river == RIVER_DIAMONDS
    # the drawing is memoised: the function that draws one diamond, called afresh
    assert [describe._corners(cell) for cell in ((6, 7), (7, 8), (9, 10), (10, 11))] == river


def test_2_4_closed_sides_of_the_crossings() -> None:
    features = RULES.describe(RULES.resolve_options({})).features
    assert [f for f in features if f.kind == "closed_side"] == CLOSED_SIDES
    assert list(describe._closed_sides()) == CLOSED_SIDES
