"""Every seat sees its own army at the bottom of the board, and allies see the same board.

For every game and every scenario the engine lists, each side's session is built as the
client builds it, the board turned as the session says, and the men read back from the
turned coordinates: the side's army (and its allies') lies below the others', below them
more than beside them.
"""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from cli_client.render import Theme, draw_board
from cli_client.render.board import turned
from cli_client.session import GameSession
from wargame.v1 import engine_pb2, engine_pb2_grpc, matchmaker_pb2

Describe = Callable[..., engine_pb2.DescribeGameResponse]


def every_game(channel: grpc.Channel) -> list[tuple[str, str]]:
    """(game, scenario) for each game and each of its scenarios ("" for the default)."""
    stub = engine_pb2_grpc.RulesEngineStub(channel)
    games = stub.ListGames(engine_pb2.ListGamesRequest(), timeout=30).games
    return [(game.id, "") for game in games] + [
        (game.id, scenario.name) for game in games for scenario in game.scenarios
    ]


def session_of(reply: engine_pb2.DescribeGameResponse, side: str, game: str) -> GameSession:
    view = matchmaker_pb2.GameView(
        id="g1", game=game, status=matchmaker_pb2.GAME_STATUS_RUNNING, version=1,
        your_side=side, state=reply.initial_state,
    )  # fmt: skip
    for each in reply.board.sides:
        view.seats.add(side=each.id, kind=matchmaker_pb2.SEAT_KIND_HUMAN)
    return GameSession(view, reply, side)


def army_cells(reply: engine_pb2.DescribeGameResponse) -> dict[str, list[str]]:
    """Each side's cells: its men, or its deployment cells while the armies are hidden
    (Attack at Dawn)."""
    men: dict[str, list[str]] = {}
    for piece in reply.initial_state.pieces:
        men.setdefault(piece.side, []).append(piece.cell)
    if men:
        return men
    for cell in reply.board.cells:
        for tag in cell.tags:
            if tag.startswith("deployment:"):
                men.setdefault(tag.removeprefix("deployment:"), []).append(cell.name)
    return men


def centre(points: list[tuple[float, float]]) -> tuple[float, float]:
    return sum(x for x, _ in points) / len(points), sum(y for _, y in points) / len(points)


def test_every_seat_of_every_game_and_scenario_sees_its_army_at_the_bottom(
    describe: Describe, engine_channel: grpc.Channel
) -> None:
    checked = 0
    for game, scenario in every_game(engine_channel):
        reply = describe(game, **({"scenario": scenario} if scenario else {}))
        turns_of: dict[str, int] = {}
        for side in [each.id for each in reply.board.sides]:
            session = session_of(reply, side, game)
            ours = session.alliances()[side]
            men = army_cells(reply)
            board = turned(reply.board, session.turns)
            at = {cell.name: (cell.x, cell.y) for cell in board.cells}
            alliance = session.alliances()
            mine = [at[cell] for owner in men if alliance[owner] == ours for cell in men[owner]]
            theirs = [at[cell] for owner in men if alliance[owner] != ours for cell in men[owner]]
            assert mine and theirs, (game, scenario, side)
            (mx, my), (tx, ty) = centre(mine), centre(theirs)
            where = (game, scenario, side, session.turns)
            assert my < ty and ty - my > abs(tx - mx), where  # below the others, not beside
            turns_of[side] = session.turns
            checked += 1
        alliances = session_of(reply, "", game).alliances()
        for side, turns in turns_of.items():  # allies see one board
            allies = [other for other in turns_of if alliances[other] == alliances[side]]
            assert {turns_of[ally] for ally in allies} == {turns}, (game, scenario, turns_of)
    assert checked >= 3 * 2 + 3 * 4 + 3  # war, battle, napoleonic; 2v2s; three_way


def test_allies_in_grand_battle_2v2_share_the_board_and_a_spectator_sees_the_engine_s(
    describe: Describe,
) -> None:
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    turns = {side: session_of(reply, side, "napoleonic").turns for side in
             ("red", "blue", "black", "green", "")}  # fmt: skip
    assert turns == {"red": 0, "blue": 0, "black": 2, "green": 2, "": 0}


@pytest.mark.parametrize("theme", [Theme(unicode=False, colour=False), Theme(True, True)])
def test_a_board_turned_a_quarter_keeps_its_labels(describe: Describe, theme: Theme) -> None:
    # Green comes from the west in three_way: its board is turned a quarter, the ranks
    # (12 to 1) run along the top and the files (l to a) down the side, a at the bottom.
    reply = describe("napoleonic", scenario="three_way")
    session = session_of(reply, "green", "napoleonic")
    assert session.turns == 1
    lines = [line.plain for line in draw_board(session.scene(), theme)]
    assert lines[0].split() == [str(rank) for rank in range(12, 0, -1)], lines
    sides = [line.split()[0] for line in lines[1:-1] if line.strip()]
    assert sides == list("lkjihgfedcba"), lines
