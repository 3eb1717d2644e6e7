"""When the sweeper next looks at a game (`matchmaker/schedule.py`)."""

from __future__ import annotations

from matchmaker.record import GameRecord, GameStatus, RatingStatus, Seat, Visibility
from matchmaker.schedule import next_due
from matchmaker.settings import Settings
from wargame.v1 import game_pb2

NOW = 1_000_000


def humans_only(state: game_pb2.GameState) -> GameRecord:
    """A running untimed game of two people, both present and unwarned."""
    return GameRecord(
        id="g1",
        ruleset="war",
        status=GameStatus.RUNNING,
        version=3,
        visibility=Visibility.PUBLIC,
        rated=False,
        created_ms=1,
        updated_ms=2,
        acted_ms=2,
        seats=[Seat("south", "ps", "South"), Seat("north", "pn", "North")],
        state_bytes=state.SerializeToString(),
        initial_bytes=b"",
        clock=None,
        invite="",
        bot_ms=0,
        rating_status=RatingStatus.NONE,
    )


def test_a_game_of_people_is_looked_at_only_at_the_next_presence_check() -> None:
    # No bot to act or to answer a draw offer: nothing is due now, only the check of
    # whether the side to act is still there.
    settings = Settings(presence_check=30.0)
    for state in (
        game_pb2.GameState(game="war", position="p", to_act=["south"]),
        game_pb2.GameState(game="war", position="p", to_act=["south"], draw_offer="north"),
    ):
        assert next_due(humans_only(state), NOW, settings) == NOW + 30_000
