"""The text around the board: players, clocks, losses, phases, events and combat tallies."""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Callable

import pytest
from rich.text import Text

from cli_client.display.fullscreen import FullScreen, packed
from cli_client.render import Theme, panel
from cli_client.render.board import Symbols
from cli_client.render.panel import (
    event_lines,
    outcome_line,
    player_lines,
    rating_lines,
    screen,
    status_lines,
)
from cli_client.session import GameSession
from cli_client.terminal import Terminal, elapsed
from tests.cli_client import snapshots
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2, matchmaker_pb2

ASCII = Theme(unicode=False, colour=False)
UNICODE = Theme(unicode=True, colour=False)
NOW = 1_800_000_000.0

Describe = Callable[..., engine_pb2.DescribeGameResponse]
Play = Callable[..., engine_pb2.ApplyActionsResponse]


def view_of(
    state: game_pb2.GameState, *, version: int = 3, your_side: str = "", clock: bool = False
) -> matchmaker_pb2.GameView:
    """A GameView as the matchmaker sends it, for a state from the engine."""
    sides = (
        ["south", "north"]
        if state.game == "war"
        else ["red", "black"]
        if state.game == "napoleonic"
        else ["attacker", "defender"]
    )
    view = matchmaker_pb2.GameView(
        id="g-test", game=state.game, status=matchmaker_pb2.GAME_STATUS_RUNNING, version=version,
        your_side=your_side, state=state,
    )  # fmt: skip
    view.seats.add(side=sides[0], kind=matchmaker_pb2.SEAT_KIND_HUMAN).player.display_name = "alice"
    bot = view.seats.add(side=sides[1], kind=matchmaker_pb2.SEAT_KIND_BOT)
    bot.player.display_name = "Bot"
    bot.player.bot = True
    bot.bot_level = 1
    if state.outcome.reason:
        view.status = matchmaker_pb2.GAME_STATUS_FINISHED
        view.outcome.CopyFrom(state.outcome)
    if clock:
        view.clock.remaining[sides[0]].FromSeconds(290)
        view.clock.remaining[sides[1]].FromSeconds(61)
        view.clock.running = state.to_act[0] if state.to_act else ""
        view.clock.as_of.FromSeconds(int(NOW) - 5)
    return view


def test_war_screen_with_players_clocks_losses_and_reserves(describe: Describe, play: Play) -> None:
    reply = describe("war")
    # Cannon h1 takes the Troop on a8 (the diagonal is open in the set-up), then North places.
    after = play(reply.initial_state, "Ch1xa8", "F@e5")
    session = GameSession(
        view_of(after.state, your_side="south", clock=True), reply, "south", reply.initial_state
    )
    session.note_events(after.events[-1:])
    lines = screen(session, ASCII, width=120, now=NOW)
    text = snapshots.as_text(lines)
    snapshots.check("war_screen.ascii.txt", text)
    south = next(line for line in text.splitlines() if "alice (you)" in line)
    north = next(line for line in text.splitlines() if "bot, level 1" in line)
    assert "4:45  <" in south  # South's clock runs: 290 s as of 5 s ago
    assert "1:01" in north and "lost: t" in north
    assert "Flying Machines in reserve: South 2 · North 1" in text


def test_a_player_who_left_and_the_time_before_abandonment(describe: Describe) -> None:
    reply = describe("war")
    view = view_of(reply.initial_state, your_side="north")
    view.seats[0].kind = matchmaker_pb2.SEAT_KIND_HUMAN  # alice (South, to act) has left
    view.seats[0].connected = False
    session = GameSession(view, reply, "north")
    lines = [line.plain for line in status_lines(session, ASCII, now=NOW)]
    south = next(line for line in lines if "alice" in line)
    assert south.endswith("<  away")
    warning = matchmaker_pb2.Notice(kind=matchmaker_pb2.NOTICE_KIND_ABANDON_WARNING, side="south")
    warning.deadline.FromSeconds(int(NOW) + 95)
    session.note_notice(warning)
    lines = [line.plain for line in status_lines(session, ASCII, now=NOW)]
    assert any(line.endswith("<  away: abandoned in 1:35") for line in lines), lines
    session.note_notice(
        matchmaker_pb2.Notice(kind=matchmaker_pb2.NOTICE_KIND_RECONNECTED, side="south")
    )
    assert session.abandon_left("south", NOW) is None


