"""`wargame-engine`: serve the RulesEngine, or count positions (perft).

    wargame-engine [serve] [--listen HOST:PORT] [--workers N] ...
    wargame-engine perft GAME --depth N [--position SETUP] [--option NAME=VALUE] [--divide]

Every serve flag also reads a WARGAME_ENGINE_* variable (see --help).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wargame.runtime.config import (
    ConfigError,
    Parser,
    fail,
    host_port,
    no_grpc_fork_handlers,
    quiet_grpc_core,
    read_caller_key,
)
from wargame.runtime.logs import configure_logging
from wargame.runtime.tls import ServerTLS, add_server_flags, server_tls

PROG = "wargame-engine"
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_METRICS = "127.0.0.1:9151"
DEFAULT_CONNECTION_AGE = 60.0
DEFAULT_CONNECTION_AGE_GRACE = 45.0
SEAL_KEY_BYTES = 32
# A random 32-byte key has about 30 distinct byte values; fewer than this is a placeholder
# ("00…", "0123…" repeated), never a generated key (the odds are below 1 in 10^20).
SEAL_KEY_MIN_DISTINCT = 12


def build_parser() -> Parser:
    """The command-line parser (flags and their WARGAME_ENGINE_* variables)."""
    parser = Parser(prog=PROG, description="The stateless wargame rules engine (gRPC).")
    commands = parser.add_subparsers(dest="command", metavar="{serve,perft}", parser_class=Parser)
    serve = commands.add_parser("serve", help="serve wargame.v1.RulesEngine (the default command)")
    serve.service_flags("ENGINE", DEFAULT_LISTEN, DEFAULT_METRICS)
    add_server_flags(serve, "ENGINE")
    serve.flag(
        "--workers",
        env="ENGINE_WORKERS",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes sharing the port (one per core by default)",
    )
    serve.flag(
        "--threads", env="ENGINE_THREADS", type=int, default=8, help="request threads per worker"
    )
    serve.flag(
        "--grace",
        env="ENGINE_GRACE",
        type=float,
        default=10.0,
        help="seconds in-flight calls get to finish on SIGTERM",
    )
    serve.flag(
        "--max-message-bytes",
        env="ENGINE_MAX_MESSAGE_BYTES",
        type=int,
        default=4 * 1024 * 1024,
        help="largest request or response accepted",
    )
    serve.flag(
        "--max-actions",
        env="ENGINE_MAX_ACTIONS",
        type=int,
        default=512,
        help="most actions in one ApplyActions or WriteRecord request",
    )
    serve.flag(
        "--max-record-bytes",
        env="ENGINE_MAX_RECORD_BYTES",
        type=int,
        default=1024 * 1024,
        help="longest game record ReplayRecord accepts",
    )
    serve.flag(
        "--max-suggest-seconds",
        env="ENGINE_MAX_SUGGEST_SECONDS",
        type=float,
        default=30.0,
        help="longest SuggestAction time budget accepted",
    )
    serve.flag(
        "--pool-processes",
        env="ENGINE_POOL_PROCESSES",
        type=int,
        default=2,
        help="processes per worker for expensive calls (searches, long record replays), "
        "at a lower priority than the rules calls",
    )
    serve.flag(
        "--pool-queue",
        env="ENGINE_POOL_QUEUE",
        type=int,
        default=4,
        help="expensive calls per worker that may wait for a pool process; more are refused "
        "at once (RESOURCE_EXHAUSTED, ENGINE_BUSY, with a retry hint)",
    )
    serve.flag(
        "--pool-reserved",
        env="ENGINE_POOL_RESERVED",
        type=int,
        default=1,
        help="processes per worker more, kept for the searches of calls that carry the caller "
        "key (the matchmaker's bots), which are admitted whatever other callers hold; only "
        "with --caller-key-file",
    )
    serve.flag(
        "--caller-key-file",
        env="ENGINE_CALLER_KEY_FILE",
        default="",
        help="file holding the caller key the matchmaker sends (its --engine-caller-key-file): "
        "its calls get the pool's reserved processes; at least 32 characters, the same on "
        "every replica and matchmaker",
    )
    serve.flag(
        "--max-connection-age",
        env="ENGINE_MAX_CONNECTION_AGE",
        type=float,
        default=DEFAULT_CONNECTION_AGE,
        help="seconds a client connection lives before the engine asks the client to reconnect, "
        "so clients spread over replicas added since (0: never)",
    )
    serve.flag(
        "--max-connection-age-grace",
        env="ENGINE_MAX_CONNECTION_AGE_GRACE",
        type=float,
        default=DEFAULT_CONNECTION_AGE_GRACE,
        help="seconds the calls in flight on a connection past its age get to finish "
        "(longer than the longest SuggestAction)",
    )
    serve.flag(
        "--seal-key-file",
        env="ENGINE_SEAL_KEY_FILE",
        default="",
        help="file holding the 32-byte key (hex) for sealed Attack-at-Dawn deployments and "
        "the integrity tags of the position texts the engine writes; every replica needs "
        "the same key",
    )
    serve.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)

    perft = commands.add_parser(
        "perft", help="count action sequences of each length from a position"
    )
    perft.add_argument("game", help="ruleset id: war, battle, napoleonic")
    perft.add_argument("--depth", type=int, required=True, help="largest sequence length to count")
    perft.add_argument("--position", default=None, help="set-up text of the starting position")
    perft.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an engine option (repeatable)",
    )
    perft.add_argument(
        "--divide", action="store_true", help="also count per first action at the last depth"
    )
    return parser


def before_grpc() -> None:
    """What the engine sets before gRPC loads: its core quiet, and out of the forks."""
    quiet_grpc_core()
    no_grpc_fork_handlers()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `wargame-engine`."""
    before_grpc()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in ("-h", "--help")):
        args_list.insert(0, "serve")
    args = build_parser().parse_args(args_list)
    try:
        if args.command == "perft":
            return perft_command(args)
        return serve_command(args)
    except ConfigError as error:
        fail(PROG, str(error))
    except KeyboardInterrupt:
        return 130


