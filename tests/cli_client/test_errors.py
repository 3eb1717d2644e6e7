"""Every failure as one readable line, from real gRPC statuses."""

from __future__ import annotations

import grpc
import pytest

from cli_client.connection import Addresses, Connection
from cli_client.errors import ClientError, UnreachableError, describe, one_line
from wargame.runtime.status import ErrorDetails
from wargame.v1 import game_pb2

MM = "matchmaker.test:7000"  # a name only: describe() never connects


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (
            ErrorDetails(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses"),
            f"cannot reach the matchmaker at {MM} — start it with `make run`",
        ),
        (
            ErrorDetails(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the South Mortar on a1 cannot go to a5",
                "ILLEGAL_ACTION",
            ),
            "illegal: the South Mortar on a1 cannot go to a5",
        ),
        (
            ErrorDetails(grpc.StatusCode.FAILED_PRECONDITION, "north is to move", "NOT_YOUR_TURN"),
            "not your turn: north is to move",
        ),
        (
            ErrorDetails(
                grpc.StatusCode.FAILED_PRECONDITION,
                "Not your turn: north is to move",
                "NOT_YOUR_TURN",
            ),
            "Not your turn: north is to move",
        ),
        (
            ErrorDetails(grpc.StatusCode.FAILED_PRECONDITION, "south won", "GAME_OVER"),
            "the game is over: south won",
        ),
        (
            ErrorDetails(grpc.StatusCode.ABORTED, "stale", "VERSION_CONFLICT"),
            "the game moved on before your action arrived; look at the board and try again",
        ),
        (
            ErrorDetails(grpc.StatusCode.UNAVAILABLE, "engine down", "ENGINE_UNAVAILABLE"),
            "the matchmaker cannot reach the rules engine right now; try again shortly",
        ),
        (
            ErrorDetails(grpc.StatusCode.DEADLINE_EXCEEDED, ""),
            f"the matchmaker at {MM} did not answer in time; try again",
        ),
        (
            ErrorDetails(
                grpc.StatusCode.INVALID_ARGUMENT,
                "'zz' is not an action\nof this game",
                "NOTATION_INVALID",
            ),
            "not understood: 'zz' is not an action of this game",
        ),
        (
            ErrorDetails(grpc.StatusCode.NOT_FOUND, "unknown game 'chess'", "UNKNOWN_GAME"),
            "unknown game 'chess' (see `wargame games`)",
        ),
        (
            ErrorDetails(
                grpc.StatusCode.INTERNAL, "internal error (request id 7)", "INTERNAL_ERROR"
            ),
            "the matchmaker failed: internal error (request id 7)",
        ),
    ],
)
def test_describe_gives_one_line(details: ErrorDetails, expected: str) -> None:
    line = describe(details, "matchmaker", MM)
    assert line == expected
    assert "\n" not in line


def test_one_line_collapses_whitespace() -> None:
    assert one_line("a\n  b\tc  ") == "a b c"


def test_nothing_listening_is_unreachable_with_the_address(nowhere: str) -> None:
    address = nowhere
    with Connection(Addresses(engine=address, matchmaker=address)) as connection:
        with pytest.raises(UnreachableError) as caught:
            connection.list_games()
        assert (
            caught.value.message
            == f"cannot reach the rules engine at {address} — start it with `make run`"
        )
        with pytest.raises(UnreachableError) as caught:
            connection.get_game("g1")
        assert "cannot reach the matchmaker at" in caught.value.message


def test_an_illegal_action_from_the_real_engine_names_the_rule(engine_address: str) -> None:
    with Connection(Addresses(engine=engine_address)) as connection:
        state = connection.describe_game("war").initial_state
        with pytest.raises(ClientError) as caught:
            connection.parse_action(state, "zz9-zz10")
        assert caught.value.reason
        assert "\n" not in caught.value.message
        with pytest.raises(ClientError) as caught:
            connection.describe_game("chess")
        assert caught.value.message.endswith("(see `wargame games`)")
        assert isinstance(state, game_pb2.GameState)