def test_a_rated_game_shows_each_rating_change(describe: Describe) -> None:
    reply = describe("war")
    view = view_of(reply.initial_state, your_side="south")
    view.status = matchmaker_pb2.GAME_STATUS_FINISHED
    view.rated = True
    session = GameSession(view, reply, "south")
    assert rating_lines(session, UNICODE) == []  # not settled yet
    del view.seats[1:]
    north = view.seats.add(side="north", kind=matchmaker_pb2.SEAT_KIND_HUMAN)
    north.player.display_name = "bob"
    for seat, before, after in ((view.seats[0], 1500.0, 1662.3), (north, 1500.0, 1337.6)):
        seat.rating_before.rating, seat.rating_after.rating = before, after
    session = GameSession(view, reply, "south")
    (line,) = rating_lines(session, UNICODE)
    assert line.plain == "Rating (war): you 1500 → 1662 (+162); bob 1500 → 1338 (-162)"
    assert rating_lines(session, ASCII)[0].plain.startswith("Rating (war): you 1500 -> 1662")
    south = next(line.plain for line in status_lines(session, ASCII) if "alice" in line.plain)
    assert south.endswith("1500 -> 1662 (+162)")


def test_narrow_terminals_get_the_status_above_the_board(describe: Describe) -> None:
    reply = describe("war")
    session = GameSession(view_of(reply.initial_state, your_side="north"), reply, "north")
    lines = [line.plain for line in screen(session, ASCII, width=40, now=NOW)]
    assert lines[0].startswith("The Game of War")
    assert session.turns == 2  # North sees its own side at the bottom
    board_top = next(index for index, line in enumerate(lines) if line.split()[:1] == ["j"])
    assert lines[board_top].split() == list("jihgfedcba")


def test_napoleonic_status_shows_phase_and_declared_attacks(
    describe: Describe, play: Play, engine: engine_pb2_grpc.RulesEngineStub
) -> None:
    reply = describe("napoleonic")
    start = engine.NewGame(engine_pb2.NewGameRequest(
        game="napoleonic", options={"auto_skip_defence": "false"},
        setup="board 8x8; red: e5=A d6=I a1=G; black: e6=G e7=I h8=I",
    )).state  # fmt: skip
    after = play(start, "attack e5>e6", "attack d6>e6", "end")
    session = GameSession(view_of(after.state, your_side="black"), reply, "black")
    lines = [line.plain for line in status_lines(session, UNICODE, NOW)]
    assert "Turn 1 · Red · defence phase" in lines
    assert "attacks: e5>e6, d6>e6" in lines
    assert session.my_turn  # the defender allocates supports
    supported = play(after.state, "support e7>e6", "end")
    tally = [line.plain for line in event_lines(supported.events, UNICODE, board=reply.board)]
    snapshots.check(
        "napoleonic_combat.unicode.txt", snapshots.as_text([Text(line) for line in tally])
    )
    assert any(
        line.startswith("  Attack on Guards at e6: attack 3 vs defence 3 → holds") for line in tally
    )
    assert any("support infantry e7 +1" in line for line in tally)


def test_outcome_lines_say_who_won_from_each_seat(
    describe: Describe, engine: engine_pb2_grpc.RulesEngineStub
) -> None:
    reply = describe("napoleonic")
    start = engine.NewGame(engine_pb2.NewGameRequest(
        game="napoleonic", setup="board 8x8; red: e5=A d6=I a1=G; black: e6=G h8=I",
    )).state  # fmt: skip
    actions = [
        game_pb2.Action(side="red", notation=text)
        for text in ("attack e5>e6", "attack d6>e6", "end")
    ]
    final = engine.ApplyActions(engine_pb2.ApplyActionsRequest(state=start, actions=actions)).state
    assert final.outcome.winner == "red"
    for side, verdict in (("red", "you win"), ("black", "you lose"), ("", "Red wins")):
        session = GameSession(view_of(final, your_side=side), reply, side)
        assert session.finished
        line = outcome_line(session, UNICODE).plain
        assert line.startswith(f"Game over: {verdict} — ")
        # Who won, said once (not "Red wins — Red eliminates Black's Guards: Red wins").
        assert line == f"Game over: {verdict} — Red eliminates Black's Guards", line


