"""Play on running games: what a caller is told of a game that is over, not yet started or
not theirs, how a finished game leaves the lobby and is counted, and server-made actions
the engine refuses or that lose every try (ratings: `test_play_ratings.py`; clocks:
`test_play_clocks.py`; submissions: `test_play_submissions.py`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from matchmaker import keys
from matchmaker.play import require_running
from matchmaker.record import GameRecord, GameStatus, Seat
from matchmaker.server import Replica
from tests.matchmaker.conftest import Client, InProcessMatchmaker, players_of
from tests.matchmaker.helpers import (
    captured_logs,
    expect_error,
    legal_actions,
    start_game,
)
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.v1 import game_pb2
from wargame.v1 import matchmaker_pb2 as mm


def game_of(*seats: Seat) -> GameRecord:
    return dataclasses.replace(GameRecord.from_hash("g1", {}), ruleset="war", seats=list(seats))


def refusal_of(game: GameRecord) -> Refusal:
    with pytest.raises(Refusal) as refused:
        require_running(game)
    return refused.value


def test_a_game_over_is_refused_with_how_it_ended() -> None:
    ended = game_pb2.GameState(outcome=game_pb2.Outcome(winner="south", message="south wins"))
    finished = dataclasses.replace(
        game_of(), status=GameStatus.FINISHED, state_bytes=ended.SerializeToString()
    )
    refusal = refusal_of(finished)
    assert (refusal.code, refusal.reason) == (Code.FAILED_PRECONDITION, Reason.GAME_OVER)
    assert refusal.message == "game g1 is over: south wins"
    # Closed before anyone played: the reason it was closed; else merely finished.
    closed = dataclasses.replace(game_of(), status=GameStatus.FINISHED, closed="nobody joined")
    assert refusal_of(closed).message == "game g1 is over: nobody joined"
    bare = dataclasses.replace(game_of(), status=GameStatus.FINISHED)
    assert refusal_of(bare).message == "game g1 is over: finished"


def commits(kind: str) -> float:
    """How many game changes of `kind` the matchmaker counted as committed."""
    sample = REGISTRY.get_sample_value("wargame_matchmaker_commits_total", {"kind": kind})
    return sample or 0.0


def test_a_game_waiting_for_players_refuses_a_submission_by_its_id(
    war_players: dict[str, Client], engine_stub: Any
) -> None:
    south = war_players["south"]
    created = south.CreateGame(mm.CreateGameRequest(game="war", side="south")).game
    first = legal_actions(engine_stub, created.state)[0].action
    waiting = expect_error(
        lambda: south.SubmitActions(
            mm.SubmitActionsRequest(
                game_id=created.id, expected_version=created.version, actions=[first]
            )
        ),
        Code.FAILED_PRECONDITION,
        "GAME_NOT_STARTED",
    )
    assert waiting.message == f"game {created.id} is waiting for players"


def test_a_resignation_by_someone_without_a_seat_names_the_game(
    matchmaker: InProcessMatchmaker, war_players: dict[str, Client], clients: Callable[..., Client]
) -> None:
    game = start_game(war_players, "war")
    stranger = clients(matchmaker.address, "Stranger")
    refused = expect_error(
        lambda: stranger.Resign(mm.ResignRequest(game_id=game.id)),
        Code.PERMISSION_DENIED,
        "NOT_A_PLAYER",
    )
    assert refused.message == f"you hold no seat in game {game.id}"


def finished_games(reason: str) -> float:
    """How many games the matchmaker counted as finished for `reason`."""
    sample = REGISTRY.get_sample_value(
        "wargame_matchmaker_games_finished_total", {"reason": reason}
    )
    return sample or 0.0


def test_a_finished_game_is_counted_by_its_reason_and_logged_with_its_outcome(
    war_players: dict[str, Client],
) -> None:
    game = start_game(war_players, "war")
    before = finished_games("RESIGNATION")
    with captured_logs() as logs:
        ended = war_players["north"].Resign(mm.ResignRequest(game_id=game.id)).game
    assert ended.status == mm.GAME_STATUS_FINISHED and ended.outcome.message
    assert finished_games("RESIGNATION") == before + 1
    finished = [
        entry.get("outcome")
        for entry in logs
        if entry.get("event") == "game finished" and entry.get("game_id") == game.id
    ]
    assert finished == [ended.outcome.message]


def test_a_finished_game_leaves_the_lobby_frees_its_players_and_is_no_longer_due(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """A public game ends: the lobby no longer lists it among running games, its players
    may sit in another (at most one unfinished game each here), the sweeper has nothing
    left to do for it."""
    matchmaker = replica(max_open_games=1)
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")
    south = players["south"]

    def listed() -> bool:
        running = south.BrowseGames(mm.BrowseGamesRequest(status=mm.GAME_STATUS_RUNNING)).games
        return any(view.id == game.id for view in running)

    async def kept(replica: Replica) -> tuple[bool, float | None, list[bool]]:
        """Whether the lobby's running list holds the game, its due time, and whether each
        player's unfinished games count it."""
        rows = await replica.store.list_page([GameStatus.RUNNING], ["war"], 0, 50)
        due: float | None = await replica.redis.zscore(replica.store._due(game.id), game.id)
        counted = [
            await replica.redis.zscore(keys.player_games(client.player_id), game.id) is not None
            for client in players.values()
        ]
        return any(row[2] == game.id for row in rows), due, counted

    assert listed()
    assert matchmaker.call(kept)[0] and matchmaker.call(kept)[2] == [True, True]
    expect_error(
        lambda: south.CreateGame(mm.CreateGameRequest(game="war")),
        Code.RESOURCE_EXHAUSTED,
        "TOO_MANY_GAMES",
    )
    players["north"].Resign(mm.ResignRequest(game_id=game.id))
    # (The store first: browsing also drops a finished game it comes across.)
    assert matchmaker.call(kept) == (False, None, [False, False])
    assert not listed()
    for client in players.values():
        assert client.CreateGame(mm.CreateGameRequest(game="war")).game.status == (
            mm.GAME_STATUS_OPEN
        )


