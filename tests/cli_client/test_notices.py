"""The matchmaker's notices in players' words: who left, who is back, who is warned."""

from __future__ import annotations

from collections.abc import Callable

from cli_client.notices import clock_time, words
from cli_client.session import GameSession
from tests.cli_client.conftest import at_the_start
from wargame.v1 import engine_pb2, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]
NOW = 1_800_000_000.0


def session_of(describe: Describe, your_side: str) -> GameSession:
    reply = describe("war")
    view = at_the_start(reply, your_side, version=4)
    for side, name in (("south", "alice"), ("north", "bob")):
        view.seats.add(side=side, kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = name
    return GameSession(view, reply, your_side)


def notice(kind: matchmaker_pb2.NoticeKind.ValueType, side: str) -> matchmaker_pb2.Notice:
    return matchmaker_pb2.Notice(kind=kind, side=side)


def test_the_opponent_leaving_and_coming_back(describe: Describe) -> None:
    north = session_of(describe, "north")
    gone = words(notice(matchmaker_pb2.NOTICE_KIND_DISCONNECTED, "south"), north, NOW)
    assert gone is not None and gone.text == "South (alice) disconnected." and gone.warning
    back = words(notice(matchmaker_pb2.NOTICE_KIND_RECONNECTED, "south"), north, NOW)
    assert back is not None and back.text == "South (alice) reconnected." and not back.warning


def test_the_warning_says_how_long_before_abandonment(describe: Describe) -> None:
    north = session_of(describe, "north")
    warning = notice(matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING, "south")
    warning.deadline.FromSeconds(int(NOW) + 600)
    said = words(warning, north, NOW)
    assert said is not None and said.warning
    assert said.text == (
        "South (alice) has left on their turn: they lose as abandoned in 10:00 "
        f"(at {clock_time(NOW + 600)}) unless they come back."
    )


def test_a_player_is_not_told_of_its_own_comings_and_goings(describe: Describe) -> None:
    south = session_of(describe, "south")
    for kind in (
        matchmaker_pb2.NOTICE_KIND_DISCONNECTED,
        matchmaker_pb2.NOTICE_KIND_RECONNECTED,
        matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING,
        matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED,
    ):
        assert words(notice(kind, "south"), south, NOW) is None


def test_a_rematch_offered_to_the_player_and_to_spectators(describe: Describe) -> None:
    offer = notice(matchmaker_pb2.NOTICE_KIND_REMATCH_OFFERED, "north")
    said = words(offer, session_of(describe, "south"), NOW)
    assert said is not None
    assert said.text == (
        "North (bob) offers a rematch, sides swapped: `rematch` accepts, `quit` leaves."
    )
    spectator = words(offer, session_of(describe, ""), NOW)
    assert spectator is not None and spectator.text == "North (bob) offers a rematch."