def test_outcome_lines_of_an_alliance_win(
    describe: Describe, engine: engine_pb2_grpc.RulesEngineStub
) -> None:
    reply = describe("napoleonic", scenario="grand_battle_2v2")
    start = reply.initial_state
    actions = [game_pb2.Action(side=side, resign=game_pb2.Resign()) for side in ("black", "green")]
    final = engine.ApplyActions(engine_pb2.ApplyActionsRequest(state=start, actions=actions)).state
    assert set(final.outcome.winners) == {"red", "blue"}
    verdicts = (
        ("red", "you win"),
        ("blue", "you win"),
        ("green", "you lose"),
        ("", "Red and Blue win"),
    )
    for side, verdict in verdicts:
        session = GameSession(view_of(final, your_side=side), reply, side)
        assert outcome_line(session, UNICODE).plain.startswith(f"Game over: {verdict}")


def test_the_move_list_keeps_each_numbered_move_on_one_row() -> None:
    moves = ["6. move c2-d3", "7. move b2-c2", "8. move b3-b2", "9. end"]
    # 30 columns hold two moves (13 + 2 + 13 = 28) but not a third; "9. end" fits after 8.
    assert packed(moves, 30) == ["6. move c2-d3  7. move b2-c2", "8. move b3-b2  9. end"]
    assert packed(moves, 13) == moves  # exactly one a row
    assert packed(["1. a-very-long-move"], 8) == ["1. a-very-long-move"]  # alone, for wrapping
    assert packed([], 30) == []


def test_each_kind_keeps_one_symbol_for_the_whole_game(describe: Describe) -> None:
    # Battle: with all of a kind gone from the board, every other kind is drawn as before,
    # and the lost ones in the side panel are drawn as on the board (glyphs, not letters).
    colour = Theme(unicode=True, colour=True)
    for game in ("war", "battle", "napoleonic"):
        reply = describe(game)
        session = GameSession(
            view_of(reply.initial_state, your_side=reply.board.sides[0].id), reply
        )
        at_start = Symbols(session.scene(), colour)
        sides = {piece.side for piece in reply.initial_state.pieces}
        for gone in sorted({piece.kind for piece in reply.initial_state.pieces}):
            later = game_pb2.GameState()
            later.CopyFrom(reply.initial_state)
            del later.pieces[:]
            later.pieces.extend(p for p in reply.initial_state.pieces if p.kind != gone)
            session.update(view_of(later, version=4, your_side=session.your_side))
            now = Symbols(session.scene(), colour)
            for kind in {piece.kind for piece in reply.initial_state.pieces}:
                for side in sides:
                    assert now.of(kind, side) == at_start.of(kind, side), (game, gone, kind)
            for side in {p.side for p in reply.initial_state.pieces if p.kind == gone}:
                lost = [line.plain for line in player_lines(session, colour, now=NOW)]
                shown = next(
                    line for line in lost if "lost:" in line and session.name(side) in line
                )
                assert shown.endswith(at_start.of(gone, side)), (game, gone, shown)
            session = GameSession(view_of(reply.initial_state, your_side=session.your_side), reply)


