"""The live stream's reports in words, in the parts that need no terminal: the answer to the
player's draw offer, the connection lost."""

from __future__ import annotations

from collections.abc import Callable

from cli_client.session import GameSession
from cli_client.updates import draw_answer, lost_line
from tests.cli_client.conftest import at_the_start
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]


def south(describe: Describe) -> GameSession:
    """A Game of War at its start, played as South against the bot."""
    reply = describe("war")
    view = at_the_start(reply, "south", version=3)
    view.seats.add(side="south", kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = "alice"
    view.seats.add(side="north", kind=matchmaker_pb2.SEAT_KIND_BOT).player.bot = True
    return GameSession(view, reply)


def answer(side: str, *kinds: game_pb2.EventKind.ValueType) -> matchmaker_pb2.WatchGameResponse:
    message = matchmaker_pb2.WatchGameResponse(version=4, side=side)
    for kind in kinds:
        message.events.add(kind=kind)
    return message


def test_the_bot_declining_the_players_draw_offer(describe: Describe) -> None:
    session = south(describe)
    declined = answer("north", game_pb2.EVENT_KIND_DRAW_DECLINED)
    assert (
        draw_answer(session, "south", declined) == "North (bot) declines your draw offer: play on."
    )


def test_the_bot_accepting_the_players_draw_offer(describe: Describe) -> None:
    session = south(describe)
    session.view.outcome.reason = game_pb2.OUTCOME_REASON_AGREEMENT
    assert draw_answer(session, "south", answer("north")) == "North (bot) accepts your draw offer."


def test_only_an_answer_to_the_players_own_offer_is_told(describe: Describe) -> None:
    session = south(describe)
    declined = answer("north", game_pb2.EVENT_KIND_DRAW_DECLINED)
    assert draw_answer(session, "", declined) is None  # no offer stood
    assert draw_answer(session, "north", declined) is None  # the offer was the opponent's
    assert draw_answer(session, "south", answer("south", game_pb2.EVENT_KIND_DRAW_DECLINED)) is None
    assert draw_answer(session, "south", answer("north")) is None  # a move: the offer stands


def test_losing_the_stream_on_the_players_turn_warns_of_abandonment() -> None:
    assert lost_line("timeout", my_turn=False) == (
        "lost connection to the matchmaker (timeout); reconnecting…"
    )
    assert lost_line("timeout", my_turn=True) == (
        "lost connection to the matchmaker (timeout); reconnecting… "
        "While you are away on your turn, the game may end as abandoned."
    )
