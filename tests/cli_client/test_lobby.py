"""Reading `wargame play` arguments: clocks, options, the requests sent."""

from __future__ import annotations

import pytest

from cli_client.lobby import GameRequest, parse_clock, parse_options
from wargame.v1 import matchmaker_pb2


def test_clocks() -> None:
    clock = parse_clock("10+5")
    assert (clock.base_seconds, clock.increment_seconds) == (600, 5)
    assert parse_clock("0.5").base_seconds == 30
    assert parse_clock(" 3+0 ").increment_seconds == 0
    for bad in ("", "abc", "10+x", "0+5", "-1", "5+-1"):
        with pytest.raises(ValueError):
            parse_clock(bad)


def test_options() -> None:
    assert parse_options(["compulsion=huff", " first_player = north "]) == {
        "compulsion": "huff",
        "first_player": "north",
    }
    assert parse_options(["setup=board 8x8; red: a1=G"]) == {"setup": "board 8x8; red: a1=G"}
    for bad in (["nope"], ["=x"]):
        with pytest.raises(ValueError):
            parse_options(bad)


def test_requests_carry_everything_asked_for() -> None:
    request = GameRequest(
        game="war", options={"compulsion": "huff"}, preset="casual", side="north",
        clock=parse_clock("1+2"), setup="S", rated=True, bot_time=0.5,
    )  # fmt: skip
    create = request.create(matchmaker_pb2.SEAT_KIND_BOT, matchmaker_pb2.VISIBILITY_PRIVATE)
    assert (
        create.game == "war"
        and create.options["compulsion"] == "huff"
        and create.preset == "casual"
    )
    assert create.side == "north" and create.setup == "S" and create.rated
    assert (
        create.opponent == matchmaker_pb2.SEAT_KIND_BOT
        and create.visibility == matchmaker_pb2.VISIBILITY_PRIVATE
    )
    assert create.time_control.base.seconds == 60 and create.time_control.increment.seconds == 2
    assert create.bot_time.ToMilliseconds() == 500
    queue = request.queue()
    assert queue.game == "war" and queue.time_control.base.seconds == 60 and queue.rated
    untimed = GameRequest(game="war").create(
        matchmaker_pb2.SEAT_KIND_HUMAN, matchmaker_pb2.VISIBILITY_PUBLIC
    )
    assert not untimed.HasField("time_control")


def test_the_bots_level_and_time_go_only_to_a_game_against_the_bot() -> None:
    request = GameRequest(game="war", level=1, bot_time=0.5)
    bot = request.create(matchmaker_pb2.SEAT_KIND_BOT, matchmaker_pb2.VISIBILITY_PUBLIC)
    assert bot.bot_level == 1 and bot.bot_time.ToMilliseconds() == 500
    human = request.create(matchmaker_pb2.SEAT_KIND_HUMAN, matchmaker_pb2.VISIBILITY_PUBLIC)
    assert human.bot_level == 0 and not human.HasField("bot_time")
    default = GameRequest(game="war").create(
        matchmaker_pb2.SEAT_KIND_BOT, matchmaker_pb2.VISIBILITY_PUBLIC
    )
    assert default.bot_level == 0 and not default.HasField("bot_time")  # the matchmaker's