def test_a_full_screen_drawing_shows_one_view_while_the_loop_takes_the_next(
    describe: Describe,
) -> None:
    """The game loop's thread replaces the session's view while the main thread draws the
    side panel: the drawing shows the view of one moment, clocks and moves alike, never the
    clocks of the view before a move beside the move (a paired run read North's clock still
    running once the bot had answered)."""
    reply = describe("war")
    views = []  # each a move and 10 s more on both clocks (stopped) than the one before
    for k, moves in enumerate(([], ["e3-e4"], ["e3-e4", "d8-d7"])):
        view = view_of(reply.initial_state, your_side="south", version=3 + k, clock=True)
        view.clock.running = ""
        view.clock.remaining["south"].FromSeconds(100 + 10 * k)
        view.clock.remaining["north"].FromSeconds(200 + 10 * k)
        view.moves.extend(moves)
        views.append(view)
    taken = itertools.cycle(views)

    class Session(GameSession):
        def clock(self, side: str, now: float | None = None) -> tuple[float, bool] | None:
            shown = super().clock(side, now)
            drawn.view = next(taken)  # the loop's thread, meanwhile
            return shown

    drawn = Session(next(taken), reply, "south", reply.initial_state)
    display = FullScreen(Terminal(ASCII, stdin=io.StringIO(), stdout=io.StringIO()))
    display.game(drawn, drawn.scene())
    for _ in range(len(views)):
        text = display._side_text().value
        south = next(k for k in range(3) if re.search(rf"\(you\)\s+{elapsed(100 + 10 * k)}", text))
        north = next(k for k in range(3) if re.search(rf"level 1\s+{elapsed(200 + 10 * k)}", text))
        played = len(re.findall(r"\d+\. \S+", text.partition("Moves")[2]))
        assert south == north == played, text


def test_one_render_draws_one_board_however_the_terminal_is_resized_meanwhile(
    describe: Describe,
) -> None:
    """A render asks for the board's text and then for the row to put its cursor on, which
    prompt_toolkit looks up in that text; the terminal resized between the two (to a size
    where the other drawing, normal or compact, is shown) must not make them disagree (a
    slow run's view died of an IndexError there). The next render draws the new size."""
    reply = describe("battle")
    session = GameSession(view_of(reply.initial_state, your_side="attacker"), reply, "attacker")
    display = FullScreen(Terminal(ASCII, stdin=io.StringIO(), stdout=io.StringIO()))
    display.game(session, session.scene())
    size = [120, 45]
    display._size = lambda: (size[0], size[1])  # type: ignore[method-assign]
    tall = len(display._board_text().value.split("\n"))
    size[:] = [80, 24]  # resized while the render goes on
    assert len(display._drawing()) == tall == len(display._board_text().value.split("\n"))
    display.app.render_counter += 1  # the next render
    short = len(display._board_text().value.split("\n"))
    assert display.geometry().compact and short < tall and len(display._drawing()) == short


def test_a_render_wraps_again_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The view renders twice a second for its clocks. The log pane is wrapped and drawn
    again only when the log or the pane's size changed, and the pager wraps its lines once
    for each width (a render of a long game's log in the pager took half a second, and
    kept the view's core busy while it was open)."""
    wrapped: list[str] = []
    word_wrapped = panel.word_wrapped

    def counted(line: Text, width: int) -> list[Text]:
        wrapped.append(line.plain)
        return word_wrapped(line, width)

    monkeypatch.setattr(panel, "word_wrapped", counted)
    display = FullScreen(Terminal(ASCII, stdin=io.StringIO(), stdout=io.StringIO()))
    size = [100, 30]
    display._size = lambda: (size[0], size[1])  # type: ignore[method-assign]
    display.say(*(Text(f"message {n} of a long game") for n in range(3000)))

    def log_pane() -> str:
        display.app.render_counter += 1  # the next render
        return display._log_text().value

    first = log_pane()
    assert "message 2999" in first and 0 < len(wrapped) <= 2 * display.geometry().log_height
    wrapped.clear()
    assert log_pane() == first and log_pane() == first and wrapped == []
    display.say(Text("message 3000"))
    assert "message 3000" in log_pane() and "message 3000" not in first and wrapped
    wrapped.clear()
    size[0] = 60  # resized
    assert log_pane() != first and wrapped

    display._scroll(-1)  # the whole log in the pager
    assert len(wrapped) > 3000
    wrapped.clear()
    shown = []
    for _ in range(3):
        display.app.render_counter += 1
        shown.append(display._pager_text().value + display._pager_footer().value)
        display._scroll(-3)
    assert "message 3000" in shown[0] and "message 3000" not in shown[2] and wrapped == []
    size[0] = 80
    assert "message" in display._pager_text().value and len(wrapped) == 3001
