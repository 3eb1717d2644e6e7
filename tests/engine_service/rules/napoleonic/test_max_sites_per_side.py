"""The option max_sites_per_side (10.4): how many redoubt sites a side may have under
construction at once, `unlimited` or a positive integer."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.napoleonic.helpers import RULESET


@pytest.mark.parametrize(("given", "read"), [("unlimited", "unlimited"), ("2", "2"), (" 3 ", "3")])
def test_max_sites_per_side_is_unlimited_or_a_positive_integer(given: str, read: str) -> None:
    assert RULESET.resolve_options({"max_sites_per_side": given})["max_sites_per_side"] == read


@pytest.mark.parametrize("given", ["abc", "0", "-1", "Unlimited", "²"])
def test_max_sites_per_side_refuses_anything_else(given: str) -> None:
    with pytest.raises(RuleError) as error:
        RULESET.resolve_options({"max_sites_per_side": given})
    assert error.value.reason == Reason.INVALID_OPTION_VALUE
    assert error.value.field == "options.max_sites_per_side"
    assert error.value.message == (
        f"option max_sites_per_side: '{given}' is neither unlimited nor a positive integer; "
        "allowed: unlimited or a positive integer"
    )
