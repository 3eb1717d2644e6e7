"""The client's channels: a service that is slow to answer is waited for, not unreachable."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from cli_client.connection import Addresses, Connection

HANDSHAKE_DELAY_S = 1.5  # a slow link or a busy server: far more than a loopback handshake


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def slow_link(engine_address: str) -> Iterator[str]:
    """A TCP relay to the engine that holds each new connection before passing any byte."""
    host, port = engine_address.rsplit(":", 1)
    listener = socket.create_server(("127.0.0.1", 0))
    opened: list[socket.socket] = [listener]

    def relay(client: socket.socket) -> None:
        time.sleep(HANDSHAKE_DELAY_S)
        try:
            upstream = socket.create_connection((host, int(port)))
        except OSError:  # the engine has stopped: the test is over
            client.close()
            return
        opened.append(upstream)
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        _pipe(upstream, client)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            opened.append(client)
            threading.Thread(target=relay, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    for end in opened:
        end.close()


def test_a_slow_handshake_is_waited_for_not_called_unreachable(slow_link: str) -> None:
    # The channel's shortest connection attempt once was its reconnect back-off (200 ms):
    # a handshake slower than that read "cannot reach the rules engine".
    with Connection(Addresses(engine=slow_link, matchmaker="127.0.0.1:1")) as connection:
        started = time.monotonic()
        games = connection.list_games()
        assert time.monotonic() - started >= HANDSHAKE_DELAY_S
    assert {game.id for game in games.games} >= {"war", "battle", "napoleonic"}


def test_a_server_beyond_this_machine_is_reached_over_tls_unless_plaintext() -> None:
    local = Addresses.of("127.0.0.1:1", "localhost:2")
    assert (local.engine_tls, local.matchmaker_tls) == (None, None)
    distant = Addresses.of("play.example.com:443", "10.0.0.2:50052")
    assert distant.engine_tls is not None and distant.matchmaker_tls is not None
    plain = Addresses.of("play.example.com:443", "grpcs://10.0.0.2:1", tls=True, plaintext=True)
    assert plain.engine_tls is None  # --plaintext wins over --tls
    assert plain.matchmaker_tls is not None  # but not over an address that asks for TLS
    assert Addresses.of("grpc://play.example.com:443", "127.0.0.1:1").engine_tls is None


def test_server_names_one_address_for_both_services(monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_client.arguments import build_parser
    from cli_client.subcommands import _connection

    for given, address in [
        ("play.example.com", "play.example.com:443"),
        ("play.example.com:8443", "play.example.com:8443"),
        ("[2001:db8::1]", "[2001:db8::1]:443"),
        ("grpcs://play.example.com", "grpcs://play.example.com:443"),
    ]:
        args = build_parser().parse_args(["play", "war", "--server", given])
        assert args.server == address
        with _connection(args) as connection:
            where = connection.addresses
            assert where.engine == where.matchmaker == address.removeprefix("grpcs://")
            assert where.engine_tls is not None and where.matchmaker_tls is not None
    monkeypatch.setenv("WARGAME_SERVER", "127.0.0.1:7")
    args = build_parser().parse_args(["games"])
    with _connection(args) as connection:
        assert connection.addresses.engine == "127.0.0.1:7"
        assert connection.addresses.engine_tls is None
    monkeypatch.delenv("WARGAME_SERVER")
    assert build_parser().parse_args(["games"]).server == ""
