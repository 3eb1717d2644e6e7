"""Sessions: a time control read from the contract's message, and the clock a new game
is stored with (standing while the game is open, running for the side to act once every
seat is taken)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from matchmaker.sessions import TimeControl
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import seconds
from wargame.runtime.refusal import Reason, Refusal
from wargame.v1 import matchmaker_pb2 as mm


def test_a_time_control_keeps_its_base_and_increment() -> None:
    message = mm.TimeControl(base=seconds(300), increment=seconds(2.5))
    assert TimeControl.of(message) == TimeControl(300_000, 2_500)
    assert TimeControl.of(mm.TimeControl(base=seconds(60))) == TimeControl(60_000, 0)


def test_a_time_control_with_a_zero_base_is_refused() -> None:
    # An increment with no base would be a clock that starts flagged: refused, naming the field.
    with pytest.raises(Refusal) as refused:
        TimeControl.of(mm.TimeControl(base=seconds(0), increment=seconds(5)), "queue.time_control")
    assert refused.value.reason == Reason.MALFORMED_REQUEST
    assert [name for name, _ in refused.value.fields] == ["queue.time_control.base"]


@pytest.mark.integration
def test_an_open_game_is_stored_with_its_clocks_standing_until_it_starts(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    """The stored clock is what every replica reads: while the game waits for its second
    player no side's time runs; once it starts, the side to act's does."""
    south, north = (clients(matchmaker.address, name) for name in ("South", "North"))
    created = south.CreateGame(
        mm.CreateGameRequest(
            game="war", side="south", time_control=mm.TimeControl(base=seconds(60))
        )
    ).game
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.remaining == {"south": 60_000, "north": 60_000}
    assert record.clock.running == ()
    north.JoinGame(mm.JoinGameRequest(game_id=created.id))
    record, _ = matchmaker.call(lambda replica: replica.store.get(created.id))
    assert record.clock is not None and record.clock.running == ("south",)
