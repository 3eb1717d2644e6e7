"""The web service's TLS follows its certificate files, as the engine's and the
matchmaker's do (wargame/runtime/tls.py): a renewed certificate (a rotated Secret) is
served from the next connection on without a restart; a half-written renewal keeps the
certificate it had."""

from __future__ import annotations

import contextlib
import http.client
import shutil
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tls_support import Authority
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
