"""The HTTP server: Connect calls forwarded over gRPC, the page's files, health.

One thread per connection (`ThreadingHTTPServer`, HTTP/1.1 with keep-alive); a unary call
is one blocking gRPC call, a stream one gRPC stream relayed envelope by envelope (chunked)
until it ends, the browser goes away (the gRPC call is cancelled then) or the service
stops (each stream then ends with UNAVAILABLE, and the page resumes it elsewhere). Only
the caller's `authorization` and its address (`x-forwarded-for`, appended to what a proxy
in front sent) go with a call; the engine is sent no token.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import mimetypes
import re
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import structlog

from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.tls import ClientTLS, ServerTLS, channel
from web import connect
from web.connect import ConnectError
from web.routes import Route, routes

log = structlog.get_logger(component="web")

STATIC = Path(__file__).resolve().parent / "static"
PAGE = "index.html"  # every page route serves it; the page reads the path itself
HEALTH_PATHS = ("/healthz", "/readyz")
# The page runs only its own scripts (and its import map, allowed by its hash: see
# page_headers) and talks only to this service; no one frames it.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'{import_map}; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
IMPORT_MAP = re.compile(rb'<script type="importmap">(.*?)</script>', re.DOTALL)
# The one module web/page's packages are bundled into at setup (see vendor.mjs).
VENDOR_CHECK = "vendor/bundle.js"
STREAM_RETRY_AFTER = 1.0  # seconds a page waits before reopening a refused stream


@dataclass(frozen=True)
class WebConfig:
    """What the web service forwards to, and its limits."""

    matchmaker: str
    engine: str
    matchmaker_tls: ClientTLS | None = None
    engine_tls: ClientTLS | None = None
    max_request_bytes: int = 64 * 1024
    max_streams: int = 2000
    call_timeout: float = 30.0
    static: Path = STATIC


@dataclass
class Backends:
    """The gRPC channels and one callable per route."""

    config: WebConfig
    channels: dict[str, grpc.Channel] = field(default_factory=dict)
    callables: dict[str, Any] = field(default_factory=dict)
    routes: dict[str, Route] = field(default_factory=routes)

    def __post_init__(self) -> None:
        self.channels = {
            "matchmaker": channel(self.config.matchmaker, self.config.matchmaker_tls),
            "engine": channel(self.config.engine, self.config.engine_tls),
        }
        for route in self.routes.values():
            target = self.channels[route.backend]
            make = target.unary_stream if route.streaming else target.unary_unary
            self.callables[route.path] = make(
                route.method,
                request_serializer=route.request.SerializeToString,
                response_deserializer=route.response.FromString,
            )

    def close(self) -> None:
        """Close the channels."""
        for open_channel in self.channels.values():
            open_channel.close()


class WebService:
    """The web service's state: backends, open streams, whether it is stopping."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.backends = Backends(config)
        self.files = _read_files(config.static)
        self.page_headers = page_headers(self.files.get(PAGE, (b"", ""))[0])
        if PAGE in self.files and VENDOR_CHECK not in self.files:
            log.warning(
                "the page's packages are not installed: the page cannot load "
                "(make setup, or make play-web, with npm)",
                missing=f"{config.static / VENDOR_CHECK}",
            )
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._streams: set[Any] = set()
        self._active = 0

    # --- streams and in-flight calls ----------------------------------------------------

    def open_stream(self, call: Any) -> bool:
        """Count a stream in, unless the replica holds as many as it may."""
        with self._lock:
            if len(self._streams) >= self.config.max_streams or self.stopping.is_set():
                return False
            self._streams.add(call)
            return True

    def close_stream(self, call: Any) -> None:
        """Count a stream out."""
        with self._lock:
            self._streams.discard(call)

    @property
    def streams(self) -> int:
        """Streams open now."""
        with self._lock:
            return len(self._streams)

    @contextlib.contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count a call in while it runs (a stop waits for unary calls to finish)."""
        with self._lock:
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1

    def stop(self, grace: float) -> None:
        """End every stream (its page resumes elsewhere: each gets its end-of-stream with
        UNAVAILABLE first), give unary calls `grace` seconds."""
        self.stopping.set()
        with self._lock:
            streams = list(self._streams)
        for call in streams:
            call.cancel()
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            with self._lock:
                if self._active == 0:
                    break
            time.sleep(0.05)
        self.backends.close()


def page_headers(page: bytes) -> dict[str, str]:
    """The headers every file of the page goes with: the policy allows the page's inline
    import map (which maps `@bufbuild/protobuf`, `@connectrpc/...` to
    /static/vendor/bundle.js) by the SHA-256 of its text, and no other inline script."""
    found = IMPORT_MAP.search(page)
    allowed = ""
    if found is not None:
        digest = base64.b64encode(hashlib.sha256(found.group(1)).digest()).decode("ascii")
        allowed = f" 'sha256-{digest}'"
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY.format(import_map=allowed),
        "Referrer-Policy": "no-referrer",
    }


def _read_files(folder: Path) -> dict[str, tuple[bytes, str]]:
    """The page's files by name, read once (no path from a request reaches the disk)."""
    files: dict[str, tuple[bytes, str]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if path.suffix == ".js":
                kind = "text/javascript"
            if kind.startswith("text/") or kind.endswith(("json", "svg+xml")):
                kind += "; charset=utf-8"
            files[path.relative_to(folder).as_posix()] = (path.read_bytes(), kind)
    return files


def _timeout(header: str | None, default: float | None) -> float | None:
    """The call's deadline in seconds from Connect-Timeout-Ms, else `default`."""
    if header and header.isdigit() and len(header) <= 10:
        return int(header) / 1000
    return default


class Handler(BaseHTTPRequestHandler):
    """One connection's requests."""

    protocol_version = "HTTP/1.1"
    # Each answer (headers, then body; each stream message) goes out as it is written:
    # without TCP_NODELAY a write behind an unacknowledged one on a kept-alive connection
    # waits for the browser's delayed ACK (tens of milliseconds).
    disable_nagle_algorithm = True
    server: WebServer
    server_version = "wargame-web"
    sys_version = ""

    # --- HTTP plumbing ------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        """Access lines are not logged (structlog logs what matters)."""

    def _send(
        self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_error(self, error: ConnectError) -> None:
        body = json.dumps(error.json()).encode("utf-8")
        self._send(error.http_status, body, "application/json")

    def _caller_metadata(self, backend: str) -> list[tuple[str, str]]:
        forwarded = self.headers.get("x-forwarded-for", "")
        peer = str(self.client_address[0])
        chain = f"{forwarded}, {peer}" if forwarded else peer
        metadata = [("x-forwarded-for", chain)]
        token = self.headers.get("authorization")
        if token and backend == "matchmaker":
            metadata.append(("authorization", token))
        return metadata

    # --- GET: the page and health -------------------------------------------------------

    def do_HEAD(self) -> None:
        """As GET, without the body."""
        self.do_GET()

    def do_GET(self) -> None:
        """Health, the page's files, and the page for `/` and `/g/<game id>`."""
        service = self.server.service
        path = self.path.split("?", 1)[0]
        if path in HEALTH_PATHS:
            if service.stopping.is_set():
                self._send(503, b"stopping\n", "text/plain; charset=utf-8")
            else:
                self._send(200, b"ok\n", "text/plain; charset=utf-8")
            return
        if self.server.health_only:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")
            return
        name = PAGE if path == "/" or path.startswith("/g/") else path.removeprefix("/static/")
        if not path.startswith(("/static/", "/g/")) and path != "/":
            name = ""
        found = service.files.get(name)
        if found is None:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")
            return
        body, kind = found
        self._send(200, body, kind, {"Cache-Control": "no-cache", **service.page_headers})

    # --- POST: Connect calls ------------------------------------------------------------

    def do_POST(self) -> None:
        """A Connect call: unary or server-streaming, JSON or binary."""
        service = self.server.service
        if self.server.health_only:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")
            return
        route = service.backends.routes.get(self.path)
        kind = (self.headers.get("content-type") or "").split(";")[0].strip().lower()
        body = self._read_body()
        if body is None:
            return
        if route is None:
            self._send_error(ConnectError(Code.UNIMPLEMENTED, f"no procedure {self.path[:100]}"))
            return
        framing = connect.CONTENT_TYPES.get(kind)
        if framing is None or framing[1] != route.streaming:
            wanted = "application/connect+json" if route.streaming else "application/json"
            self._send(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                b"",
                "text/plain",
                {"Accept-Post": wanted},
            )
            return
        serialization, streaming = framing
        try:
            if streaming:
                body = connect.unenvelope(body)
            request = connect.decode(body, serialization, route.request())
        except ValueError as error:
            refusal = Refusal(Code.INVALID_ARGUMENT, Reason.MALFORMED_REQUEST, str(error))
            self._refuse(streaming, refusal, kind)
            return
        with service.in_flight():
            if streaming:
                self._stream(route, request, serialization, kind)
            else:
                self._unary(route, request, serialization, kind)

    def _read_body(self) -> bytes | None:
        length = self.headers.get("content-length")
        limit = self.server.service.config.max_request_bytes
        if length is None or not length.isdigit():
            self.close_connection = True
            self._send_error(
                connect.refused(
                    Refusal(
                        Code.INVALID_ARGUMENT,
                        Reason.MALFORMED_REQUEST,
                        "a request needs a Content-Length",
                    )
                )
            )
            return None
        if int(length) > limit:
            self.close_connection = True  # its body is not read
            self._send_error(
                connect.refused(
                    Refusal(
                        Code.RESOURCE_EXHAUSTED,
                        Reason.REQUEST_TOO_LARGE,
                        f"the request has {int(length)} bytes; at most {limit}",
                    )
                )
            )
            return None
        return self.rfile.read(int(length))

    def _refuse(self, streaming: bool, refusal: Refusal, kind: str) -> None:
        error = connect.refused(refusal)
        if not streaming:
            self._send_error(error)
            return
        self._send(200, connect.end_of_stream(error), kind)

    def _unary(self, route: Route, request: Any, serialization: str, kind: str) -> None:
        config = self.server.service.config
        timeout = _timeout(self.headers.get("connect-timeout-ms"), config.call_timeout)
        call = self.server.service.backends.callables[route.path]
        try:
            response = call(request, timeout=timeout, metadata=self._caller_metadata(route.backend))
        except grpc.RpcError as failure:
            error = ConnectError.from_rpc_error(failure)
            log.debug("call refused", procedure=route.path, code=connect.code_name(error.code))
            self._send_error(error)
            return
        self._send(200, connect.encode(response, serialization), kind)

    def _stream(self, route: Route, request: Any, serialization: str, kind: str) -> None:
        service = self.server.service
        timeout = _timeout(self.headers.get("connect-timeout-ms"), None)
        call = service.backends.callables[route.path](
            request, timeout=timeout, metadata=self._caller_metadata(route.backend)
        )
        self.close_connection = True  # the end of a stream ends its connection
        if not service.open_stream(call):
            call.cancel()
            self._send(200, connect.end_of_stream(_streams_refused(service)), kind)
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.flush()
            threading.Thread(target=self._cancel_on_close, args=(call,), daemon=True).start()
            error: ConnectError | None = None
            try:
                for message in call:
                    self._chunk(connect.envelope(connect.encode(message, serialization)))
            except grpc.RpcError as failure:
                error = ConnectError.from_rpc_error(failure)
                if error.code == grpc.StatusCode.CANCELLED and service.stopping.is_set():
                    error = connect.refused(
                        Refusal(
                            Code.UNAVAILABLE,
                            Reason.TOO_MANY_WATCHERS,
                            "the web service is stopping: reopen the stream",
                            retry_after=STREAM_RETRY_AFTER,
                        )
                    )
            self._chunk(connect.end_of_stream(error))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            call.cancel()  # the browser went away
        finally:
            service.close_stream(call)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
        self.wfile.flush()

    def _cancel_on_close(self, call: Any) -> None:
        """Cancel the stream's gRPC call when the browser closes the connection (on TLS the
        next write that fails does, as a TLS socket cannot be peeked at)."""
        if isinstance(self.connection, ssl.SSLSocket):
            return
        with contextlib.suppress(OSError, ValueError):
            while self.connection.recv(1, socket.MSG_PEEK):
                time.sleep(0.2)  # a browser sends nothing while it reads a stream
        call.cancel()


def _streams_refused(service: WebService) -> ConnectError:
    return connect.refused(
        Refusal(
            Code.RESOURCE_EXHAUSTED,
            Reason.TOO_MANY_WATCHERS,
            f"this web service holds as many streams as it may ({service.config.max_streams})",
            retry_after=STREAM_RETRY_AFTER,
        )
    )


class WebServer(ThreadingHTTPServer):
    """The HTTP server of a `WebService` (TLS when given; `health_only` serves /healthz)."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        service: WebService,
        *,
        tls: ServerTLS | None = None,
        health_only: bool = False,
    ) -> None:
        super().__init__(address, Handler)
        self.service = service
        self.health_only = health_only
        if tls is not None:
            # A renewed certificate is served from the next handshake on (tls.py).
            context = tls.ssl_context()
            # The handshake happens in the connection's thread, on its first read.
            self.socket = context.wrap_socket(
                self.socket, server_side=True, do_handshake_on_connect=False
            )

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed: a refused handshake (a client that does not trust the
        certificate, plaintext on the TLS port) or a dropped peer is one debug line, not a
        traceback; anything else is logged with its traceback."""
        failure = sys.exc_info()[1]
        if isinstance(failure, (ssl.SSLError, ConnectionError)):
            log.debug("connection failed", peer=str(client_address[0]), problem=str(failure))
            return
        log.exception("connection failed", peer=str(client_address[0]))
