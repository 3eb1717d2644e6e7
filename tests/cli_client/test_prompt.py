"""What the player is told and asked: the welcome line, what the game waits for, the prompt."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cli_client.prompt import LEVEL_COMMAND, announcements, awaited, level_command, prompt, welcome
from cli_client.session import GameSession
from wargame.v1 import engine_pb2, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]


def war(
    describe: Describe,
    your_side: str = "south",
    status: matchmaker_pb2.GameStatus.ValueType = matchmaker_pb2.GAME_STATUS_RUNNING,
    north: str = "bob",
) -> GameSession:
    """A Game of War at its start (South to act), South played by alice."""
    reply = describe("war")
    view = matchmaker_pb2.GameView(
        id="g1", game="war", status=status, version=1, your_side=your_side,
        state=reply.initial_state,
    )  # fmt: skip
    view.seats.add(side="south", kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = "alice"
    seat = view.seats.add(side="north", kind=matchmaker_pb2.SEAT_KIND_HUMAN)
    if north == "bot":
        seat.kind = matchmaker_pb2.SEAT_KIND_BOT
        seat.bot_level = 3
        seat.player.bot = True
    elif north:
        seat.player.display_name = north
    return GameSession(view, reply, your_side)


def test_the_welcome_names_the_game_the_side_and_the_bots_level(
    describe: Describe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LEVEL_COMMAND, raising=False)  # started by `wargame play`
    assert welcome(war(describe)) == "Game g1: you play South."
    assert welcome(war(describe, north="bot")) == (
        "Game g1: you play South against the bot at level 3 of 5 (`--level 1` is the easiest)."
    )
    easiest = war(describe, north="bot")
    easiest.view.seats[1].bot_level = 1  # at the easiest, the way to the strongest
    assert welcome(easiest) == (
        "Game g1: you play South against the bot at level 1 of 5, the easiest "
        "(`--level 5` is the strongest)."
    )


def test_started_by_make_play_the_welcome_names_the_make_play_level(
    describe: Describe, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What works where the game was started: `make play` sets how it asks for a level.
    monkeypatch.setenv(LEVEL_COMMAND, "make play GAME=battle LEVEL={level}")
    assert welcome(war(describe, north="bot")) == (
        "Game g1: you play South against the bot at level 3 of 5 "
        "(`make play GAME=battle LEVEL=1` is the easiest)."
    )
    assert welcome(war(describe, north="bot"), "make play LEVEL={level}").endswith(
        "(`make play LEVEL=1` is the easiest)."
    )
    assert level_command(5) == "make play GAME=battle LEVEL=5"
    assert level_command(2, "") == "--level 2"


def test_an_open_two_player_game_waits_for_an_opponent(describe: Describe) -> None:
    session = war(describe, status=matchmaker_pb2.GAME_STATUS_OPEN, north="")
    assert awaited(session) == "an opponent"
    said = announcements(session, spectator=False, invite_code="", game_lines=lambda: ["no"])
    assert said == ["Waiting for an opponent to join game g1."]
    invited = announcements(session, spectator=False, invite_code="K7", game_lines=list)
    assert invited == [
        "Waiting for an opponent. Invite code: K7 — they join with `wargame play --join K7`."
    ]
    shown = prompt(
        session, spectator=False, question=None, rematch_offered=False, label="", unicode=True
    )
    assert (shown.text, shown.bold, shown.waiting) == ("› ", False, "waiting for an opponent")


def test_the_prompt_on_the_players_turn_and_the_opponents(describe: Describe) -> None:
    south, north = war(describe), war(describe, your_side="north")
    mine = prompt(
        south, spectator=False, question=None, rematch_offered=False, label="", unicode=True
    )
    assert (mine.text, mine.bold, mine.waiting) == ("South › ", True, "")
    labelled = prompt(
        south, spectator=False, question=None, rematch_offered=False, label="movement",
        unicode=False,
    )  # fmt: skip
    assert labelled.text == "South · movement > "
    theirs = prompt(
        north, spectator=False, question=None, rematch_offered=False, label="", unicode=True
    )
    assert (theirs.text, theirs.waiting) == ("› ", "waiting for South (alice)")
    watching = prompt(
        north, spectator=True, question=None, rematch_offered=False, label="", unicode=True
    )
    assert watching.waiting == "watching · South (alice) to act"


def test_a_question_asked_takes_the_prompt(describe: Describe) -> None:
    shown = prompt(
        war(describe), spectator=False, question="Resign and lose the game?",
        rematch_offered=False, label="", unicode=True,
    )  # fmt: skip
    assert (shown.text, shown.bold) == ("Resign and lose the game? y/N › ", True)


def test_the_games_own_lines_are_said_only_on_the_players_turn(describe: Describe) -> None:
    def game_lines() -> list[str]:
        return ["Movement: move any of your units."]

    south, north = war(describe), war(describe, your_side="north")
    assert announcements(south, spectator=False, invite_code="", game_lines=game_lines) == [
        "Movement: move any of your units."
    ]
    assert announcements(north, spectator=False, invite_code="", game_lines=game_lines) == []
    south.view.state.draw_offer = "north"
    assert announcements(south, spectator=False, invite_code="", game_lines=list) == [
        "North offers a draw — type `accept` or `decline`."
    ]
    assert announcements(south, spectator=True, invite_code="", game_lines=list) == []
