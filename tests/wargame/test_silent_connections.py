"""Connections that never start their handshake are closed.

A client that opens TCP connections and sends nothing used to hold them open for gRPC's
default handshake time (120 s; 300 of 300 were still open after 20 s). Every server now
closes one that has not finished its handshake within `HANDSHAKE_TIMEOUT_MS`, over TLS
and in plaintext, and still serves the callers that speak.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.tls_support import Authority, tls_channel
from wargame.runtime.serving import HANDSHAKE_TIMEOUT_MS, Serving, create_server
from wargame.runtime.tls import ServerTLS

SILENT = 50
# Past the handshake time, and well short of gRPC's default of 120 s.
WAIT = 4 * HANDSHAKE_TIMEOUT_MS / 1000


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return Authority.create(tmp_path_factory.mktemp("pki"), "silent")


@pytest.fixture(params=["tls", "plaintext"])
def served(request: pytest.FixtureRequest, ca: Authority) -> Iterator[tuple[Serving, str]]:
    tls = None
    if request.param == "tls":
        issued = ca.issue("silent-server")
        tls = ServerTLS(str(issued.cert_file), str(issued.key_file))
    serving = create_server("127.0.0.1:0", lambda server: None, [], tls=tls)
    serving.start()
    yield serving, request.param
    serving.stop(0)


def _closed(connection: socket.socket) -> bool:
    """Whether the server closed `connection` (end of stream, or reset)."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1) == b""
    except OSError:
        return True


def test_silent_connections_are_closed_and_speakers_still_served(
    served: tuple[Serving, str], ca: Authority
) -> None:
    serving, kind = served
    address = f"127.0.0.1:{serving.port}"
    silent = [socket.create_connection(("127.0.0.1", serving.port)) for _ in range(SILENT)]
    try:
        deadline = time.monotonic() + WAIT
        open_ = list(silent)
        while open_ and time.monotonic() < deadline:
            open_ = [connection for connection in open_ if not _closed(connection)]
            time.sleep(0.1)
        assert not open_, f"{len(open_)} of {SILENT} silent connections still open"
        channel = tls_channel(address, ca) if kind == "tls" else grpc.insecure_channel(address)
        with channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=10
            )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        for connection in silent:
            connection.close()
