"""`wargame-web`: the games in a browser (the page, and the API over the Connect protocol).

    wargame-web [serve] [--listen HOST:PORT] [--matchmaker TARGET] [--engine TARGET] ...

Serves the page at `/` (the lobby) and `/g/<game id>` (a game, live), and forwards Connect
calls to the matchmaker and the engine over gRPC. Every flag also reads a WARGAME_* variable
(see --help). Bad configuration or a busy port end the start-up with one line on stderr and
a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import structlog

from wargame.runtime.config import ConfigError, Parser, fail, host_port
from wargame.runtime.logs import configure_logging
from wargame.runtime.serving import check_port_free
from wargame.runtime.tls import (
    ClientTLS,
    add_server_flags,
    check_expiry,
    check_plaintext,
    server_tls,
)
from web.server import WebConfig, WebServer, WebService

PROG = "wargame-web"
DEFAULT_LISTEN = "127.0.0.1:8151"
DEFAULT_METRICS = "127.0.0.1:9153"
DEFAULT_MATCHMAKER = "127.0.0.1:50052"
DEFAULT_ENGINE = "127.0.0.1:50051"
BACKENDS = ("matchmaker", "engine")


def build_parser() -> Parser:
    """The command-line parser (flags and their WARGAME_* variables)."""
    parser = Parser(
        prog=PROG,
        description="The wargame web service: the page, and the matchmaker's API and the "
        "engine's read-only calls over the Connect protocol, forwarded over gRPC.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{serve}", parser_class=Parser)
    serve = commands.add_parser("serve", help="serve the page and the API (the default command)")
    serve.service_flags("WEB", DEFAULT_LISTEN, DEFAULT_METRICS)
    add_server_flags(serve, "WEB")
    defaults = {"matchmaker": DEFAULT_MATCHMAKER, "engine": DEFAULT_ENGINE}
    for backend in BACKENDS:
        serve.flag(
            f"--{backend}",
            env=backend.upper(),
            default=defaults[backend],
            help=f"the {backend}'s gRPC target (host:port or dns:///name:port)",
        )
        _client_tls_flags(serve, backend)
    serve.flag(
        "--grace",
        env="WEB_GRACE",
        default=10.0,
        type=float,
        help="seconds in-flight calls get to finish on SIGTERM (streams end at once)",
    )
    serve.flag(
        "--max-request-bytes",
        env="WEB_MAX_REQUEST_BYTES",
        default=64 * 1024,
        type=int,
        help="largest request body accepted (REQUEST_TOO_LARGE beyond)",
    )
    serve.flag(
        "--max-streams",
        env="WEB_MAX_STREAMS",
        default=2000,
        type=int,
        help="open streams (WatchGame, JoinQueue) this replica holds; more are refused "
        "(RESOURCE_EXHAUSTED)",
    )
    serve.flag(
        "--call-timeout",
        env="WEB_CALL_TIMEOUT",
        default=30.0,
        type=float,
        help="deadline of a forwarded unary call that names none (Connect-Timeout-Ms)",
    )
    return parser


def _client_tls_flags(serve: Parser, backend: str) -> None:
    env = f"WEB_{backend.upper()}_TLS"
    serve.flag(
        f"--{backend}-tls",
        env=env,
        action="store_true",
        help=f"call the {backend} over TLS (on by itself with any --{backend}-tls-* "
        "setting); plaintext beyond loopback needs --insecure",
    )
    serve.flag(
        f"--{backend}-tls-ca-file",
        env=f"{env}_CA_FILE",
        default="",
        help=f"PEM CA certificates the {backend}'s certificate must be signed by "
        "(default: the system's roots)",
    )
    serve.flag(
        f"--{backend}-tls-cert-file",
        env=f"{env}_CERT_FILE",
        default="",
        help=f"PEM certificate chain presented to the {backend} (mutual TLS)",
    )
    serve.flag(
        f"--{backend}-tls-key-file",
        env=f"{env}_KEY_FILE",
        default="",
        help=f"PEM private key of --{backend}-tls-cert-file",
    )
    serve.flag(
        f"--{backend}-tls-server-name",
        env=f"{env}_SERVER_NAME",
        default="",
        help=f"the name the {backend}'s certificate must carry, when not its host",
    )


def client_tls(args: argparse.Namespace, backend: str) -> ClientTLS | None:
    """TLS to a backend as the flags ask (files checked now), or None for plaintext, which is
    allowed to a loopback target or with --insecure."""
    prefix = backend.replace("-", "_")
    parts = ("ca_file", "cert_file", "key_file", "server_name")
    settings = tuple(getattr(args, f"{prefix}_tls_{part}") for part in parts)
    if not getattr(args, f"{prefix}_tls") and not any(settings):
        check_plaintext(
            f"the web service would call the {backend} in",
            getattr(args, prefix),
            insecure=args.insecure,
            remedy=f"--{backend}-tls (and --{backend}-tls-ca-file for a private CA)",
        )
        return None
    try:
        tls = ClientTLS(*settings)
    except ConfigError as error:
        pair = f"--{backend}-tls-cert-file and --{backend}-tls-key-file"
        raise ConfigError(f"{pair}: {error}") from None
    tls.credentials()  # every file readable and consistent, or one line now
    if tls.cert_file:
        check_expiry(tls.cert_file, f"{backend} TLS client")
    return tls


def config_from(args: argparse.Namespace) -> WebConfig:
    """The service's configuration from parsed flags, checked."""
    for name in ("max_request_bytes", "max_streams", "call_timeout"):
        if getattr(args, name) <= 0:
            raise ConfigError(f"--{name.replace('_', '-')} must be positive")
    if args.grace < 0:
        raise ConfigError("--grace must not be negative")
    return WebConfig(
        matchmaker=args.matchmaker,
        engine=args.engine,
        matchmaker_tls=client_tls(args, "matchmaker"),
        engine_tls=client_tls(args, "engine"),
        max_request_bytes=args.max_request_bytes,
        max_streams=args.max_streams,
        call_timeout=args.call_timeout,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `wargame-web`."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in ("-h", "--help")):
        args_list.insert(0, "serve")
    args = build_parser().parse_args(args_list)
    try:
        return serve(args)
    except ConfigError as error:
        fail(PROG, str(error))
    except KeyboardInterrupt:
        return 130


def _bind(address: str, service: WebService, **options: Any) -> WebServer:
    host, port = host_port(address)
    check_port_free(address)
    try:
        return WebServer((host, port), service, **options)
    except OSError as error:
        raise ConfigError(f"cannot listen on {address}: {error.strerror or error}") from None


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT, then stop gracefully."""
    configure_logging(args.log_format, args.log_level)
    log = structlog.get_logger(component="web")
    tls = server_tls(args, "the web service")
    config = config_from(args)
    service = WebService(config)
    servers = [_bind(args.listen, service, tls=tls)]
    if args.health_listen != "off":
        servers.append(_bind(args.health_listen, service, health_only=True))
    if args.metrics_listen != "off":
        from prometheus_client import start_http_server

        host, port = host_port(args.metrics_listen)
        try:
            start_http_server(port, addr=host)
        except OSError as error:
            raise ConfigError(
                f"cannot serve metrics on {args.metrics_listen}: {error.strerror or error}"
            ) from None
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    host, _ = host_port(args.listen)
    scheme = "https" if tls else "http"
    log.info(
        "web serving",
        address=f"{host}:{servers[0].port}",
        link=f"{scheme}://{host}:{servers[0].port}/",
        tls=tls.mode if tls else "off",
        matchmaker=config.matchmaker,
        engine=config.engine,
        pid=os.getpid(),
    )
    stopped = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("stopping", signal=signal.Signals(signum).name)
        stopped.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stopped.wait()
    for server in servers:
        server.shutdown()
    service.stop(args.grace)
    for server in servers:
        server.server_close()
    log.info("web stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
