"""The engine's limits at their edges (`engine_service/service.py`): a Duration's own range
and precision, a time budget at its limit, when the pool stops a search and when the search
stops itself before that, an answer's byte budget and a request's count of actions at
their limits.

The refusals' codes, reasons and fields through the service are in `test_service_reasons.py`
and `test_response_budget.py`; here each edge is met from both sides.
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import duration_pb2

from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.service import (
    SEARCH_OVERRUN,
    RulesEngine,
    _ResponseBudget,
    _search_budget,
    _seconds,
    search_limit,
    search_wall_cap,
)
from tests.conftest import TEST_SEAL_KEY
from wargame.runtime.refusal import Refusal
from wargame.v1 import engine_pb2

# google.protobuf.Duration's range: ten thousand years of seconds, nanos within a second.
MAX_SECONDS = 315_576_000_000
MAX_NANOS = 999_999_999


@pytest.mark.parametrize(
    ("seconds", "nanos", "value"),
    [
        (MAX_SECONDS, 0, 315_576_000_000.0),
        (-MAX_SECONDS, 0, -315_576_000_000.0),
        (0, MAX_NANOS, 0.999999999),
        (0, -MAX_NANOS, -0.999999999),
        (1, 500_000_000, 1.5),
        (-2, -250_000_000, -2.25),
    ],
)
def test_a_duration_within_its_range_is_read_to_the_nanosecond(
    seconds: int, nanos: int, value: float
) -> None:
    assert _seconds(duration_pb2.Duration(seconds=seconds, nanos=nanos), "budget") == value


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [(MAX_SECONDS + 1, 0), (-MAX_SECONDS - 1, 0), (0, MAX_NANOS + 1), (0, -MAX_NANOS - 1)],
)
def test_a_duration_past_its_range_is_refused_naming_the_field(seconds: int, nanos: int) -> None:
    with pytest.raises(Refusal) as refused:
        _seconds(duration_pb2.Duration(seconds=seconds, nanos=nanos), "budget")
    assert (refused.value.reason, refused.value.message) == (
        "MALFORMED_REQUEST",
        "budget is no valid duration",
    )


def test_a_time_budget_at_the_limit_is_kept_and_a_nanosecond_more_refused() -> None:
    def budget(seconds: int, nanos: int = 0) -> float:
        request = engine_pb2.SuggestActionRequest(
            time_budget=duration_pb2.Duration(seconds=seconds, nanos=nanos)
        )
        return _search_budget(request, 1.0, 30.0)

    assert budget(30) == 30.0
    with pytest.raises(Refusal) as refused:
        budget(30, 1)
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "DEADLINE_TOO_LONG",
    )
    assert _search_budget(engine_pb2.SuggestActionRequest(), 1.0, 30.0) == 1.0  # the default


@pytest.mark.parametrize("seconds", [0.05, 1.0, 30.0])
def test_a_search_caps_itself_a_second_before_the_pool_stops_it(seconds: float) -> None:
    # The pool stops a search once it overruns by half its budget and the time a search
    # takes to stop; the search's own wall cap comes a second sooner, so that it answers.
    assert search_limit(seconds) == pytest.approx(seconds * 1.5 + SEARCH_OVERRUN)
    assert search_limit(seconds) - search_wall_cap(seconds) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("include_states", "actions", "advice", "field"),
    [
        # With the states an answer of 3 actions is estimated at 2 + 3 states, without
        # them at 2 states whatever its actions.
        (True, 3, "ask without include_states, or for a shorter record", "include_states"),
        (False, 1000, "ask for a shorter record", "record"),
    ],
)
def test_an_answer_may_fill_its_byte_budget_to_the_last_byte(
    include_states: bool, actions: int, advice: str, field: str
) -> None:
    states = 2 + (actions if include_states else 0)
    limit = states * 20
    budget = _ResponseBudget(limit, include_states)
    budget.expect(actions, 20)  # estimated at the limit: it fits
    budget.spend(limit - 40)  # with the first and last states' 40 bytes: the limit
    with pytest.raises(Refusal) as refused:
        budget.spend(1)
    assert refused.value.message == (
        f"the replay would answer with more than {limit} bytes; at most {limit} fit in one "
        f"message: {advice}"
    )
    assert [name for name, _why in refused.value.fields] == [field]
    with pytest.raises(Refusal) as estimated:
        _ResponseBudget(limit - 1, include_states).expect(actions, 20)
    assert estimated.value.message.startswith(f"the replay would answer with about {limit} bytes;")


def test_a_request_of_as_many_actions_as_the_limit_is_kept_and_one_more_refused() -> None:
    engine = RulesEngine(rulesets(TEST_SEAL_KEY), Limits(max_actions=3))
    engine._check_action_count(3, "actions")
    with pytest.raises(Refusal) as refused:
        engine._check_action_count(4, "actions")
    assert (refused.value.code, refused.value.reason, refused.value.message) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_ACTIONS",
        "4 actions in one request; at most 3",
    )
