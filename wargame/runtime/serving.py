"""Server lifecycle written once: bind, health checking, reflection, graceful shutdown.

`create_server(address, ...) -> Serving` binds (port 0 picks a free port, so tests can run
servers side by side) and registers the standard health and reflection services (reflection
in both versions, `wargame.runtime.reflection`); `serve` blocks until SIGTERM/SIGINT, then
reports NOT_SERVING, lets in-flight calls finish within the grace period and returns.
The asyncio variants do the same for `grpc.aio` servers.

With `tls` (`wargame.runtime.tls.ServerTLS`) the port speaks TLS only. `health_address`
adds a second, plaintext port that serves nothing but the health service (the same
statuses): probes that cannot speak TLS, such as Kubernetes' gRPC probes, use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from wargame.runtime.config import ConfigError, host_port
from wargame.runtime.reflection import enable_reflection
from wargame.runtime.refusal import Code, Reason, Refusal
from wargame.runtime.tls import ServerTLS

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
HEALTH_MESSAGE_BYTES = 4096  # health requests and answers are a few bytes
# The transport takes requests this many times the service's limit, which refuses them with
# its reason. Beyond it gRPC's core refuses a request at its length prefix, before reading
# it, and without a reason: a higher bound (or none) would have the server read whatever a
# client announces (a 300 MB request kept 906 MB resident, against 45 MB with the bound).
TRANSPORT_HEADROOM = 2
# A connection that has not finished its handshake (TLS, and HTTP/2's opening) by then is
# closed: connections opened and left silent would otherwise hold the server's sockets for
# gRPC's default of 120 s each.
HANDSHAKE_TIMEOUT_MS = 10_000
PENDING_SECONDS = 300  # how long a new call may wait to be taken up (`create_aio_server`)


@dataclass(frozen=True)
class MalformedRequest:
    """Stands in for a request whose bytes are not a valid message of its type.

    grpc-python answers undecodable requests with INTERNAL; services registered through
    `register_service` receive this instead and refuse it as INVALID_ARGUMENT.
    """

    message_type: str
    error: str

    def describe(self) -> str:
        """One line saying what was wrong."""
        return f"the request is not a valid {self.message_type}: {self.error}"


@dataclass(frozen=True)
class OversizedRequest:
    """Stands in for a request larger than the service's limit (see `register_service`)."""

    size: int
    limit: int


def check_decoded(request: Any) -> None:
    """Refuse a request whose bytes were not a valid message, or were too many."""
    if isinstance(request, MalformedRequest):
        raise Refusal(Code.INVALID_ARGUMENT, Reason.MALFORMED_REQUEST, request.describe())
    if isinstance(request, OversizedRequest):
        raise Refusal(
            Code.RESOURCE_EXHAUSTED,
            Reason.REQUEST_TOO_LARGE,
            f"the request has {request.size} bytes; at most {request.limit}",
        )


def _tolerant(message_class: Any, max_request_bytes: int) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        if len(data) > max_request_bytes:
            return OversizedRequest(len(data), max_request_bytes)
        try:
            return message_class.FromString(data)
        except Exception as error:  # DecodeError, invalid UTF-8, absurd nesting
            return MalformedRequest(
                message_class.DESCRIPTOR.full_name, str(error) or type(error).__name__
            )

    return deserialize


def _serialized(response: Any) -> bytes:
    """A response's bytes; a servicer may yield bytes it serialized once for many calls
    (the matchmaker's live updates, one per side watching: `WatchGame`)."""
    if isinstance(response, bytes):
        return response
    data: bytes = response.SerializeToString()
    return data


