"""Players and tokens through the real gRPC service: every call and every refusal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores
from tests.matchmaker.helpers import expect_error
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode


@both_stores
def test_register_then_get_self_and_by_id(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], ada: Client
) -> None:
    assert ada.token.startswith(ada.player_id + ".")
    me = ada.GetPlayer(mm.GetPlayerRequest()).player
    assert (me.id, me.display_name, me.bot) == (ada.player_id, "Ada", False)
    anonymous = clients(matchmaker.address)
    assert (
        anonymous.GetPlayer(mm.GetPlayerRequest(player_id=ada.player_id)).player.display_name
        == "Ada"
    )
    bot = anonymous.GetPlayer(mm.GetPlayerRequest(player_id="bot")).player
    assert bot.bot


def test_player_refusals(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], ada: Client
) -> None:
    anonymous = clients(matchmaker.address)
    expect_error(
        lambda: anonymous.RegisterPlayer(mm.RegisterPlayerRequest(display_name=" ")),
        Code.INVALID_ARGUMENT,
        "MISSING_FIELD",
    )
    expect_error(
        lambda: anonymous.RegisterPlayer(mm.RegisterPlayerRequest(display_name="x" * 40)),
        Code.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
    )
    expect_error(
        lambda: anonymous.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_MISSING"
    )
    expect_error(
        lambda: anonymous.GetPlayer(mm.GetPlayerRequest(player_id="pnobody")),
        Code.NOT_FOUND,
        "PLAYER_NOT_FOUND",
    )
    forged = Client(matchmaker.address, token="pnobody." + "x" * 43)
    expect_error(
        lambda: forged.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_INVALID"
    )
    forged.close()
    wrong_scheme = ada.stub.GetPlayer
    expect_error(
        lambda: wrong_scheme(mm.GetPlayerRequest(), metadata=(("authorization", ada.token),)),
        Code.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )


def test_tokens_for_other_devices_and_revoking(
    matchmaker: InProcessMatchmaker, ada: Client
) -> None:
    second = ada.CreateToken(mm.CreateTokenRequest())
    phone = Client(matchmaker.address, token=second.token)
    assert phone.GetPlayer(mm.GetPlayerRequest()).player.id == ada.player_id
    ada.RevokeToken(mm.RevokeTokenRequest(token_id=second.token_id))
    expect_error(
        lambda: phone.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_INVALID"
    )
    expect_error(
        lambda: ada.RevokeToken(mm.RevokeTokenRequest(token_id="tnotmine")), Code.NOT_FOUND
    )
    ada.RevokeToken(mm.RevokeTokenRequest())
    expect_error(
        lambda: ada.GetPlayer(mm.GetPlayerRequest()), Code.UNAUTHENTICATED, "TOKEN_INVALID"
    )
    phone.close()


def test_rate_limit_per_player(
    replica: Callable[..., InProcessMatchmaker],
    clients: Callable[..., Client],
) -> None:
    server = replica(rate_limit=1.0, rate_burst=3.0)
    ada = clients(server.address, "Ada")
    bob = clients(server.address, "Bob")
    for _ in range(3):
        ada.GetPlayer(mm.GetPlayerRequest())
    details = expect_error(
        lambda: ada.GetPlayer(mm.GetPlayerRequest()), Code.RESOURCE_EXHAUSTED, "RATE_LIMITED"
    )
    assert 0 < int(details.metadata["retry_after_ms"]) <= 1000
    assert details.retry_after is not None and 0 < details.retry_after <= 1
    bob.GetPlayer(mm.GetPlayerRequest())  # limits are per player


def test_echo_returns_its_payload(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    anonymous: Any = clients(matchmaker.address)
    assert anonymous.Echo(mm.EchoRequest(payload=b"\x00" * 1000)).payload == b"\x00" * 1000


def test_undecodable_request_bytes_are_invalid_argument(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client]
) -> None:
    anonymous = clients(matchmaker.address)
    raw = anonymous.channel.unary_unary(
        "/wargame.v1.Matchmaker/GetGame", request_serializer=None, response_deserializer=None
    )
    details = expect_error(
        lambda: raw(b"\xff\xff\xff", timeout=10), Code.INVALID_ARGUMENT, "MALFORMED_REQUEST"
    )
    assert "GetGameRequest" in details.message
