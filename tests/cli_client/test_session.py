"""The client's model of a game: versions, seats, losses, clocks, the last move."""

from __future__ import annotations

import re
from collections.abc import Callable

from cli_client.render import Theme
from cli_client.render.panel import player_lines
from cli_client.session import GameSession
from wargame.v1 import engine_pb2, game_pb2, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]
Play = Callable[..., engine_pb2.ApplyActionsResponse]


def view(state: object, version: int, side: str = "south") -> matchmaker_pb2.GameView:
    out = matchmaker_pb2.GameView(
        id="g1",
        game="war",
        status=matchmaker_pb2.GAME_STATUS_RUNNING,
        version=version,
        your_side=side,
    )
    out.state.CopyFrom(state)  # type: ignore[arg-type]
    out.seats.add(side="south", kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = "alice"
    out.seats.add(side="north", kind=matchmaker_pb2.SEAT_KIND_HUMAN)
    return out


def test_only_newer_views_are_taken(describe: Describe, play: Play) -> None:
    reply = describe("war")
    session = GameSession(view(reply.initial_state, 2), reply)
    after = play(reply.initial_state, "Ch1xa8")
    assert not session.update(view(after.state, 1))
    assert session.update(view(after.state, 3))
    assert session.version == 3
    assert session.lost("north") == ["troop"] and session.lost("south") == []
    assert not session.my_turn and session.to_act == ["north"]


def test_seats_with_an_open_one(describe: Describe) -> None:
    reply = describe("war")
    session = GameSession(view(reply.initial_state, 1), reply)
    seats = session.seats()
    assert [(seat.side, seat.name, seat.you) for seat in seats] == [
        ("south", "alice", True),
        ("north", "(open)", False),
    ]
    assert session.seat_name("south") == "South (alice)"
    assert session.turns == 0  # South is already at the bottom


def test_placed_pieces_raise_the_baseline_instead_of_counting_as_losses(
    describe: Describe, play: Play
) -> None:
    reply = describe("war")
    session = GameSession(view(reply.initial_state, 1), reply)
    placed = play(reply.initial_state, "F@e5")
    session.update(view(placed.state, 2))
    session.note_events(placed.events)
    assert session.lost("south") == []
    assert session.last_cells == {"e5"}


def test_clock_runs_only_for_the_side_to_act(describe: Describe) -> None:
    reply = describe("war")
    seen = view(reply.initial_state, 1)
    seen.clock.remaining["south"].FromSeconds(100)
    seen.clock.remaining["north"].FromSeconds(50)
    seen.clock.running = "south"
    seen.clock.as_of.FromSeconds(1000)
    session = GameSession(seen, reply)
    assert session.clock("south", now=1010) == (90.0, True)
    assert session.clock("north", now=1010) == (50.0, False)
    assert session.clock("nobody") is None


def four_seats(state: object, version: int) -> matchmaker_pb2.GameView:
    out = matchmaker_pb2.GameView(
        id="g4",
        game="napoleonic",
        status=matchmaker_pb2.GAME_STATUS_RUNNING,
        version=version,
        your_side="blue",
    )
    out.state.CopyFrom(state)  # type: ignore[arg-type]
    for side in ("red", "black", "blue", "green"):
        out.seats.add(side=side, kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = side
    return out


def awaiting(state: game_pb2.GameState, *sides: str) -> game_pb2.GameState:
    """A copy of `state` in which `sides` are the players to act."""
    copy = game_pb2.GameState()
    copy.CopyFrom(state)
    del copy.to_act[:]
    copy.to_act.extend(sides)
    return copy


def test_every_player_with_its_alliance_and_who_acted_in_the_phase(describe: Describe) -> None:
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    first = reply.initial_state
    both = awaiting(first, "red", "blue")  # two players awaited in one phase
    session = GameSession(four_seats(both, 1), reply)
    assert session.multiplayer
    seats = {seat.side: seat for seat in session.seats()}
    assert {side: seat.alliance for side, seat in seats.items()} == {
        "red": "south", "black": "north", "blue": "south", "green": "north"
    }  # fmt: skip
    assert not any(seat.acted or seat.out for seat in seats.values())
    one = awaiting(both, "blue")  # red has acted; blue is still awaited
    session.update(four_seats(one, 2))
    assert session.acted() == {"red"}
    assert session.seat("red").acted and not session.seat("blue").acted  # type: ignore[union-attr]
    later = type(first)()
    later.CopyFrom(one)
    later.napoleonic.turn_number += 1  # a new phase: nobody has acted in it yet
    later.napoleonic.players[0].out = True
    session.update(four_seats(later, 3))
    assert session.acted() == set()
    assert session.seat("red").out  # type: ignore[union-attr]


def test_the_panel_names_who_is_awaited_who_has_acted_and_who_is_out(describe: Describe) -> None:
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    first = reply.initial_state
    both = awaiting(first, "red", "blue")  # the attack declaration: red and its ally blue
    session = GameSession(four_seats(both, 1), reply)

    def panel() -> dict[str, str]:
        theme = Theme(unicode=False, colour=False)
        lines = [line.plain for line in player_lines(session, theme, now=0.0)]
        return {line.split()[0].lower(): line for line in lines}

    shown = panel()
    assert re.search(r"\bsouth\s+awaited\b", shown["red"]), shown
    assert re.search(r"\bsouth\s+awaited\b", shown["blue"]), shown
    for side in ("black", "green"):
        assert re.search(r"\bnorth\s*$|\bnorth\s+away\b", shown[side]), shown
    one = awaiting(both, "blue")  # red has ended its part; blue is still awaited
    one.napoleonic.players[3].out = True  # green is out
    session.update(four_seats(one, 2))
    shown = panel()
    assert re.search(r"\bsouth\s+acted\b", shown["red"]), shown
    assert re.search(r"\bsouth\s+awaited\b", shown["blue"]), shown
    assert re.search(r"\bnorth\s*$|\bnorth\s+away\b", shown["black"]), shown
    assert re.search(r"\bnorth\s+out\b", shown["green"]), shown