def register_service(
    server: Any,
    servicer: Any,
    service: Any,
    *,
    max_request_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> None:
    """Register `servicer`'s methods for a service descriptor, with tolerant deserializers
    (and serializers that pass a response's bytes through, `_serialized`).

    A request larger than `max_request_bytes` reaches the servicer as an `OversizedRequest`
    (refused by `check_decoded` with REQUEST_TOO_LARGE): the transport takes up to twice
    that (`server_options`), so a client sees the reason instead of gRPC's bare
    RESOURCE_EXHAUSTED.
    """
    from google.protobuf import message_factory

    handlers = {}
    for method in service.methods:
        request_class = message_factory.GetMessageClass(method.input_type)
        make = {
            (False, False): grpc.unary_unary_rpc_method_handler,
            (False, True): grpc.unary_stream_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler,
            (True, True): grpc.stream_stream_rpc_method_handler,
        }[(method.client_streaming, method.server_streaming)]
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=_tolerant(request_class, max_request_bytes),
            response_serializer=_serialized,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    # Registered too (as generated code does): gRPC then queues each method's new calls
    # apart, so a burst of one (thousands of WatchGame streams) never holds the others'
    # calls (SubmitActions) back in one queue of calls not yet taken up.
    server.add_registered_method_handlers(service.full_name, handlers)


@dataclass(frozen=True)
class ConnectionAge:
    """How long a client connection may live: after `maximum` seconds (gRPC adds ±10 % jitter)
    the server sends GOAWAY and in-flight calls get `grace` more seconds to finish.

    Recycled connections are what spread a long-lived client over replicas added since it
    connected: the client reconnects, re-resolves the name and balances anew.
    """

    maximum: float
    grace: float


def server_options(
    max_message_bytes: int, reuse_port: bool, connection_age: ConnectionAge | None = None
) -> list[tuple[str, Any]]:
    """Channel arguments every server uses.

    The transport takes requests up to twice `max_message_bytes`, so that the services can
    refuse those beyond the limit themselves, with a reason (`register_service`).
    """
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", TRANSPORT_HEADROOM * max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        # gRPC turns SO_REUSEPORT on by default: a second server would silently share a busy
        # port. Only the engine's worker processes share one on purpose.
        ("grpc.so_reuseport", 1 if reuse_port else 0),
        ("grpc.keepalive_time_ms", 30_000),
        # Clients may check their connections by a ping every few seconds, with calls or
        # without (the matchmaker's engine channels ping every 5 s, to notice a vanished
        # host soon): such pings are answered, not punished with GOAWAY "too_many_pings".
        # (This option is the shortest interval between pings *received*.)
        ("grpc.http2.min_ping_interval_without_data_ms", 4_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
    ]
    if connection_age is not None:
        options += [
            ("grpc.max_connection_age_ms", max(1, round(connection_age.maximum * 1000))),
            ("grpc.max_connection_age_grace_ms", max(0, round(connection_age.grace * 1000))),
        ]
    return options


def bound_address(address: str | None, port: int) -> str:
    """Where a listener of `address` (port 0: any) ended up, for logs; "off" without one."""
    if not address or address == "off":
        return "off"
    return f"{host_port(address)[0]}:{port}"


def check_port_free(address: str) -> None:
    """Raise ConfigError if `address` cannot be bound exclusively (used before forking workers)."""
    host, port = host_port(address)
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ConfigError(f"cannot listen on {address}: {error.strerror or error}") from None


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free now (for a group of worker processes that must share one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _register_and_bind(
    server: Any,
    address: str,
    register: Callable[[Any], None],
    health_servicer: Any,
    service_names: Sequence[str],
    *,
    tls: ServerTLS | None,
) -> int:
    """Register the services, health checking and reflection on `server`; bind; the port."""
    register(server)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    enable_reflection(
        (*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name), server
    )
    return _bind(server, address, tls)


def _bind(server: Any, address: str, tls: ServerTLS | None = None) -> int:
    try:
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, tls.credentials())
    except RuntimeError as error:
        raise ConfigError(f"cannot listen on {address}: address in use or not available") from error
    if not port:
        raise ConfigError(f"cannot listen on {address}: address in use or not available")
    return int(port)


@dataclass
class Serving:
    """A bound, not yet started sync server with its health servicer (and health port)."""

    server: grpc.Server
    port: int
    health: health.HealthServicer
    service_names: tuple[str, ...]
    health_server: grpc.Server | None = None
    health_port: int = 0

    def start(self) -> None:
        """Start serving and report SERVING for every service."""
        self.server.start()
        if self.health_server is not None:
            self.health_server.start()
        for name in ("", *self.service_names):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace: float) -> None:
        """Report NOT_SERVING, refuse new calls, let in-flight calls finish within `grace` s."""
        self.health.enter_graceful_shutdown()
        stopped = [s.stop(grace) for s in (self.server, self.health_server) if s is not None]
        for event in stopped:
            event.wait()


