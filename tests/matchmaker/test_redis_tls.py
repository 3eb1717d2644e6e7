"""A managed Redis: TLS with a password, reached by `rediss://:password@host:port/0` alone.

The test makes a throwaway certificate authority and a server certificate for 127.0.0.1,
and runs redis-server with TLS only (no plaintext port) and a password; the matchmaker is
configured by the URL and nothing else (the CA file goes in the URL's query, as any
redis-py option may).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from matchmaker import keys
from tests.matchmaker.conftest import Client, InProcessMatchmaker, fast_settings
from tests.matchmaker.helpers import Watcher, play_moves, seconds, start_game
from tests.servers import ROOT, free_port, matchmaker_key_env, start_redis
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration

PASSWORD = "tls-test-Pa55word"


def certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name | None, signer: Any
) -> x509.Certificate:
    """A certificate for `subject` (a CA when it signs itself, else a server on 127.0.0.1)."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
    else:
        address = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
        builder = builder.add_extension(x509.SubjectAlternativeName([address]), False)
    return builder.sign(signer, hashes.SHA256())


def write_pem(path: Path, item: Any) -> Path:
    if isinstance(item, x509.Certificate):
        path.write_bytes(item.public_bytes(serialization.Encoding.PEM))
    else:
        path.write_bytes(
            item.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    return path


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """redis-server with TLS only and a password: (its port, the CA certificate file)."""
    folder = tmp_path_factory.mktemp("redis-tls")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("wargame test CA", ca_key, None, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate("127.0.0.1", server_key, ca.subject, ca_key)
    ca_file = write_pem(folder / "ca.pem", ca)
    redis = start_redis(
        folder / "data",
        extra=(
            "--tls-cert-file", str(write_pem(folder / "server.pem", server)),
            "--tls-key-file", str(write_pem(folder / "server.key", server_key)),
            "--tls-ca-cert-file", str(ca_file),
            "--tls-auth-clients", "no",
            "--requirepass", PASSWORD,
        ),
        tls=True,
    )  # fmt: skip
    yield redis.port, ca_file
    redis.stop()


def tls_url(port: int, ca_file: Path, password: str = PASSWORD) -> str:
    return f"rediss://:{password}@127.0.0.1:{port}/0?ssl_ca_certs={ca_file}"


@pytest.fixture
def managed(
    tls_redis: tuple[int, Path], engine_address: str
) -> Iterator[tuple[InProcessMatchmaker, str]]:
    url = tls_url(*tls_redis)
    server = InProcessMatchmaker(fast_settings(url, engine_address)).start()
    yield server, url
    server.stop()


def test_every_feature_runs_on_a_managed_redis_with_tls_and_a_password(
    managed: tuple[InProcessMatchmaker, str],
    engine_stub: Any,
    clients: Callable[..., Client],
) -> None:
    server, url = managed
    players = {"south": clients(server.address, "S"), "north": clients(server.address, "N")}
    game = start_game(players, "war", rated=True)
    watcher = Watcher(clients(server.address), game.id)
    game = play_moves(engine_stub, players, game.id, 6, random.Random(3))
    players["north"].Resign(mm.ResignRequest(game_id=game.id))
    seen = watcher.until(game.version + 1)
    assert [m.version for m in seen] == list(range(1, game.version + 2))
    board = players["south"].GetLeaderboard(mm.GetLeaderboardRequest(game="war")).entries
    assert [entry.player.display_name for entry in board] == ["S", "N"]
    # The sweeper (bot moves) and quick match run over TLS too.
    human = clients(server.address, "H")
    bot_game = human.CreateGame(
        mm.CreateGameRequest(
            game="war", side="north", opponent=mm.SEAT_KIND_BOT, bot_time=seconds(0.05)
        )
    ).game
    moved = Watcher(human, bot_game.id).until(bot_game.version + 1)[-1]
    assert moved.side == "south"
    # The sessions really are in the TLS Redis.
    client = redis.Redis.from_url(url)
    assert client.exists(keys.game(game.id), keys.game(bot_game.id)) == 2
    client.close()


def launch(url: str, folder: Path) -> subprocess.CompletedProcess[str]:
    flags = ["--listen", f"127.0.0.1:{free_port()}", "--metrics-listen", "off", "--redis-url", url]
    return subprocess.run(
        [sys.executable, "-m", "matchmaker.main", "serve", *flags],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
        env={**os.environ, **matchmaker_key_env(folder)},
    )


def test_a_wrong_password_or_no_tls_stops_start_up_in_one_line_without_the_password(
    tls_redis: tuple[int, Path],
) -> None:
    port, ca_file = tls_redis
    wrong = launch(tls_url(port, ca_file, password="not-the-Pa55word"), ca_file.parent)
    assert wrong.returncode != 0
    (line,) = wrong.stderr.strip().splitlines()
    assert "cannot use Redis" in line and "not-the-Pa55word" not in line, line
    plain = launch(f"redis://:{PASSWORD}@127.0.0.1:{port}/0", ca_file.parent)
    assert plain.returncode != 0
    (line,) = plain.stderr.strip().splitlines()
    assert "cannot use Redis" in line and PASSWORD not in line, line
