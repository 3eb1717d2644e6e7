"""Both services over TLS, as real processes: a game played through a matchmaker that serves
TLS and calls an engine that requires mutual TLS; plaintext refused by both; a client
without a certificate refused by the engine; the plaintext health ports; plaintext beyond
loopback refused at start; and the matchmaker's engine client taking up renewed files.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.matchmaker.helpers import submit_text, wait_for
from tests.servers import ROOT, RedisServer, free_port, matchmaker_key_env
from tests.system.cli_support import FAST_MATCHMAKER, WAIT_S, WAR_CITADEL
from tests.tls_support import (
    Authority,
    Issued,
    TlsService,
    start_tls_service,
    tls_channel,
    tls_services,
)
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, matchmaker_pb2_grpc
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("tls-services")]

ENGINE_SERVICE = "wargame.v1.RulesEngine"
MATCHMAKER_SERVICE = "wargame.v1.Matchmaker"


@dataclass
class Secured:
    """A CA, an engine requiring mutual TLS, and a matchmaker serving TLS that calls it."""

    folder: Path
    ca: Authority
    engine: TlsService
    matchmaker: TlsService
    matchmaker_cert: Issued  # what it serves with and presents to the engine
    redis: RedisServer


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory, seal_key_file: Path) -> Iterator[Secured]:
    with tls_services(tmp_path_factory.mktemp("tls-services")) as tls:
        # Two workers: the TLS flags and the health port reach every worker process.
        engine = tls.start_engine(
            seal_key_file, "--tls-client-ca-file", str(tls.ca.ca_file), workers=2
        )
        # The matchmaker's TLS comes from its variables (the engine's from flags).
        cert = tls.matchmaker_cert
        matchmaker = tls.start(
            "matchmaker.main",
            ["--redis-url", tls.redis.url, "--engine", engine.address, *FAST_MATCHMAKER],
            MATCHMAKER_SERVICE,
            env={
                "WARGAME_MATCHMAKER_TLS_CERT_FILE": str(cert.cert_file),
                "WARGAME_MATCHMAKER_TLS_KEY_FILE": str(cert.key_file),
                "WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE": str(tls.ca.ca_file),
                "WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE": str(cert.cert_file),
                "WARGAME_MATCHMAKER_ENGINE_TLS_KEY_FILE": str(cert.key_file),
            },
        )
        yield Secured(tls.folder, tls.ca, engine, matchmaker, cert, tls.redis)


class Player:
    """A registered player reaching the matchmaker over TLS."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        reply = self.stub.RegisterPlayer(mm.RegisterPlayerRequest(display_name="tls"), timeout=10)
        self.token = reply.token

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.stub, name)

        def call(request: Any, timeout: float = 30) -> Any:
            metadata = (("authorization", f"Bearer {self.token}"),)
            return method(request, metadata=metadata, timeout=timeout)

        return call


def test_a_game_over_tls_through_a_matchmaker_calling_the_engine_over_mutual_tls(
    secured: Secured,
) -> None:
    # Every step needs the engine (the new game, the move, the bot's reply, the ending),
    # which lets in only clients with a certificate from the CA: the matchmaker's.
    player = Player(tls_channel(secured.matchmaker.address, secured.ca))
    created = player.CreateGame(
        mm.CreateGameRequest(game="war", side="south", opponent=mm.SEAT_KIND_BOT, setup=WAR_CITADEL)
    ).game
    submit_text(player, created.id, "Mj1xj10")
    # The bot's search runs at low priority: on a machine busy with other test runs it may
    # be turned away as busy and think again later (the bound is the CLI tests' WAIT_S).
    finished = wait_for(
        lambda: (
            (g := player.GetGame(mm.GetGameRequest(game_id=created.id)).game).status
            == mm.GAME_STATUS_FINISHED
            and g
        ),
        timeout=WAIT_S,
    )
    assert finished.outcome.winner == "south"
    assert finished.moves[0] == "Mj1xj10" and len(finished.moves) == 2  # the bot answered
    player.channel.close()
    started = secured.matchmaker.log()
    assert '"tls": "tls"' in started and '"engine_tls": "mutual"' in started
    assert '"tls": "mutual"' in secured.engine.log()
    assert player.token not in started + secured.engine.log()


def test_both_servers_refuse_plaintext_before_reading_a_request(secured: Secured) -> None:
    # A token sent in plaintext to a TLS port is never read: the server closes the
    # connection at its first bytes, before any HTTP/2 frame (headers included).
    player = Player(tls_channel(secured.matchmaker.address, secured.ca))
    for address in (secured.matchmaker.address, secured.engine.address):
        with grpc.insecure_channel(address) as plain:
            stub = matchmaker_pb2_grpc.MatchmakerStub(plain)
            with pytest.raises(grpc.RpcError) as refused:
                stub.GetPlayer(
                    mm.GetPlayerRequest(),
                    metadata=(("authorization", f"Bearer {player.token}"),),
                    timeout=5,
                )
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "Socket closed" in str(refused.value.details())
    player.channel.close()