def _seal_key(path: str) -> bytes | None:
    """The seal key in `path` (hex), refusing a short key or a placeholder such as all zeros."""
    if not path:
        return None
    try:
        key = bytes.fromhex(Path(path).read_text(encoding="ascii").strip())
    except (OSError, ValueError) as error:
        raise ConfigError(f"cannot read the seal key from {path}: {error}") from None
    make = "make one with: python -c 'import secrets; print(secrets.token_hex(32))'"
    if len(key) != SEAL_KEY_BYTES:
        raise ConfigError(
            f"the seal key in {path} has {len(key)} bytes; it needs {SEAL_KEY_BYTES} "
            f"(64 hex digits); {make}"
        )
    if not any(key):
        raise ConfigError(f"the seal key in {path} is all zeros; {make}")
    if len(set(key)) < SEAL_KEY_MIN_DISTINCT:
        raise ConfigError(f"the seal key in {path} is a placeholder, not a random key; {make}")
    return key


def serve_command(args: argparse.Namespace) -> int:
    """Serve RulesEngine: one process, or a supervisor of `--workers` processes."""
    import structlog

    configure_logging(args.log_format, args.log_level)
    log = structlog.get_logger(component="engine")
    for name in (
        "workers",
        "threads",
        "max_message_bytes",
        "max_actions",
        "max_record_bytes",
        "pool_processes",
    ):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1")
    if args.pool_queue < 0:
        raise ConfigError("--pool-queue must be 0 or more")
    if args.pool_reserved < 0:
        raise ConfigError("--pool-reserved must be 0 or more")
    read_caller_key(args.caller_key_file, "--caller-key-file")  # one line now, not per worker
    if not args.max_suggest_seconds > 0:
        raise ConfigError("--max-suggest-seconds must be more than 0")
    for name in ("max_connection_age", "max_connection_age_grace"):
        if not getattr(args, name) >= 0:
            raise ConfigError(f"--{name.replace('_', '-')} must be 0 or more seconds")
    seal_key = _seal_key(args.seal_key_file)
    tls = server_tls(args, "the engine")  # the files, or plaintext allowed here: checked once
    metrics = None if args.metrics_listen == "off" else host_port(args.metrics_listen)
    if args.workers > 1 and not args.worker:
        from engine_service.workers import supervise
        from wargame.runtime.serving import check_port_free, free_port

        def shared(address: str) -> str:  # one port every worker binds
            check_port_free(address)
            host, port = host_port(address)
            return f"{host}:{port or free_port(host)}"

        listen = shared(args.listen)
        health = "off" if args.health_listen == "off" else shared(args.health_listen)
        worker_argv = [
            "serve",
            "--worker",
            "--workers",
            "1",
            "--listen",
            listen,
            "--health-listen",
            health,
            "--metrics-listen",
            "off",
            *_passthrough(args),
        ]
        log.info(
            "engine serving",
            address=listen,
            tls=tls.mode if tls else "off",
            health=health,
            workers=args.workers,
            pid=os.getpid(),
        )
        _preload(seal_key)
        return supervise(
            worker_argv,
            args.workers,
            grace=args.grace,
            metrics_address=metrics,
            serve_forked=lambda: main(worker_argv),
        )
    return _serve_one(args, seal_key, metrics, log, tls)


def _preload(seal_key: bytes | None) -> None:
    """Load every game's rules and AI and build the rulesets: in the supervisor, for the
    workers forked from it, and in a worker, for its pool's processes (`rulesets` keeps
    what it built). Pure Python: no gRPC object, thread or metric is made here (nor the
    metrics' module imported: it reads its folder at import), so forking stays safe."""
    import importlib

    from engine_service.convert import tags
    from engine_service.rules import games, rulesets

    rulesets(seal_key)
    tags.tag_key(seal_key)  # without a seal key, the workers share this process's own key
    for entry in games():
        if entry.ai:
            importlib.import_module(entry.ai.partition(":")[0])


