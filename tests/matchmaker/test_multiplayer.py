"""Games of N seats through the matchmaker (Napoleonic Chess 10.6): seats from
the scenario's players, invite codes that fill any free seat or a chosen one, bots in any
seats, spectators, a clock per player, resignation and time forfeits per player, draws
agreed by every remaining player, openskill ratings, and records that replay."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import grpc
import pytest

from matchmaker.bot import secret_array
from tests.matchmaker.conftest import Client, InProcessMatchmaker
from tests.matchmaker.helpers import (
    Watcher,
    expect_error,
    seconds,
    submission,
    submit_text,
    wait_for,
)
from tests.matchmaker.test_full_games import check_record
from wargame.v1 import engine_pb2, game_pb2
from wargame.v1 import matchmaker_pb2 as mm
from wargame.v1 import napoleonic_pb2 as nap

pytestmark = pytest.mark.integration

SCENARIO = {"scenario": "grand_battle_2v2"}
SOUTH, NORTH = ("red", "blue"), ("black", "green")  # the two alliances, in turn order
SIDES = ("red", "black", "blue", "green")


def players_out(view: mm.GameView) -> set[str]:
    """The players of a game view who are out."""
    return {player.id for player in view.state.napoleonic.players if player.out}


def suggested(engine: Any, state: game_pb2.GameState, side: str) -> game_pb2.Action:
    """The engine's weakest AI's action for `side` (a person playing quickly)."""
    reply = engine.SuggestAction(
        engine_pb2.SuggestActionRequest(
            state=state, side=side, level=1, seed=7, time_budget=seconds(0.05)
        ),
        timeout=30,
    )
    action: game_pb2.Action = reply.action
    return action


def play_turns(
    engine: Any, people: Mapping[str, Client], game_id: str, until: Callable[[mm.GameView], bool]
) -> mm.GameView:
    """The people play their sides (the bots theirs, through the sweeper) until `until`."""
    watcher = next(iter(people.values()))
    while True:
        game: mm.GameView = wait_for(
            lambda: _ready(watcher.GetGame(mm.GetGameRequest(game_id=game_id)).game, people),
            timeout=60,
        )
        if until(game) or game.status != mm.GAME_STATUS_RUNNING:
            return game
        side = next(side for side in game.state.to_act if side in people)
        try:
            people[side].SubmitActions(submission(game, suggested(engine, game.state, side)))
        except grpc.RpcError as error:  # a bot acted meanwhile: look again
            if error.code() != grpc.StatusCode.ABORTED:
                raise


def _ready(game: mm.GameView, people: Mapping[str, Client]) -> mm.GameView | None:
    """The game once it waits for a person (or has ended); None while only bots act."""
    if game.status != mm.GAME_STATUS_RUNNING or any(s in people for s in game.state.to_act):
        return game
    return None


def test_four_players_two_people_two_bots_to_the_end(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    alice = clients(matchmaker.address, "alice")
    bob = clients(matchmaker.address, "bob")
    created = alice.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options=SCENARIO,
            side="red",
            bot_sides=list(NORTH),
            visibility=mm.VISIBILITY_PRIVATE,
            time_control=mm.TimeControl(base=seconds(3600)),
        )
    )
    assert [seat.side for seat in created.game.seats] == list(SIDES)
    assert created.invite_code and created.game.status == mm.GAME_STATUS_OPEN
    kinds = {seat.side: seat.kind for seat in created.game.seats}
    assert kinds["black"] == kinds["green"] == mm.SEAT_KIND_BOT
    assert not created.game.seats[2].HasField("player")  # blue is free
    # A seat the bot holds cannot be chosen; the free one can, by the invite code.
    expect_error(
        lambda: bob.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code, side="black")),
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_TAKEN",
    )
    joined = bob.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code, side="blue")).game
    assert joined.status == mm.GAME_STATUS_RUNNING and joined.your_side == "blue"
    assert set(joined.clock.remaining) == set(SIDES)  # a clock per player
    people = {"red": alice, "blue": bob}
    # Everyone plays a full round of turns (both people and both bots).
    game = play_turns(
        engine_stub, people, created.game.id, lambda g: g.state.napoleonic.turn_number >= 4
    )
    assert game.status == mm.GAME_STATUS_RUNNING  # the bots (black, green) took turns too
    # A spectator (no token) sees the game.
    spectator = clients(matchmaker.address)
    seen = spectator.GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert seen.your_side == "" and [s.side for s in seen.seats] == list(SIDES)
    # Red surrenders alone: out, its ally plays on.
    game = alice.Resign(mm.ResignRequest(game_id=game.id)).game
    assert game.status == mm.GAME_STATUS_RUNNING and players_out(game) == {"red"}
    assert "red" not in game.state.to_act
    expect_error(
        lambda: alice.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=game.id,
                expected_version=game.version,
                actions=[game_pb2.Action(notation="end")],
            )
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    game = play_turns(
        engine_stub, {"blue": bob}, game.id, lambda g: g.state.napoleonic.turn_number >= 7
    )
    if game.status == mm.GAME_STATUS_RUNNING:  # blue, the last of its alliance, surrenders
        game = bob.Resign(mm.ResignRequest(game_id=game.id)).game
    assert game.status == mm.GAME_STATUS_FINISHED
    assert game.outcome.winner == "north" and set(game.outcome.winners) == set(NORTH)
    assert not game.rated and not any(seat.HasField("rating_after") for seat in game.seats)
    stored = check_record(alice, engine_stub, game.id)
    assert stored.outcome == game.outcome


def four_people(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], **request: Any
) -> tuple[mm.GameView, dict[str, Client]]:
    """A running 2-v-2 game of four people: red creates it, the others join by its code
    (green and black choosing their seats, blue taking the one left)."""
    people = {side: clients(matchmaker.address, side) for side in SIDES}
    created = people["red"].CreateGame(
        mm.CreateGameRequest(game="napoleonic", options=SCENARIO, side="red", **request)
    )
    code = created.invite_code
    for side in ("green", "black"):
        view = people[side].JoinGame(mm.JoinGameRequest(invite_code=code, side=side)).game
        assert view.your_side == side and view.status == mm.GAME_STATUS_OPEN
    # The lobby lists the game with its one free seat.
    listed = people["blue"].BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_OPEN)).games
    (entry,) = [view for view in listed if view.id == created.game.id]
    assert [s.side for s in entry.seats if not s.HasField("player")] == ["blue"]
    game = people["blue"].JoinGame(mm.JoinGameRequest(invite_code=code)).game
    assert game.your_side == "blue" and game.status == mm.GAME_STATUS_RUNNING
    expect_error(
        lambda: clients(matchmaker.address, "late").JoinGame(mm.JoinGameRequest(invite_code=code)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_NOT_OPEN",
    )
    return game, people


def test_a_draw_needs_every_remaining_player(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    game, people = four_people(matchmaker, clients)
    people["red"].OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    people["black"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True))
    game = people["blue"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)).game
    assert game.status == mm.GAME_STATUS_RUNNING
    assert set(game.state.draw_accepted) == {"black", "blue"}
    # Green declines: the offer is gone, with everyone's acceptance.
    game = people["green"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=False)).game
    assert game.status == mm.GAME_STATUS_RUNNING and not game.state.draw_offer
    # A player out of the game no longer counts: green surrenders, the three others agree.
    game = people["green"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert players_out(game) == {"green"} and game.status == mm.GAME_STATUS_RUNNING
    people["blue"].OfferDraw(mm.OfferDrawRequest(game_id=game.id))
    expect_error(
        lambda: people["green"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    people["red"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True))
    game = people["black"].AnswerDraw(mm.AnswerDrawRequest(game_id=game.id, accept=True)).game
    assert game.status == mm.GAME_STATUS_FINISHED
    assert game.outcome.reason == game_pb2.OUTCOME_REASON_AGREEMENT
    assert not game.outcome.winner and not game.outcome.winners


def test_a_player_out_of_time_is_out_and_the_game_goes_on(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    game, people = four_people(matchmaker, clients, time_control=mm.TimeControl(base=seconds(1.5)))
    assert game.state.to_act == ["red"]

    # Nobody moves: red's clock runs out, red is out, the turn passes on.
    def red_out() -> mm.GameView | None:
        view: mm.GameView = people["blue"].GetGame(mm.GetGameRequest(game_id=game.id)).game
        return view if "red" in players_out(view) else None

    later: mm.GameView = wait_for(red_out)
    assert later.status == mm.GAME_STATUS_RUNNING and "red" not in later.state.to_act
    assert "timeout" in list(later.moves)
    assert later.clock.remaining["red"].ToMilliseconds() <= 0
    assert later.clock.remaining["blue"].ToMilliseconds() == 1500


def test_rated_multiplayer_game_uses_the_team_pool(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    game, people = four_people(matchmaker, clients, rated=True)
    people["black"].Resign(mm.ResignRequest(game_id=game.id))
    game = people["green"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert game.status == mm.GAME_STATUS_FINISHED and set(game.outcome.winners) == set(SOUTH)

    def settled_view() -> mm.GameView | None:
        view: mm.GameView = people["red"].GetGame(mm.GetGameRequest(game_id=game.id)).game
        return view if all(seat.HasField("rating_after") for seat in view.seats) else None

    settled = wait_for(settled_view)
    for seat in settled.seats:
        assert seat.rating_after.game == "napoleonic.multiplayer"
        moved = seat.rating_after.rating - seat.rating_before.rating
        assert (moved > 0) == (seat.side in SOUTH), seat
        assert seat.rating_after.games == 1
    board = people["red"].GetLeaderboard(mm.GetLeaderboardRequest(game="napoleonic.multiplayer"))
    assert {entry.player.display_name for entry in board.entries[:2]} == set(SOUTH)
    # The two-player ratings are untouched.
    empty = people["red"].GetLeaderboard(mm.GetLeaderboardRequest(game="napoleonic"))
    assert not empty.entries


def test_seats_are_checked(matchmaker: InProcessMatchmaker, clients: Callable[..., Client]) -> None:
    alice = clients(matchmaker.address, "alice")
    request = mm.CreateGameRequest(game="napoleonic", options=SCENARIO, side="red")
    for bots in (["purple"], ["red"], ["black", "black"]):
        bad = mm.CreateGameRequest(bot_sides=bots)
        bad.MergeFrom(request)
        details = expect_error(partial(alice.CreateGame, bad), grpc.StatusCode.INVALID_ARGUMENT)
        assert details.fields[0][0] == "bot_sides"
    rated_bot = mm.CreateGameRequest(rated=True, bot_sides=["green"])
    rated_bot.MergeFrom(request)
    expect_error(lambda: alice.CreateGame(rated_bot), grpc.StatusCode.INVALID_ARGUMENT)
    expect_error(
        lambda: alice.CreateGame(
            mm.CreateGameRequest(game="napoleonic", options={"scenario": "nowhere"})
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    # Quick match pairs two players only.
    details = expect_error(
        lambda: next(
            iter(alice.JoinQueue(mm.JoinQueueRequest(game="napoleonic", options=SCENARIO)))
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert "two players" in details.message
    # Every bot seat of a game with people: the game is open until the people come.
    created = alice.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic", options=SCENARIO, side="red", bot_sides=["black", "green"]
        )
    ).game
    assert [s.kind for s in created.seats] == [
        mm.SEAT_KIND_HUMAN,
        mm.SEAT_KIND_BOT,
        mm.SEAT_KIND_HUMAN,
        mm.SEAT_KIND_BOT,
    ]
    # A bot game: every other seat the bot's, running at once.
    vs_bots = alice.CreateGame(
        mm.CreateGameRequest(game="napoleonic", options=SCENARIO, opponent=mm.SEAT_KIND_BOT)
    ).game
    assert vs_bots.status == mm.GAME_STATUS_RUNNING
    assert sum(s.kind == mm.SEAT_KIND_BOT for s in vs_bots.seats) == 3


@pytest.mark.parametrize(
    ("scenario", "seats"), [("three_way", 3), ("divided_command", 4), ("grand_battle_2v2", 4)]
)
def test_the_bot_takes_every_other_seat_of_any_scenario(
    scenario: str,
    seats: int,
    matchmaker: InProcessMatchmaker,
    clients: Callable[..., Client],
    engine_stub: Any,
) -> None:
    alice = clients(matchmaker.address, "alice")
    game = alice.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": scenario},
            side="red",
            opponent=mm.SEAT_KIND_BOT,
            bot_level=1,
        )
    ).game
    assert len(game.seats) == seats and game.status == mm.GAME_STATUS_RUNNING
    # Red plays its turns; the bots play all theirs, allies and enemies, around it.
    rounds = 2 * seats
    game = play_turns(
        engine_stub, {"red": alice}, game.id, lambda g: g.state.napoleonic.turn_number >= rounds
    )
    assert game.status == mm.GAME_STATUS_FINISHED or game.state.napoleonic.turn_number >= rounds
    check_record(alice, engine_stub, game.id)


def dawn_array(engine: Any, state: game_pb2.GameState, side: str) -> str:
    """A legal Attack-at-Dawn array of `side`: its army on its own deployment squares."""
    board = engine.DescribeGame(
        engine_pb2.DescribeGameRequest(game=state.game, options=dict(state.options)), timeout=30
    ).board
    squares = sorted(c.name for c in board.cells if f"deployment:{side}" in c.tags)
    (army,) = [list(a.unit_types) for a in state.napoleonic.armies if a.player == side]
    return secret_array(side.encode() * 4, squares, army)


def test_three_players_deploy_in_secret_until_every_array_is_laid_out(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> None:
    red, black = clients(matchmaker.address, "red"), clients(matchmaker.address, "black")
    created = red.CreateGame(
        mm.CreateGameRequest(
            game="napoleonic",
            options={"scenario": "three_way", "deployment": "attack_at_dawn"},
            side="red",
            bot_sides=["green"],
        )
    )
    game = black.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code)).game
    assert game.your_side == "black" and set(game.state.to_act) == {"red", "black", "green"}
    arrays = {side: dawn_array(engine_stub, game.state, side) for side in ("red", "black")}
    salts = {"red": "11" * 32, "black": "22" * 32}
    for side, client in (("red", red), ("black", black)):
        submit_text(client, game.id, f"commit {arrays[side]} salt {salts[side]}")
    # The bot commits too; then red reveals first.
    wait_for(
        lambda: (
            red.GetGame(mm.GetGameRequest(game_id=game.id)).game.state.napoleonic.phase
            == nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL
        )
    )
    watcher = Watcher(black, game.id, after=game.version)
    try:
        mine = submit_text(red, game.id, f"reveal {arrays['red']} salt {salts['red']}")
        # Its author sees it (in the engine's own order of squares).
        laid = mine.notations[0].removeprefix("reveal ").partition(" salt ")[0]
        assert sorted(laid.split()) == sorted(
            f"{item.partition('=')[0]}={item.partition('=')[2][0].upper()}"
            for item in arrays["red"].split()
        )
        spectator = clients(matchmaker.address)
        for viewer in (black, spectator):
            view = viewer.GetGame(mm.GetGameRequest(game_id=game.id)).game
            assert view.state.napoleonic.phase == nap.NAPOLEONIC_PHASE_DEPLOY_REVEAL
            (shown,) = [r for r in view.state.napoleonic.deployment.reveals if r.player == "red"]
            assert shown.withheld and not shown.placements
            assert not any(laid in move for move in view.moves)
            assert laid not in str(view)
        updates = watcher.until(mine.game.version)
        assert not any(laid in str(update) for update in updates)
    finally:
        watcher.close()
    submit_text(black, game.id, f"reveal {arrays['black']} salt {salts['black']}")
    done = wait_for(
        lambda: (
            view
            if (
                view := black.GetGame(mm.GetGameRequest(game_id=game.id)).game
            ).state.napoleonic.phase
            == nap.NAPOLEONIC_PHASE_MOVEMENT
            else None
        )
    )
    assert any(laid in move for move in done.moves)  # laid out: open to all
    check_record(black, engine_stub, game.id)


def test_leaving_an_open_game_of_many_frees_the_seat(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    red, green = clients(matchmaker.address, "red"), clients(matchmaker.address, "green")
    created = red.CreateGame(mm.CreateGameRequest(game="napoleonic", options=SCENARIO, side="red"))
    green.JoinGame(mm.JoinGameRequest(invite_code=created.invite_code, side="green"))
    left = green.Resign(mm.ResignRequest(game_id=created.game.id)).game
    assert left.status == mm.GAME_STATUS_OPEN and left.your_side == ""
    (seat,) = [s for s in left.seats if s.side == "green"]
    assert not seat.HasField("player")
    # The last person to leave closes it.
    closed = red.Resign(mm.ResignRequest(game_id=created.game.id)).game
    assert closed.status == mm.GAME_STATUS_FINISHED and not closed.outcome.winner