def create_server(
    address: str,
    register: Callable[[grpc.Server], None],
    service_names: Sequence[str],
    *,
    max_workers: int = 8,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    reuse_port: bool = False,
    connection_age: ConnectionAge | None = None,
    interceptors: Sequence[grpc.ServerInterceptor] = (),
    tls: ServerTLS | None = None,
    health_address: str | None = None,
) -> Serving:
    """A sync gRPC server on `address` with health checking and reflection.

    `connection_age` (None: connections live until the client closes them) recycles client
    connections; see `ConnectionAge`. `tls` makes the port TLS-only; `health_address` adds
    the plaintext health port.
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rpc"),
        interceptors=list(interceptors),
        options=server_options(max_message_bytes, reuse_port, connection_age),
        maximum_concurrent_rpcs=max_workers * 64,
    )
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    port = _register_and_bind(server, address, register, health_servicer, service_names, tls=tls)
    serving = Serving(server, port, health_servicer, tuple(service_names))
    if health_address:
        serving.health_server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="health"),
            options=server_options(HEALTH_MESSAGE_BYTES, reuse_port),
        )
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, serving.health_server)
        serving.health_port = _bind(serving.health_server, health_address)
    return serving


def serve(serving: Serving, *, grace: float, on_stop: Callable[[str], None] | None = None) -> None:
    """Start, block until SIGTERM/SIGINT, then shut down gracefully."""
    stop = threading.Event()
    received: list[str] = []

    def handle(signum: int, _frame: Any) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        serving.start()
        stop.wait()
        if on_stop:
            on_stop(received[0] if received else "stop")
        serving.stop(grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- asyncio servers ------------------------------------------------------------------


@dataclass
class AioServing:
    """A bound, not yet started grpc.aio server with its health servicer (and health port)."""

    server: grpc.aio.Server
    port: int
    health: Any  # grpc_health.v1.health.aio.HealthServicer
    service_names: tuple[str, ...]
    health_server: grpc.aio.Server | None = None
    health_port: int = 0

    async def start(self) -> None:
        """Start serving and report SERVING for every service."""
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        for name in ("", *self.service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop(self, grace: float) -> None:
        """Report NOT_SERVING, refuse new calls, let in-flight calls finish within `grace` s."""
        await self.health.enter_graceful_shutdown()
        servers = [s for s in (self.server, self.health_server) if s is not None]
        await asyncio.gather(*(s.stop(grace) for s in servers))


def create_aio_server(
    address: str,
    register: Callable[[grpc.aio.Server], None],
    service_names: Sequence[str],
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    interceptors: Sequence[Any] = (),
    pending_calls: int = 0,
    tls: ServerTLS | None = None,
    health_address: str | None = None,
) -> AioServing:
    """A grpc.aio server on `address` with health checking and reflection (call in a loop);
    `tls` and `health_address` as for `create_server`.

    `pending_calls`: how many new calls may wait to be taken up at once (gRPC cancels
    more, 3,000 by default: a burst of reconnecting streams meets that limit), each for
    up to `PENDING_SECONDS` (gRPC's default, 30 s, is shorter than a burst of thousands
    takes to be taken up on a busy machine: the calls left were CANCELLED).
    """
    from grpc_health.v1.health import aio as health_aio

    options = server_options(max_message_bytes, reuse_port=False)
    if pending_calls:
        options += [
            ("grpc.server.max_pending_requests", pending_calls),
            ("grpc.server.max_pending_requests_hard_limit", pending_calls),
            ("grpc.server_max_unrequested_time_in_server", PENDING_SECONDS),
        ]
    server = grpc.aio.server(interceptors=list(interceptors), options=options)
    health_servicer = health_aio.HealthServicer()
    port = _register_and_bind(server, address, register, health_servicer, service_names, tls=tls)
    serving = AioServing(server, port, health_servicer, tuple(service_names))
    if health_address:
        serving.health_server = grpc.aio.server(
            options=server_options(HEALTH_MESSAGE_BYTES, reuse_port=False)
        )
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, serving.health_server)
        serving.health_port = _bind(serving.health_server, health_address)
    return serving


async def aio_serve(
    serving: AioServing, *, grace: float, on_stop: Callable[[str], None] | None = None
) -> None:
    """Start, wait for SIGTERM/SIGINT, then shut down gracefully."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    received: list[str] = []

    def handle(sig: signal.Signals) -> None:
        received.append(sig.name)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handle, sig)
    try:
        await serving.start()
        await stop.wait()
        if on_stop:
            on_stop(received[0] if received else "stop")
        await serving.stop(grace)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
