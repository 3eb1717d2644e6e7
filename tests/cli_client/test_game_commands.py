"""Typed commands in a game, in the parts that need no terminal: the hint line, `moves`' columns."""

from __future__ import annotations

import re
from collections.abc import Callable

from cli_client.game_commands import coach_level, hint_line, in_columns, not_yours, spoken
from cli_client.render import Theme
from cli_client.session import GameSession
from tests.cli_client.conftest import at_the_start
from wargame.v1 import engine_pb2, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]


def test_a_citadel_held_is_said_in_words() -> None:
    assert spoken("Ch1xa8#C") == "Ch1xa8 (the Citadel holds: a win)"
    assert spoken("Ch1xa8") == "Ch1xa8"


def test_the_hint_gives_the_verdict_and_the_expected_line() -> None:
    reply = engine_pb2.SuggestActionResponse(
        notation="e3-e4", line=["e3-e4", "a7-a6", "Ch1xa8#C"], summary="wins in 2"
    )
    assert hint_line(reply) == (
        "Hint: e3-e4 (wins in 2; then a7-a6 Ch1xa8 (the Citadel holds: a win))"
    )


def test_the_hint_without_a_summary_gives_the_material() -> None:
    reply = engine_pb2.SuggestActionResponse(notation="e3-e4", line=["e3-e4"], evaluation=-1.25)
    assert hint_line(reply) == "Hint: e3-e4 (-1.2 material)"


def test_the_hint_line_stops_after_five_more_actions() -> None:
    line = ["a1-a2", "b1", "b2", "b3", "b4", "b5", "b6"]
    reply = engine_pb2.SuggestActionResponse(notation="a1-a2", line=line, summary="about even")
    assert hint_line(reply) == "Hint: a1-a2 (about even; then b1 b2 b3 b4 b5)"


def test_the_hint_names_the_coach_s_level() -> None:
    reply = engine_pb2.SuggestActionResponse(notation="e3-e4", summary="about even")
    assert hint_line(reply, 3) == "Hint (level 3): e3-e4 (about even)"


def test_the_coach_plays_one_level_above_the_bot_faced(describe: Describe) -> None:
    # Not the bot itself (a hint at the bot's own level, and at level 5 its own search,
    # made hint-following a mirror match), but one level better; the player may choose.
    reply = describe("war")

    def session(*bot_levels: int) -> GameSession:
        seats = [matchmaker_pb2.Seat(side="south", player=matchmaker_pb2.Player(id="p"))]
        for level in bot_levels:
            seats.append(
                matchmaker_pb2.Seat(
                    side="north", kind=matchmaker_pb2.SEAT_KIND_BOT, bot_level=level
                )
            )
        view = at_the_start(reply, "south")
        view.seats.extend(seats)
        return GameSession(view, reply, "south")

    assert [coach_level(session(level)) for level in (1, 2, 3, 4, 5)] == [2, 3, 4, 5, 5]
    assert coach_level(session()) == 5  # against a person: the strongest
    assert coach_level(session(1), chosen=4) == 4


def test_moves_are_listed_in_as_many_columns_as_fit() -> None:
    notations = ["a1-a2", "b1-b2", "Ch1xa8", "d1-d2", "e1-e2"]
    # Columns of 8 (the longest, 6, and two spaces): 20 columns hold two after the indent.
    assert in_columns(notations, 20) == [
        "  a1-a2   b1-b2",
        "  Ch1xa8  d1-d2",
        "  e1-e2",
    ]
    assert in_columns(notations, 5) == [f"  {text}" for text in notations]
    assert in_columns(notations, 80) == ["  a1-a2   b1-b2   Ch1xa8  d1-d2   e1-e2"]


def test_the_opponents_man_is_named_with_which_are_yours(describe: Describe) -> None:
    reply = describe("war")
    session = GameSession(at_the_start(reply, "south"), reply, "south")
    north = next(piece for piece in reply.initial_state.pieces if piece.side == "north")
    kind = next(kind.name for kind in reply.board.piece_kinds if kind.id == north.kind)
    plain, coloured = Theme(unicode=True), Theme(unicode=True, colour=True)
    said = not_yours(session, north.cell, plain)
    assert re.fullmatch(rf"{north.cell} is North's {kind}, not yours; yours are South's: "
                        r"capitals [A-Z]", said), said  # fmt: skip
    assert "yours are South's: outlined " in not_yours(session, north.cell, coloured)
    south = next(piece for piece in reply.initial_state.pieces if piece.side == "south")
    assert not_yours(session, south.cell, plain) == ""  # the player's own
    assert not_yours(session, "e5", plain) == ""  # nobody's


def test_an_ally_s_man_is_not_the_opponent_s(describe: Describe) -> None:
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    session = GameSession(at_the_start(reply, "red"), reply, "red")
    theme = Theme(unicode=True)
    assert not_yours(session, "i3", theme) == ""  # Blue's, Red's ally
    assert not_yours(session, "i8", theme).startswith("i8 is Green's Infantry, not yours")
