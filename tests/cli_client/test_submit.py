"""The submit/retry policy, with no terminal: real engine, matchmaker and Redis processes.

Two players talk to the matchmaker through the client's own `Connection`; the submitter
is driven directly. Each test plays a fresh game of War between them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import pytest

from cli_client.connection import Addresses, Connection
from cli_client.errors import ClientError, UnreachableError
from cli_client.lobby import open_session
from cli_client.session import GameSession
from cli_client.submit import Submitter
from tests.system.cli_support import Stack, stack
from wargame.v1 import game_pb2, matchmaker_pb2

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("cli-submit")]
__all__ = ["stack"]
T = TypeVar("T")


def player(stack: Stack, name: str) -> Connection:
    """A registered player's connection."""
    connection = Connection(Addresses(engine=stack.engine, matchmaker=stack.address))
    connection.token = connection.register(name).token
    return connection


@dataclass
class Game:
    """South (to move first) and North in a fresh game of War."""

    south: Connection
    north: Connection
    game_id: str

    def session(self, who: Connection) -> GameSession:
        """A client's session of the game as it stands."""
        return open_session(who, who.get_game(self.game_id))


@pytest.fixture
def game(stack: Stack) -> Iterator[Game]:
    south, north = player(stack, "south"), player(stack, "north")
    request = matchmaker_pb2.CreateGameRequest(
        game="war",
        side="south",
        opponent=matchmaker_pb2.SEAT_KIND_HUMAN,
        visibility=matchmaker_pb2.VISIBILITY_PRIVATE,
    )
    reply = south.create_game(request)
    north.join_game(invite_code=reply.invite_code)
    yield Game(south, north, reply.game.id)
    south.close()
    north.close()


def move(text: str) -> list[game_pb2.Action]:
    return [game_pb2.Action(side="south", notation=text)]


def test_an_action_is_applied_at_the_version_seen(game: Game) -> None:
    session = game.session(game.south)
    before = session.version
    reply = Submitter(game.south, session).submit(move("e3-e4"))
    assert reply.game.version == before + 1
    assert list(reply.notations) == ["e3-e4"]
    assert list(game.south.get_game(game.game_id).moves) == ["e3-e4"]


def test_a_conflict_over_an_unchanged_position_is_sent_again(game: Game) -> None:
    session = game.session(game.south)
    stale = session.version
    game.north.offer_draw(game.game_id)  # a new version, the same position
    caught_up: list[int] = []
    submitter = Submitter(game.south, session)

    def catch_up() -> None:
        submitter.fetch()
        caught_up.append(session.version)

    submitter.catch_up = catch_up
    reply = submitter.submit(move("e3-e4"))
    assert caught_up == [stale + 1]
    assert reply.game.version == stale + 2
    assert list(reply.game.moves) == ["offer draw", "e3-e4"]


def test_a_conflict_over_a_changed_position_is_the_players_to_see(game: Game) -> None:
    session = game.session(game.south)
    other_client = game.session(game.south)
    Submitter(game.south, other_client).submit(move("e3-e4"))  # the same player, elsewhere
    game.north.submit(
        game.game_id,
        other_client.version + 1,
        "north-reply",
        [game_pb2.Action(side="north", notation="e8-e7")],
    )
    with pytest.raises(ClientError) as refused:
        Submitter(game.south, session).submit(move("c3-c4"))
    assert refused.value.reason == "VERSION_CONFLICT"
    assert list(game.south.get_game(game.game_id).moves) == ["e3-e4", "e8-e7"]


def test_a_refusal_is_not_retried(game: Game) -> None:
    warnings: list[str] = []
    session = game.session(game.south)
    with pytest.raises(ClientError) as refused:
        Submitter(game.south, session, warn=warnings.append).submit(move("a1-a5"))
    assert "Mortar on a1 cannot go to a5" in refused.value.message
    assert warnings == []
    assert list(game.south.get_game(game.game_id).moves) == []


def test_an_unreachable_matchmaker_is_retried_until_it_answers_and_applied_once(
    stack: Stack, game: Game
) -> None:
    session = game.session(game.south)
    warned = threading.Event()
    warnings: list[str] = []

    def warn(text: str) -> None:
        warnings.append(text)
        warned.set()

    submitter = Submitter(game.south, session, warn=warn, pause=0.1)
    outcome: list[object] = []
    assert stack.matchmaker is not None
    stack.matchmaker.kill()
    sender = threading.Thread(target=lambda: outcome.append(submitter.submit(move("e3-e4"))))
    sender.start()
    try:
        assert warned.wait(20), "no warning while the matchmaker was down"
        assert warnings[0].startswith("cannot reach the matchmaker")
        assert warnings[0].endswith("; retrying…")
    finally:
        stack.start_matchmaker()
    sender.join(40)
    assert not sender.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], matchmaker_pb2.SubmitActionsResponse)
    assert list(game.south.get_game(game.game_id).moves) == ["e3-e4"]
    assert len(warnings) == 1


def test_an_unreachable_matchmaker_is_given_up_after_the_retry_time(
    stack: Stack, game: Game
) -> None:
    session = game.session(game.south)
    warnings: list[str] = []
    submitter = Submitter(game.south, session, warn=warnings.append, retry_seconds=0.5, pause=0.1)
    assert stack.matchmaker is not None
    stack.matchmaker.kill()
    try:
        with pytest.raises(ClientError) as refused:
            submitter.submit(move("e3-e4"))
    finally:
        stack.start_matchmaker()
    assert refused.value.message.startswith("cannot reach the matchmaker")
    assert len(warnings) == 1
    assert list(reachable_again(lambda: game.south.get_game(game.game_id)).moves) == []


def reachable_again(read: Callable[[], T], timeout: float = 60) -> T:
    """`read()` once the restarted matchmaker answers: the connection may still be waiting
    out gRPC's pause before it connects again after the outage (longer on a busy machine)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return read()
        except UnreachableError:
            assert time.monotonic() < deadline, "the matchmaker did not come back"
            time.sleep(0.1)