def test_the_engine_lets_in_only_clients_with_a_certificate_from_its_ca(
    secured: Secured,
) -> None:
    request = engine_pb2.ListGamesRequest()
    anonymous = tls_channel(secured.engine.address, secured.ca)
    with anonymous, pytest.raises(grpc.RpcError) as refused:
        engine_pb2_grpc.RulesEngineStub(anonymous).ListGames(request, timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    stranger = Authority.create(secured.folder / "stranger", "stranger")
    foreign = stranger.issue("foreign", [], server=False, client=True)
    strange = tls_channel(secured.engine.address, secured.ca, foreign)
    with strange, pytest.raises(grpc.RpcError):
        engine_pb2_grpc.RulesEngineStub(strange).ListGames(request, timeout=5)
    with tls_channel(secured.engine.address, secured.ca, secured.matchmaker_cert) as channel:
        games = engine_pb2_grpc.RulesEngineStub(channel).ListGames(request, timeout=5).games
    assert {game.id for game in games} == {"war", "battle", "napoleonic"}


def test_the_health_ports_answer_in_plaintext_and_serve_nothing_else(secured: Secured) -> None:
    for service, name in (
        (secured.engine, ENGINE_SERVICE),
        (secured.matchmaker, MATCHMAKER_SERVICE),
    ):
        with grpc.insecure_channel(service.health_address) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=name), timeout=5
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            with pytest.raises(grpc.RpcError) as missing:
                matchmaker_pb2_grpc.MatchmakerStub(channel).RegisterPlayer(
                    mm.RegisterPlayerRequest(display_name="x"), timeout=5
                )
            assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_matchmaker_without_its_client_certificate_cannot_use_the_engine(
    secured: Secured,
) -> None:
    matchmaker = start_tls_service(
        "matchmaker.main",
        ["--redis-url", secured.redis.url, "--engine", secured.engine.address, *FAST_MATCHMAKER,
         "--tls-cert-file", str(secured.matchmaker_cert.cert_file),
         "--tls-key-file", str(secured.matchmaker_cert.key_file),
         "--engine-tls-ca-file", str(secured.ca.ca_file), "--engine-retries", "1"],
        log_path=secured.folder / "anonymous-matchmaker.log",
        service=MATCHMAKER_SERVICE,
    )  # fmt: skip
    try:
        player = Player(tls_channel(matchmaker.address, secured.ca))
        with pytest.raises(grpc.RpcError) as refused:
            player.CreateGame(mm.CreateGameRequest(game="war", opponent=mm.SEAT_KIND_BOT))
        details = error_details(refused.value)
        assert (details.code, details.reason) == (grpc.StatusCode.UNAVAILABLE, "ENGINE_UNAVAILABLE")
        player.channel.close()
    finally:
        matchmaker.stop()


# --- plaintext beyond loopback -----------------------------------------------------------


def _start(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, "serve", *args],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


@pytest.mark.parametrize("module", ["engine_service.main", "matchmaker.main"])
def test_plaintext_beyond_loopback_is_refused_at_start(module: str, tmp_path: Path) -> None:
    listen = f"0.0.0.0:{free_port()}"
    done = _start(
        module, "--listen", listen, "--metrics-listen", "off", env=matchmaker_key_env(tmp_path)
    )
    assert done.returncode == 2
    prog = "wargame-engine" if module.startswith("engine") else "wargame-matchmaker"
    service = "engine" if module.startswith("engine") else "matchmaker"
    assert done.stderr.splitlines() == [
        f"{prog}: error: the {service} would serve plaintext gRPC on {listen}, beyond this "
        "machine: anyone on the network could read tokens and hidden deployments. Give "
        "--tls-cert-file and --tls-key-file, or --insecure where something else encrypts "
        "(a TLS gateway, a private network)"
    ]


def test_a_matchmaker_refuses_to_call_a_distant_engine_in_plaintext(
    tmp_path: Path, nowhere: str
) -> None:
    done = _start(
        "matchmaker.main", "--listen", nowhere, "--engine", "dns:///engine.invalid:1",
        env=matchmaker_key_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(
        "wargame-matchmaker: error: the matchmaker would call the engine in plaintext gRPC on "
        "dns:///engine.invalid:1, beyond this machine"
    )
    assert "--engine-tls" in done.stderr and "--insecure" in done.stderr


# --- the engine client takes up renewed files --------------------------------------------


def test_the_matchmakers_engine_client_takes_up_a_renewed_client_certificate(
    secured: Secured, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The files first hold a certificate from a CA the engine does not trust; once they are
    # renewed with one it trusts, the client's next calls use new channels that get in.
    import matchmaker.engine
    from matchmaker.engine import Engine
    from matchmaker.settings import Settings
    from wargame.runtime.tls import ClientTLS

    monkeypatch.setattr(matchmaker.engine, "TLS_LOOK_INTERVAL", 0.0)
    stranger = Authority.create(tmp_path, "stranger").issue("old", [], server=False, client=True)
    cert, key = tmp_path / "client.crt", tmp_path / "client.key"
    shutil.copy(stranger.cert_file, cert)
    shutil.copy(stranger.key_file, key)
    tls = ClientTLS(str(secured.ca.ca_file), str(cert), str(key))
    settings = Settings(engine_tls=tls, engine_retries=1, engine_timeout=5, bot_max_time=0.1)

    async def scenario() -> None:
        engine = Engine(secured.engine.address, settings)
        try:
            with pytest.raises(Exception) as refused:
                await engine.games()
            assert "engine cannot be reached" in str(refused.value)
            shutil.copy(secured.matchmaker_cert.key_file, tmp_path / "new.key")
            shutil.copy(secured.matchmaker_cert.cert_file, tmp_path / "new.crt")
            (tmp_path / "new.crt").replace(cert)
            (tmp_path / "new.key").replace(key)
            assert set(await engine.games()) == {"war", "battle", "napoleonic"}
        finally:
            await engine.close()

    asyncio.run(scenario())
