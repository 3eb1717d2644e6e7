"""The web service's TLS: pages call it over HTTPS and it calls the matchmaker and an engine
that wants client certificates over TLS; it follows its certificate files, as the engine's
and the matchmaker's do (wargame/runtime/tls.py): a renewed certificate (a rotated Secret)
is served from the next connection on without a restart; a half-written renewal keeps the
certificate it had."""

from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import free_port
from tests.system.cli_support import FAST_MATCHMAKER
from tests.tls_support import Authority, tls_services
from tests.web.conftest import start_web
from wargame.runtime.tls import RELOAD_INTERVAL, ServerTLS
from web.server import WebConfig, WebServer, WebService

pytestmark = pytest.mark.integration


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[int, Path, Path]]:
    """A web server on copies of a certificate and key (a mounted Secret's): its port and
    the two files to change under it. The backends are never called here."""
    authority = Authority.create(tmp_path, "first")
    issued = authority.issue("web")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copy(issued.cert_file, cert)
    shutil.copy(issued.key_file, key)
    service = WebService(WebConfig(matchmaker="127.0.0.1:1", engine="127.0.0.1:1"))
    server = WebServer(("127.0.0.1", 0), service, tls=ServerTLS(str(cert), str(key)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.port, authority.ca_file, tmp_path
    server.shutdown()
    server.server_close()
    service.backends.close()


def healthy_for(port: int, ca_file: Path) -> bool:
    """Whether a new connection that trusts only `ca_file` is served /healthz."""
    context = ssl.create_default_context(cafile=str(ca_file))
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except (ssl.SSLError, OSError):
        return False
    finally:
        with contextlib.suppress(OSError):
            connection.close()


def test_a_renewed_certificate_is_served_from_the_next_connection_on(
    serve: tuple[int, Path, Path],
) -> None:
    port, first_ca, folder = serve
    assert healthy_for(port, first_ca)
    # Renewed by another CA, so that a client can tell the two certificates apart.
    second = Authority.create(folder, "second")
    renewed = second.issue("web")
    shutil.copy(renewed.cert_file, folder / "new.crt")
    shutil.copy(renewed.key_file, folder / "new.key")
    (folder / "new.crt").replace(folder / "tls.crt")
    (folder / "new.key").replace(folder / "tls.key")
    deadline = time.monotonic() + 30
    while not healthy_for(port, second.ca_file):
        assert time.monotonic() < deadline, "the renewed certificate was never served"
        time.sleep(0.2)
    assert not healthy_for(port, first_ca)


def test_a_half_written_renewal_keeps_the_old_certificate(
    serve: tuple[int, Path, Path],
) -> None:
    port, first_ca, folder = serve
    other = Authority.create(folder, "second").issue("half")
    (folder / "tls.crt").write_bytes(other.cert_file.read_bytes())  # the key not yet
    time.sleep(RELOAD_INTERVAL * 1.5)  # past the reload interval: the files are looked at
    assert healthy_for(port, first_ca)


@pytest.mark.system
def test_pages_over_https_reach_a_matchmaker_and_an_engine_over_mutual_tls(
    tmp_path: Path, seal_key_file: Path
) -> None:
    with tls_services(tmp_path) as tls:
        ca = str(tls.ca.ca_file)
        engine = tls.start_engine(seal_key_file, "--tls-client-ca-file", ca)
        cert = tls.matchmaker_cert
        matchmaker = tls.start(
            "matchmaker.main",
            ["--redis-url", tls.redis.url, "--engine", engine.address, *FAST_MATCHMAKER],
            "wargame.v1.Matchmaker",
            env={
                "WARGAME_MATCHMAKER_TLS_CERT_FILE": str(cert.cert_file),
                "WARGAME_MATCHMAKER_TLS_KEY_FILE": str(cert.key_file),
                "WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE": ca,
                "WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE": str(cert.cert_file),
                "WARGAME_MATCHMAKER_ENGINE_TLS_KEY_FILE": str(cert.key_file),
            },
        )
        # One certificate to serve pages and to present to the engine.
        web_cert = tls.ca.issue("web", client=True)
        files = (str(web_cert.cert_file), str(web_cert.key_file))
        health = f"127.0.0.1:{free_port()}"
        web = start_web(
            tmp_path, matchmaker.address, engine.address,
            "--tls-cert-file", files[0], "--tls-key-file", files[1],
            "--matchmaker-tls-ca-file", ca,
            "--engine-tls-ca-file", ca, "--engine-tls-cert-file", files[0],
            "--engine-tls-key-file", files[1],
            "--health-listen", health, health=health,
        )  # fmt: skip
        try:
            host, _, port = web.address.rpartition(":")
            context = ssl.create_default_context(cafile=ca)

            def call(procedure: str, request: dict[str, Any]) -> dict[str, Any]:
                connection = http.client.HTTPSConnection(host, int(port), context=context)
                try:
                    body = json.dumps(request).encode()
                    headers = {"Content-Type": "application/json"}
                    connection.request("POST", procedure, body, headers)
                    response = connection.getresponse()
                    answer: dict[str, Any] = json.loads(response.read())
                    assert response.status == 200, answer
                    return answer
                finally:
                    connection.close()

            registered = call("/wargame.v1.Matchmaker/RegisterPlayer", {"displayName": "Tls"})
            assert registered["token"]
            described = call("/wargame.v1.RulesEngine/DescribeGame", {"game": "war"})
            assert len(described["board"]["cells"]) == 100
        finally:
            web.stop()
