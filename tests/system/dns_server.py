"""A tiny DNS server on loopback whose answers a test sets and changes, as a Kubernetes
headless Service's answers change when pods come and go.

It answers A queries for the names it holds with their addresses (TTL 0) and every other
question with an empty answer. gRPC's DNS resolver (c-ares) asks it when the target names
it: `dns://127.0.0.1:<port>/<name>:<grpc port>`.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

A, IN = 1, 1
RESPONSE_FLAGS = 0x8180  # a response, recursion desired and available, no error


class DnsServer:
    """Answers A queries for names set with `answer` (UDP, loopback, a free port)."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        self._answers: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self.queries: list[str] = []  # the names asked for A records, in order
        self._thread = threading.Thread(target=self._serve, name="test-dns", daemon=True)
        self._thread.start()

    def answer(self, name: str, addresses: Sequence[str]) -> None:
        """From now on, `name` resolves to `addresses`."""
        with self._lock:
            self._answers[name.lower().rstrip(".")] = tuple(addresses)

    def target(self, name: str, port: int) -> str:
        """The gRPC target that resolves `name` through this server."""
        return f"dns://127.0.0.1:{self.port}/{name}:{port}"

    def close(self) -> None:
        """Stop answering."""
        self._socket.close()

    def _serve(self) -> None:
        while True:
            try:
                query, peer = self._socket.recvfrom(512)
            except OSError:  # closed
                return
            reply = self._reply(query)
            if reply is not None:
                self._socket.sendto(reply, peer)

    def _reply(self, query: bytes) -> bytes | None:
        if len(query) < 17:
            return None
        ident = struct.unpack(">H", query[:2])[0]
        labels: list[str] = []
        at = 12
        while at < len(query) and query[at]:
            length = query[at]
            labels.append(query[at + 1 : at + 1 + length].decode("ascii", "replace"))
            at += 1 + length
        end = at + 5  # the zero label, then QTYPE and QCLASS
        if end > len(query):
            return None
        qtype, qclass = struct.unpack(">HH", query[at + 1 : end])
        name = ".".join(labels).lower()
        records = b""
        count = 0
        if qtype == A and qclass == IN:
            with self._lock:
                self.queries.append(name)
                addresses = self._answers.get(name, ())
            for address in addresses:
                # a pointer to the name in the question, type A, class IN, TTL 0, 4 bytes
                records += b"\xc0\x0c" + struct.pack(">HHIH", A, IN, 0, 4)
                records += socket.inet_aton(address)
                count += 1
        header = struct.pack(">HHHHHH", ident, RESPONSE_FLAGS, 1, count, 0, 0)
        return header + query[12:end] + records


@contextmanager
def dns_server() -> Iterator[DnsServer]:
    """A DnsServer for the duration of the block."""
    server = DnsServer()
    try:
        yield server
    finally:
        server.close()