def _passthrough(args: argparse.Namespace) -> list[str]:
    flags = (
        "threads",
        "grace",
        "max_message_bytes",
        "max_actions",
        "max_record_bytes",
        "max_suggest_seconds",
        "pool_processes",
        "pool_queue",
        "pool_reserved",
        "caller_key_file",
        "max_connection_age",
        "max_connection_age_grace",
        "seal_key_file",
        "tls_cert_file",
        "tls_key_file",
        "tls_client_ca_file",
        "log_format",
        "log_level",
    )
    out: list[str] = ["--insecure"] if args.insecure else []
    for name in flags:
        out += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return out


def _serve_one(
    args: argparse.Namespace,
    seal_key: bytes | None,
    metrics: tuple[str, int] | None,
    log: Any,
    tls: ServerTLS | None,
) -> int:
    from engine_service.convert.tags import tag_key
    from engine_service.handling import Limits
    from engine_service.pool import Pool
    from engine_service.rules import rulesets
    from engine_service.service import SERVICE_NAME, RulesEngine, pool_preload, pool_work
    from wargame.runtime.serving import (
        ConnectionAge,
        bound_address,
        create_server,
        register_service,
        serve,
    )
    from wargame.v1 import engine_pb2

    _preload(seal_key)  # before the pool: its processes are forks of this one (see `Pool`)
    limits = Limits(
        max_message_bytes=args.max_message_bytes,
        max_actions=args.max_actions,
        max_record_bytes=args.max_record_bytes,
        max_suggest_seconds=args.max_suggest_seconds,
        max_work_seconds=max(300.0, 2 * args.max_suggest_seconds),
    )
    # The pool's processes are forked by its spawner, a fork of this process made now, while
    # it runs one thread with the rules built: never from this process once gRPC runs threads.
    caller_key = read_caller_key(args.caller_key_file, "--caller-key-file")
    pool = Pool(
        pool_work,
        (seal_key, limits),
        processes=args.pool_processes,
        queue=args.pool_queue,
        reserved=args.pool_reserved if caller_key else 0,
        preload=pool_preload(),
        log_format=args.log_format,
        log_level=args.log_level,
    )
    try:
        servicer = RulesEngine(
            rulesets(seal_key), limits, pool, caller_key=caller_key, tag_key=tag_key(seal_key)
        )
        serving = create_server(
            args.listen,
            lambda server: register_service(
                server,
                servicer,
                engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"],
                max_request_bytes=args.max_message_bytes,
            ),
            [SERVICE_NAME],
            # Calls waiting on the pool hold threads of their own: rules calls keep `--threads`.
            max_workers=args.threads + pool.threads(),
            max_message_bytes=args.max_message_bytes,
            reuse_port=args.worker,
            connection_age=(
                ConnectionAge(args.max_connection_age, args.max_connection_age_grace)
                if args.max_connection_age > 0
                else None
            ),
            tls=tls,
            health_address=None if args.health_listen == "off" else args.health_listen,
        )
        if metrics is not None:
            from prometheus_client import start_http_server

            try:
                start_http_server(metrics[1], addr=metrics[0])
            except OSError as error:
                raise ConfigError(
                    f"cannot serve metrics on {args.metrics_listen}: {error.strerror or error}"
                ) from None
        host, _ = host_port(args.listen)
        log.info(
            "engine serving",
            address=f"{host}:{serving.port}",
            tls=tls.mode if tls else "off",
            health=bound_address(args.health_listen, serving.health_port),
            pid=os.getpid(),
            worker=os.environ.get("WARGAME_ENGINE_WORKER_NUMBER", "0"),
            pool_processes=pool.processes,
            pool_queue=pool.queue,
            pool_reserved=pool.reserved,
        )
        serve(serving, grace=args.grace, on_stop=lambda sig: log.info("stopping", signal=sig))
    finally:
        pool.close()
    log.info("engine stopped")
    return 0


def perft_command(args: argparse.Namespace) -> int:
    """Print perft counts for depths 1..N (and per first action with --divide)."""
    from engine_service.rules import find_ruleset
    from engine_service.rules.errors import RuleError

    if args.depth < 1:
        raise ConfigError("--depth must be at least 1")
    options: dict[str, str] = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--option {item!r} is not NAME=VALUE")
        options[name.strip()] = value.strip()
    try:
        ruleset = find_ruleset(args.game)
        state = ruleset.new_game(ruleset.resolve_options(options), args.position)
    except RuleError as error:
        raise ConfigError(error.message) from None
    for depth in range(1, args.depth + 1):
        started = time.perf_counter()
        nodes = ruleset.perft(state, depth)
        seconds = time.perf_counter() - started
        rate = nodes / seconds if seconds else 0.0
        print(f"depth {depth}: {nodes} nodes ({seconds:.3f} s, {rate:,.0f} nodes/s)", flush=True)
    if args.divide:
        total = 0
        for notation, count in ruleset.divide(state, args.depth):
            print(f"{notation}: {count}")
            total += count
        print(f"total: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
