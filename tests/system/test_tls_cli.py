"""The `wargame` client over TLS: a game against the bot in a real terminal with both services
serving TLS (`WARGAME_TLS` and a private CA), `grpcs://` addresses, and one readable line
for each way TLS can fail (an untrusted, expired or misnamed certificate, a plaintext client
at a TLS server, a TLS client at a plaintext one).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.servers import RedisServer, ServiceProcess, free_port
from tests.system.cli_support import FAST_MATCHMAKER, WAR_CITADEL, WARGAME, Cli, run
from tests.tls_support import Authority, TlsService, tls_services
from wargame.runtime.serving import create_server
from wargame.runtime.tls import ServerTLS

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("tls-cli")]


@dataclass
class TlsStack:
    """An engine and a matchmaker serving TLS with certificates from `ca`."""

    folder: Path
    ca: Authority
    engine: TlsService
    matchmaker: TlsService
    redis: RedisServer

    def env(self) -> dict[str, str]:
        """A player's environment: both services over TLS, trusting the stack's CA."""
        return {
            "WARGAME_ENGINE": self.engine.address,
            "WARGAME_MATCHMAKER": self.matchmaker.address,
            "WARGAME_TLS": "1",
            "WARGAME_TLS_CA_FILE": str(self.ca.ca_file),
        }


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory, seal_key_file: Path) -> Iterator[TlsStack]:
    with tls_services(tmp_path_factory.mktemp("tls-cli")) as tls:
        engine = tls.start_engine(seal_key_file)
        matchmaker = tls.start(
            "matchmaker.main",
            ["--redis-url", tls.redis.url, "--engine", engine.address, *FAST_MATCHMAKER,
             "--tls-cert-file", str(tls.matchmaker_cert.cert_file),
             "--tls-key-file", str(tls.matchmaker_cert.key_file),
             "--engine-tls-ca-file", str(tls.ca.ca_file)],
            "wargame.v1.Matchmaker",
        )  # fmt: skip
        yield TlsStack(tls.folder, tls.ca, engine, matchmaker, tls.redis)


def test_a_game_against_the_bot_over_tls(
    tls_stack: TlsStack, clients: list[Cli], tmp_path: Path
) -> None:
    args = ["play", "war", "--vs", "bot", "--side", "south", "--setup", WAR_CITADEL]
    cli = run(clients, args, tmp_path, None, env=tls_stack.env())
    cli.expect_text("Registered as")
    cli.expect(r"South > ")
    cli.send("moves j1")  # the engine, directly over TLS
    cli.expect_text("Mj1-j9")
    cli.send("Mj1xj10")  # the matchmaker, which asks the engine over TLS
    cli.expect_text("You: Mj1xj10")
    cli.expect(r"North: a7-a[56]")
    cli.expect_text("Game over: you win")
    cli.quit_after_the_game()


def _wargame(*args: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [WARGAME, *args],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "WARGAME_HOME": str(home), **env},
    )  # fmt: skip


def test_grpcs_addresses_reach_each_service_over_tls(tls_stack: TlsStack, tmp_path: Path) -> None:
    # No --tls: the scheme says it, per service; the CA file comes from the flag.
    engine = f"grpcs://{tls_stack.engine.address}"
    matchmaker = f"grpcs://{tls_stack.matchmaker.address}"
    ca = ["--tls-ca-file", str(tls_stack.ca.ca_file)]
    games = _wargame("games", "--engine", engine, *ca, env={}, home=tmp_path)
    assert games.returncode == 0, games.stderr
    assert "The Game of War" in games.stdout
    board = _wargame("leaderboard", "war", "--matchmaker", matchmaker, *ca, env={}, home=tmp_path)
    assert board.returncode == 0, board.stderr
    # Registers (over TLS), then finds no such game.
    record = _wargame(
        "record", "nosuchgame", "--matchmaker", matchmaker, *ca, env={}, home=tmp_path
    )
    assert record.returncode == 1 and "Registered as" in record.stdout, record
    # The player is kept under the matchmaker's address, with or without grpcs:// or --tls.
    identity = (tmp_path / "identity.json").read_text()
    assert tls_stack.matchmaker.address in identity and "grpcs" not in identity
    again = _wargame(
        "record", "gone", "--matchmaker", tls_stack.matchmaker.address, "--tls", *ca,
        env={}, home=tmp_path,
    )  # fmt: skip
    assert again.returncode == 1 and "Registered" not in again.stdout, again


def test_tls_failures_are_one_readable_line(
    tls_stack: TlsStack, tmp_path: Path, engine_process: ServiceProcess
) -> None:
    engine = tls_stack.engine.address
    cases = [
        # The system's CA certificates do not include a test CA.
        (["--engine", engine, "--tls"],
         f"cannot trust the certificate of the rules engine at {engine} (unable to get local "
         "issuer certificate); for a private CA, give its certificate with --tls-ca-file"),
        (["--engine", engine, "--tls-ca-file", str(tls_stack.ca.ca_file),
          "--tls-server-name", "elsewhere.example"],
         f"the certificate of the rules engine at {engine} is for another name: connect by the "
         "name it carries, or give that name with --tls-server-name"),
        (["--engine", engine],
         f"the rules engine at {engine} closed the connection at once: it may speak TLS only "
         "(use --tls) or want a client certificate"),
        (["--engine", f"grpcs://{engine_process.address}"],
         f"the rules engine at {engine_process.address} does not speak TLS as asked: try "
         "--plaintext (and no grpcs://)"),
        (["--engine", engine, "--tls-ca-file", str(tmp_path / "missing.crt")],
         f"cannot read the TLS CA file {tmp_path / 'missing.crt'}: No such file or directory"),
    ]  # fmt: skip
    for args, line in cases:
        done = _wargame("games", *args, env={"WARGAME_TLS": "0"}, home=tmp_path)
        assert done.returncode == 1, done
        assert done.stderr.splitlines() == [f"wargame: error: {line}"]


def test_an_expired_certificate_is_one_readable_line(tls_stack: TlsStack, tmp_path: Path) -> None:
    expired = tls_stack.ca.issue("expired", expired=True)
    serving = create_server(
        f"127.0.0.1:{free_port()}",
        lambda server: None,
        [],
        tls=ServerTLS(str(expired.cert_file), str(expired.key_file)),
    )
    serving.start()
    try:
        address = f"127.0.0.1:{serving.port}"
        done = _wargame(
            "games", "--engine", address, "--tls-ca-file", str(tls_stack.ca.ca_file),
            env={}, home=tmp_path,
        )  # fmt: skip
    finally:
        serving.stop(grace=0)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"wargame: error: cannot trust the certificate of the rules engine at {address} "
        "(certificate has expired); for a private CA, give its certificate with --tls-ca-file"
    ]
