"""Wrong invite codes are limited, right ones never: strangers who
empty every guess limit keep no one with a right code out of a game, and their own wrong
guesses stay refused."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import grpc

from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores
from tests.matchmaker.helpers import expect_error
from wargame.v1 import matchmaker_pb2 as mm

Code = grpc.StatusCode
WRONG = "0000-0000-0000-0000"
PLAYER_BURST = 2
GLOBAL_BURST = 12
LIMITS: dict[str, Any] = {
    "guess_player_rate": 0.001,
    "guess_player_burst": float(PLAYER_BURST),
    "guess_peer_rate": 0.001,
    "guess_peer_burst": 3.0,
    "guess_rate": 0.001,
    "guess_burst": float(GLOBAL_BURST),
    "trusted_proxies": "127.0.0.1/32",
}


def guess(client: Client, code: str, address: str) -> mm.JoinGameResponse:
    """JoinGame by `code`, from `address` (named by the trusted proxy on loopback)."""
    reply: mm.JoinGameResponse = client.stub.JoinGame(
        mm.JoinGameRequest(invite_code=code),
        metadata=(*client.metadata, ("x-forwarded-for", address)),
        timeout=10,
    )
    return reply


@both_stores
def test_strangers_who_empty_every_guess_limit_keep_no_right_code_out(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(**LIMITS)
    games = [
        clients(server.address, f"Host{n}").CreateGame(
            mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE)
        )
        for n in range(2)
    ]
    # Guessers from one IPv6 /56, each at an address of its own /64, until everyone's
    # bucket is empty (a miss is NOT_FOUND while it holds a token).
    misses = 0
    for network in range(256):
        address = f"2001:db8:0:ab{network:02x}::1"
        guesser = clients(server.address, f"G{network}")
        refused: Any = None
        while refused is None:
            try:
                guess(guesser, WRONG, address)
            except grpc.RpcError as error:
                if error.code() == Code.NOT_FOUND:
                    misses += 1
                    continue
                refused = expect_error(
                    functools.partial(guess, guesser, WRONG, address),
                    Code.RESOURCE_EXHAUSTED,
                    "RATE_LIMITED",
                )
        if "at the moment" in refused.message:
            break
    assert misses == GLOBAL_BURST
    # A player with a right code gets in at once, from a fresh address and from one of
    # the guessers' own networks.
    for game, address in zip(games, ("198.51.100.7", "2001:db8:0:ab00::2"), strict=True):
        joined = guess(clients(server.address, "Invited"), game.invite_code, address).game
        assert joined.id == game.game.id and joined.status == mm.GAME_STATUS_RUNNING
    # Wrong codes stay refused for everyone, without being looked at twice.
    details = expect_error(
        lambda: guess(clients(server.address, "Late"), WRONG, "192.0.2.9"),
        Code.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
    )
    assert "at the moment" in details.message and int(details.metadata["retry_after_ms"]) > 0


@both_stores
def test_a_player_who_mistyped_past_the_limit_gets_in_with_the_right_code(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(**LIMITS)
    created = clients(server.address, "Host").CreateGame(
        mm.CreateGameRequest(game="war", visibility=mm.VISIBILITY_PRIVATE)
    )
    player = clients(server.address, "Typist")
    for _ in range(PLAYER_BURST):
        expect_error(lambda: guess(player, WRONG, "203.0.113.5"), Code.NOT_FOUND)
    details = expect_error(
        lambda: guess(player, WRONG, "203.0.113.5"), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    assert "from you" in details.message
    joined = guess(player, created.invite_code, "203.0.113.5").game
    assert joined.status == mm.GAME_STATUS_RUNNING
