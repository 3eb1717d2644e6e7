"""Transport security (wargame/runtime/tls.py, serving.py): who may speak plaintext, what a
TLS server accepts and refuses, mutual TLS, renewed certificates, the plaintext health
port, and one clear line for every bad file. Real gRPC servers on loopback, certificates
from a throwaway CA."""

from __future__ import annotations

import argparse
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.servers import free_port, stopping
from tests.tls_support import Authority, Issued, tls_channel
from wargame.runtime.config import ConfigError
from wargame.runtime.serving import Serving, create_server
from wargame.runtime.tls import (
    ClientTLS,
    ServerTLS,
    check_plaintext,
    is_loopback,
    server_tls,
    target_hosts,
)

pytestmark = pytest.mark.integration


# --- where plaintext is fine -------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "hosts"),
    [
        ("127.0.0.1:5000", ["127.0.0.1"]),
        ("[::1]:5000", ["::1"]),
        ("localhost:5000", ["localhost"]),
        (":5000", ["0.0.0.0"]),
        ("dns:///wargame-engine:5000", ["wargame-engine"]),
        ("dns://10.0.0.2:53/wargame-engine:5000", ["wargame-engine"]),
        ("ipv4:127.0.0.1:5000,10.1.2.3:5000", ["127.0.0.1", "10.1.2.3"]),
        ("unix:/run/engine.sock", ["localhost"]),
        ("engine.example", ["engine.example"]),
    ],
)
def test_the_hosts_a_target_names(target: str, hosts: list[str]) -> None:
    assert target_hosts(target) == hosts


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("engine.localhost", True), ("0.0.0.0", False), ("::", False),
     ("10.0.0.1", False), ("wargame-engine", False), ("localhost.example", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("address", ["127.0.0.1:1", "localhost:1", "[::1]:1", "unix:/x.sock"])
def test_plaintext_needs_nothing_on_loopback(address: str) -> None:
    check_plaintext("the engine would serve", address, insecure=False, remedy="TLS")


@pytest.mark.parametrize(
    "address", ["0.0.0.0:1", "10.0.0.5:1", "dns:///wargame-engine:1", "ipv4:127.0.0.1:1,10.0.0.1:1"]
)
def test_plaintext_beyond_loopback_is_refused_unless_insecure(address: str) -> None:
    with pytest.raises(ConfigError) as refused:
        check_plaintext("the engine would serve", address, insecure=False, remedy="--tls-x")
    message = str(refused.value)
    assert message.startswith(f"the engine would serve plaintext gRPC on {address}, beyond")
    assert "--tls-x" in message and "--insecure" in message
    check_plaintext("the engine would serve", address, insecure=True, remedy="--tls-x")


def test_the_insecure_switch_reads_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine_service.main import build_parser

    monkeypatch.setenv("WARGAME_ENGINE_INSECURE", "1")
    assert build_parser().parse_args(["serve"]).insecure is True
    monkeypatch.setenv("WARGAME_ENGINE_INSECURE", "off")
    assert build_parser().parse_args(["serve"]).insecure is False
    assert build_parser().parse_args(["serve", "--insecure"]).insecure is True
    monkeypatch.setenv("WARGAME_ENGINE_INSECURE", "maybe")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve"])


# --- certificates ------------------------------------------------------------------------


@dataclass
class Pki:
    """Two CAs and what they signed."""

    ca: Authority
    stranger: Authority  # a CA nobody here trusts
    server: Issued  # localhost, 127.0.0.1
    expired: Issued
    elsewhere: Issued  # for another host name only
    client: Issued  # a client certificate of `ca`
    server_only: Issued  # of `ca`, but not for clients (no clientAuth usage)
    stranger_client: Issued


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = Authority.create(folder, "test")
    stranger = Authority.create(folder, "stranger")
    return Pki(
        ca=ca,
        stranger=stranger,
        server=ca.issue("server"),
        expired=ca.issue("expired", expired=True),
        elsewhere=ca.issue("elsewhere", ["elsewhere.example"]),
        client=ca.issue("client", [], server=False, client=True),
        server_only=ca.issue("server-only"),
        stranger_client=stranger.issue("stranger-client", [], server=False, client=True),
    )


def _serve(tls: ServerTLS | None, health: bool = False) -> Serving:
    serving = create_server(
        f"127.0.0.1:{free_port()}",
        lambda server: None,  # the health service is enough to talk TLS with
        [],
        tls=tls,
        health_address=f"127.0.0.1:{free_port()}" if health else None,
    )
    serving.start()
    return serving


@pytest.fixture
def served() -> Iterator[list[Serving]]:
    def stop_now(serving: Serving) -> None:
        serving.stop(grace=0)

    with stopping(stop_now) as started:
        yield started


def _server(served: list[Serving], issued: Issued, client_ca: Authority | None = None) -> str:
    tls = ServerTLS(
        str(issued.cert_file), str(issued.key_file), str(client_ca.ca_file) if client_ca else ""
    )
    serving = _serve(tls)
    served.append(serving)
    return f"127.0.0.1:{serving.port}"


def _check(channel: grpc.Channel) -> grpc.StatusCode:
    """The status of one health check over `channel` (OK when served)."""
    with channel:
        try:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.RpcError as error:
            return error.code()
    return grpc.StatusCode.OK


def _details(channel: grpc.Channel) -> str:
    with channel, pytest.raises(grpc.RpcError) as failed:
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    return str(failed.value.details())


def test_a_client_trusting_the_ca_is_served(pki: Pki, served: list[Serving]) -> None:
    address = _server(served, pki.server)
    assert _check(tls_channel(address, pki.ca)) == grpc.StatusCode.OK
    assert _check(tls_channel(f"localhost:{address.rpartition(':')[2]}", pki.ca)) == (
        grpc.StatusCode.OK
    )


def test_a_tls_server_refuses_plaintext_so_no_token_crosses_in_clear(
    pki: Pki, served: list[Serving]
) -> None:
    # A plaintext client's first bytes (with the bearer token in its headers) are refused:
    # the connection is closed before any HTTP/2 frame is read.
    address = _server(served, pki.server)
    with grpc.insecure_channel(address) as plain, pytest.raises(grpc.RpcError) as refused:
        health_pb2_grpc.HealthStub(plain).Check(
            health_pb2.HealthCheckRequest(),
            metadata=(("authorization", "Bearer p0123456789abcdef.secret"),),
            timeout=5,
        )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "Socket closed" in str(refused.value.details())


def test_a_client_without_the_ca_is_refused(pki: Pki, served: list[Serving]) -> None:
    address = _server(served, pki.server)
    with grpc.secure_channel(address, grpc.ssl_channel_credentials()) as system_roots:
        assert "CERTIFICATE_VERIFY_FAILED" in _details(system_roots)
    assert _check(tls_channel(address, pki.stranger)) == grpc.StatusCode.UNAVAILABLE


def test_an_expired_certificate_is_refused(pki: Pki, served: list[Serving]) -> None:
    address = _server(served, pki.expired)
    assert "certificate has expired" in _details(tls_channel(address, pki.ca))


def test_a_certificate_for_another_host_is_refused_unless_that_name_is_given(
    pki: Pki, served: list[Serving]
) -> None:
    address = _server(served, pki.elsewhere)
    assert "Hostname Verification Check failed" in _details(tls_channel(address, pki.ca))
    named = tls_channel(address, pki.ca, server_name="elsewhere.example")
    assert _check(named) == grpc.StatusCode.OK
    other = tls_channel(address, pki.ca, server_name="other.example")
    assert _check(other) == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_lets_in_only_clients_with_a_certificate_from_its_ca(
    pki: Pki, served: list[Serving]
) -> None:
    address = _server(served, pki.server, client_ca=pki.ca)
    assert _check(tls_channel(address, pki.ca)) == grpc.StatusCode.UNAVAILABLE  # no certificate
    stranger = tls_channel(address, pki.ca, pki.stranger_client)
    assert _check(stranger) == grpc.StatusCode.UNAVAILABLE  # another CA's
    not_for_clients = tls_channel(address, pki.ca, pki.server_only)
    assert _check(not_for_clients) == grpc.StatusCode.UNAVAILABLE  # not a client certificate
    assert _check(tls_channel(address, pki.ca, pki.client)) == grpc.StatusCode.OK


def test_the_health_port_speaks_plaintext_and_serves_only_health(
    pki: Pki, served: list[Serving]
) -> None:
    tls = ServerTLS(str(pki.server.cert_file), str(pki.server.key_file))
    serving = _serve(tls, health=True)
    served.append(serving)
    health = f"127.0.0.1:{serving.health_port}"
    assert _check(grpc.insecure_channel(health)) == grpc.StatusCode.OK
    assert _check(grpc.insecure_channel(f"127.0.0.1:{serving.port}")) != grpc.StatusCode.OK
    with grpc.insecure_channel(health) as channel:
        reflect = channel.unary_unary("/grpc.reflection.v1alpha.ServerReflection/Nothing")
        with pytest.raises(grpc.RpcError) as missing:
            reflect(b"", timeout=5)
    assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED


def _server_on_copies(pki: Pki, served: list[Serving], folder: Path) -> tuple[str, Path, Path]:
    """A server on copies of the server certificate and key in `folder`, as a mounted
    Secret's: its address, and the two files to change under it."""
    cert, key = folder / "tls.crt", folder / "tls.key"
    shutil.copy(pki.server.cert_file, cert)
    shutil.copy(pki.server.key_file, key)
    return _server(served, Issued(cert, key)), cert, key


def test_a_renewed_certificate_is_served_from_the_next_connection_on(
    pki: Pki, served: list[Serving], tmp_path: Path
) -> None:
    # The server's files change under it, as a renewed Secret's do: new connections get the
    # new certificate (here one from another CA, so a client can tell them apart).
    address, cert, key = _server_on_copies(pki, served, tmp_path)
    assert _check(tls_channel(address, pki.ca)) == grpc.StatusCode.OK
    renewed = pki.stranger.issue("renewed")
    shutil.copy(renewed.key_file, tmp_path / "new.key")
    shutil.copy(renewed.cert_file, tmp_path / "new.crt")
    (tmp_path / "new.crt").replace(cert)
    (tmp_path / "new.key").replace(key)
    deadline = time.monotonic() + 15
    while _check(tls_channel(address, pki.stranger)) != grpc.StatusCode.OK:
        assert time.monotonic() < deadline, "the renewed certificate was never served"
        time.sleep(0.2)
    assert _check(tls_channel(address, pki.ca)) == grpc.StatusCode.UNAVAILABLE


def test_a_half_written_renewal_keeps_the_old_certificate(
    pki: Pki, served: list[Serving], tmp_path: Path
) -> None:
    address, cert, _key = _server_on_copies(pki, served, tmp_path)
    cert.write_bytes(pki.stranger.issue("half").cert_file.read_bytes())  # the key not yet
    time.sleep(1.5)  # past the reload interval: the server has looked at the files again
    assert _check(tls_channel(address, pki.ca)) == grpc.StatusCode.OK


# --- bad files: one line, naming the file ------------------------------------------------


def _args(**flags: str | bool) -> argparse.Namespace:
    values: dict[str, str | bool] = {
        "tls_cert_file": "", "tls_key_file": "", "tls_client_ca_file": "",
        "insecure": False, "listen": "127.0.0.1:1",
    }  # fmt: skip
    values.update(flags)
    return argparse.Namespace(**values)


def test_bad_server_files_end_start_up_with_one_line(pki: Pki, tmp_path: Path) -> None:
    cert, key = str(pki.server.cert_file), str(pki.server.key_file)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    cases = [
        (_args(tls_cert_file=cert), "--tls-cert-file and --tls-key-file go together"),
        (_args(tls_client_ca_file=cert), "--tls-client-ca-file needs --tls-cert-file"),
        (
            _args(tls_cert_file=str(tmp_path / "missing.crt"), tls_key_file=key),
            f"cannot read the TLS certificate file {tmp_path / 'missing.crt'}: No such file",
        ),
        (
            _args(tls_cert_file=str(garbage), tls_key_file=key),
            f"the TLS certificate file {garbage} holds no PEM certificate",
        ),
        (
            _args(tls_cert_file=cert, tls_key_file=str(pki.client.key_file)),
            f"the TLS key file {pki.client.key_file} does not belong to the certificate in {cert}",
        ),
        (
            _args(tls_cert_file=cert, tls_key_file=cert),
            f"the TLS key file {cert} holds no unencrypted PEM private key",
        ),
        (
            _args(tls_cert_file=cert, tls_key_file=key, tls_client_ca_file=str(garbage)),
            f"the TLS client CA file {garbage} holds no PEM certificate",
        ),
        (_args(listen="0.0.0.0:1"), "the engine would serve plaintext gRPC on 0.0.0.0:1"),
    ]
    for args, expected in cases:
        with pytest.raises(ConfigError) as refused:
            server_tls(args, "the engine")
        assert str(refused.value).startswith(expected), (expected, str(refused.value))
        assert "BEGIN" not in str(refused.value)  # never the files' contents
    assert server_tls(_args(listen="0.0.0.0:1", insecure=True), "the engine") is None
    assert server_tls(_args(), "the engine") is None
    made = server_tls(_args(tls_cert_file=cert, tls_key_file=key, listen="0.0.0.0:1"), "x")
    assert made is not None and made.mode == "tls"


def test_bad_client_files_are_one_line(pki: Pki) -> None:
    with pytest.raises(ConfigError, match="go together"):
        ClientTLS(cert_file=str(pki.client.cert_file))
    with pytest.raises(ConfigError, match="does not belong to the certificate"):
        ClientTLS(
            cert_file=str(pki.client.cert_file), key_file=str(pki.server.key_file)
        ).credentials()
    with pytest.raises(ConfigError, match="cannot read the TLS CA file /nonexistent"):
        ClientTLS(ca_file="/nonexistent/ca.crt").credentials()


# --- every transport setting is documented -----------------------------------------------

SERVICE_VARIABLES = [
    f"WARGAME_{service}_{name}"
    for service in ("ENGINE", "MATCHMAKER")
    for name in ("TLS_CERT_FILE", "TLS_KEY_FILE", "TLS_CLIENT_CA_FILE", "INSECURE", "HEALTH_LISTEN")
]
ENGINE_CLIENT_VARIABLES = [
    f"WARGAME_MATCHMAKER_ENGINE_TLS{name}"
    for name in ("", "_CA_FILE", "_CERT_FILE", "_KEY_FILE", "_SERVER_NAME")
]
CLI_VARIABLES = ["WARGAME_TLS", "WARGAME_TLS_CA_FILE", "WARGAME_TLS_SERVER_NAME"]


def test_every_transport_setting_is_in_help_and_in_the_readme() -> None:
    from cli_client.arguments import build_parser as cli_parser
    from engine_service.main import build_parser as engine_parser
    from matchmaker.main import build_parser as matchmaker_parser
    from tests.servers import ROOT

    def serve_help(parser: argparse.ArgumentParser, command: str) -> str:
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return " ".join(commands.choices[command].format_help().split())

    helps = serve_help(engine_parser(), "serve") + serve_help(matchmaker_parser(), "serve")
    client_help = serve_help(cli_parser(), "play")
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Configuration") : readme.index("### The matchmaker:")]
    for variable in [*SERVICE_VARIABLES, *ENGINE_CLIENT_VARIABLES]:
        assert f"[env {variable}]" in helps, variable
    for variable in CLI_VARIABLES:
        assert f"[env {variable}]" in client_help, variable
    documented: set[str] = set()
    for row in table.splitlines():
        # A row names variables in full, or by an ending (`_KEY_FILE`) that replaces the
        # ending of the row's first full name.
        names = re.findall(r"`(_?[A-Z][A-Z_]*)`", row)
        full = next((name for name in names if name.startswith("WARGAME_")), "")
        for name in names:
            if name.startswith("WARGAME_"):
                documented.add(name)
            elif full:
                cuts = [i for i, char in enumerate(full) if char == "_"]
                documented.update(full[:i] + name for i in cuts)
    for variable in [*SERVICE_VARIABLES, *ENGINE_CLIENT_VARIABLES, *CLI_VARIABLES]:
        assert variable in documented, variable
    assert "### Transport security (TLS)" in readme