def test_a_server_made_action_the_engine_refuses_is_refused_not_retried(
    war_players: dict[str, Client],
) -> None:
    """North offers a draw twice: the second offer is the engine's refusal, at once, and
    the game does not change."""
    north = war_players["north"]
    game = start_game(war_players, "war")
    offered = north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)).game
    refused = expect_error(
        lambda: north.OfferDraw(mm.OfferDrawRequest(game_id=game.id)), Code.FAILED_PRECONDITION
    )
    assert refused.reason != "VERSION_CONFLICT" and "kept changing" not in refused.message
    assert north.GetGame(mm.GetGameRequest(game_id=game.id)).game.version == offered.version


def test_a_server_made_action_without_a_try_left_says_the_game_kept_changing(
    replica: Callable[..., InProcessMatchmaker], clients: Callable[..., Client]
) -> None:
    """With no optimistic retry allowed (`submit_retries` 0), a resignation is never
    committed: the caller is told to try again, and the game goes on."""
    matchmaker = replica()
    players = players_of(matchmaker.address, clients, "south", "north")
    game = start_game(players, "war")  # joining is a server-made commit too: then no retry

    async def no_retries(replica: Replica) -> None:
        replica.play.settings = dataclasses.replace(replica.play.settings, submit_retries=0)

    matchmaker.call(no_retries)
    refused = expect_error(
        lambda: players["north"].Resign(mm.ResignRequest(game_id=game.id)),
        Code.ABORTED,
        "VERSION_CONFLICT",
    )
    assert refused.message == "the game kept changing; try again"
    view = players["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert view.status == mm.GAME_STATUS_RUNNING and view.version == game.version
