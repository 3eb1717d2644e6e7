"""`wargame-matchmaker`: serve wargame.v1.Matchmaker.

    wargame-matchmaker [serve] --secret-key-file FILE [--listen HOST:PORT] [--redis-url URL]
                       [--engine TARGET] ...
    wargame-matchmaker migrate [--redis-url URL]

`migrate` moves Redis to this release's key layout (`schema.py`) once every replica runs
this release; it is idempotent, resumable and safe while games are played.

Every flag also reads a WARGAME_* variable (see --help). Bad configuration, a busy port or
an unreachable Redis end the start-up with one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from collections.abc import Sequence

import structlog
from prometheus_client import start_http_server

from matchmaker import schema
from matchmaker.limits import trusted_networks
from matchmaker.redis_client import RedisSetupError, connect, is_cluster
from matchmaker.schema import SETUP_ERRORS, Layout
from matchmaker.server import Replica
from matchmaker.settings import Settings
from matchmaker.vault import read_secret_key
from wargame.runtime.collection import pace_full_collections
from wargame.runtime.config import ConfigError, Parser, fail, host_port, read_caller_key
from wargame.runtime.logs import configure_logging, redact_url
from wargame.runtime.serving import aio_serve, bound_address, check_port_free
from wargame.runtime.tls import (
    ClientTLS,
    add_server_flags,
    check_expiry,
    check_plaintext,
    server_tls,
)

PROG = "wargame-matchmaker"
DEFAULT_LISTEN = "127.0.0.1:50052"
DEFAULT_METRICS = "127.0.0.1:9152"

# Settings exposed as flags: (field, help). Types and defaults come from `Settings`; the
# environment variable of a field is WARGAME_<suffix> (`env_suffix`).
FLAGS: tuple[tuple[str, str], ...] = (
    (
        "redis_url",
        "the Redis holding every session: a standalone Redis, any node of a Redis Cluster "
        "(found out by itself) or a managed Redis (rediss://:password@host:port/0 for TLS)",
    ),
    ("engine", "the rules engine's gRPC target (host:port or dns:///name:port)"),
    ("grace", "seconds in-flight calls get to finish on SIGTERM"),
    ("redis_timeout", "seconds a Redis command may take"),
    (
        "redis_connections",
        "Redis connections for commands, per Redis node; more commands at once wait",
    ),
    (
        "replica_wait",
        "seconds a commit waits for a Redis replica to hold it, when its primary has "
        "replicas (0: do not wait)",
    ),
    (
        "index_shards",
        "keys each fleet-wide index (due work, browse lists, queues) is split over; "
        "the same on every replica",
    ),
    ("engine_timeout", "deadline of one engine call, in seconds"),
    (
        "engine_connections",
        "connections to the engine, used in turn (spreads calls over its worker processes)",
    ),
    (
        "engine_retries",
        "attempts of an engine call that finds it unavailable",
    ),
    (
        "retry_hint",
        "seconds clients are told to wait before retrying UNAVAILABLE",
    ),
    (
        "rate_limit",
        "requests per second a player may make, sustained (0: no limit)",
    ),
    ("rate_burst", "requests a player may make in a burst"),
    (
        "register_peer_rate",
        "new players per second one address may register, sustained (0: no limit)",
    ),
    (
        "register_peer_burst",
        "new players one address may register in a burst",
    ),
    (
        "register_rate",
        "new players per second from every address together, sustained (0: no limit)",
    ),
    (
        "register_burst",
        "new players every address together may register in a burst",
    ),
    (
        "guess_player_rate",
        "wrong invite codes per second a player may try, sustained (0: no limit)",
    ),
    ("guess_player_burst", "wrong invite codes in a burst"),
    (
        "guess_peer_rate",
        "wrong invite codes per second from one address, sustained (0: no limit)",
    ),
    (
        "guess_peer_burst",
        "wrong invite codes from one address in a burst",
    ),
    (
        "guess_rate",
        "wrong invite codes per second from everyone, sustained (0: no limit)",
    ),
    ("guess_burst", "wrong invite codes from everyone in a burst"),
    ("chat_rate", "chat lines per second a player may say, sustained (0: no limit)"),
    ("chat_burst", "chat lines a player may say in a burst"),
    ("chat_max_chars", "the longest chat line, in characters"),
    ("chat_keep", "chat lines a game keeps (the newest)"),
    (
        "trusted_proxies",
        "proxies (comma-separated CIDRs) whose x-forwarded-for names the caller's address",
    ),
    (
        "max_open_games",
        "unfinished games one player may sit in at once (0: no limit)",
    ),
    (
        "abandon_after",
        "seconds after the warning that a side to act which has left loses as abandoned",
    ),
    (
        "presence_interval",
        "seconds between renewals of a watching player's presence",
    ),
    (
        "presence_ttl",
        "seconds a presence lasts unless renewed (then the player has left)",
    ),
    (
        "presence_check",
        "seconds between the sweeper's looks at who is present in a game",
    ),
    ("player_ttl", "seconds an idle player (and its tokens) is kept"),
    (
        "guest_ttl",
        "seconds an idle player who never played a game is kept",
    ),
    ("open_game_ttl", "seconds an open game waits for an opponent"),
    (
        "running_game_ttl",
        "seconds a running game is kept after its last change",
    ),
    (
        "finished_game_ttl",
        "seconds a finished game and its record are kept",
    ),
    (
        "idempotency_ttl",
        "seconds a submission's idempotency key is remembered",
    ),
    (
        "stream_maxlen",
        "updates kept per game for watchers to resume from",
    ),
    (
        "finished_stream_keep",
        "versions a finished game keeps for late watchers (0: all, while its stream lives)",
    ),
    ("bot_time", "default bot thinking time per action, in seconds"),
    ("bot_max_time", "longest bot thinking time a game may ask for"),
    ("bot_level", "the bot's strength (1-5) when a game asks for none"),
    (
        "draw_answer_time",
        "longest time in seconds the bot thinks about a draw offer",
    ),
    (
        "rematch_follow",
        "seconds a finished game's watcher may wait for a rematch offer",
    ),
    ("window_base", "rating difference quick match accepts at once"),
    ("window_growth", "rating difference added per second waited"),
    ("window_max", "largest rating difference quick match accepts"),
    (
        "ticket_liveness",
        "seconds a queue ticket lives without its stream",
    ),
    (
        "queue_status_interval",
        "seconds between queue status checks",
    ),
    ("pair_interval", "seconds between pairing rounds"),
    (
        "match_create_grace",
        "seconds a matched player waits for the pairer to create the game before creating it",
    ),
    (
        "sweep_interval",
        "seconds between looks for due clocks, bots, timeouts",
    ),
    (
        "sweep_lease",
        "seconds a sweeper's claim on a game lasts unless renewed (it is, while the work "
        "runs): a dead replica's games are taken over after this",
    ),
    (
        "sweep_concurrency",
        "due games worked on at once per replica",
    ),
    (
        "watch_block",
        "seconds of silence after which a live-update listener checks its Redis connection",
    ),
    (
        "max_watchers",
        "open WatchGame streams a replica holds; more are refused (RESOURCE_EXHAUSTED)",
    ),
    (
        "watch_seat_reserve",
        "of --max-watchers, the streams only seated players may open (their own games)",
    ),
    ("max_watchers_per_address", "spectator streams one caller address may hold per replica"),
    ("max_watchers_per_player", "streams one player may hold per replica"),
    (
        "watch_connections",
        "Redis connections for watchers' reads, per Redis node, apart from --redis-connections",
    ),
    (
        "watch_openings",
        "stream openings doing their reads at once (few: a burst leaves room for other calls)",
    ),
    (
        "watch_queue",
        "stream openings without a token that may wait at once; more are refused "
        "(RESOURCE_EXHAUSTED)",
    ),
)

# The settings whose variables the matchmaker shares with the other services' (no prefix).
SHARED_ENV: dict[str, str] = {"redis_url": "REDIS_URL", "engine": "ENGINE"}


def env_suffix(name: str) -> str:
    """The environment suffix of a setting: MATCHMAKER_<FIELD> unless it is shared."""
    return SHARED_ENV.get(name, "MATCHMAKER_" + name.upper())


ZERO_ALLOWED = frozenset(
    {
        "rate_limit",
        "window_growth",
        "grace",
        "replica_wait",
        "register_peer_rate",
        "register_rate",
        "guess_player_rate",
        "guess_peer_rate",
        "guess_rate",
        "chat_rate",
        "max_open_games",
        "rematch_follow",
        "finished_stream_keep",
        "watch_seat_reserve",
    }
)


def build_parser() -> Parser:
    """The command-line parser (flags and their WARGAME_* variables)."""
    parser = Parser(
        prog=PROG,
        description="The wargame matchmaker (gRPC): players, games, queues, "
        "live play, clocks and ratings, all state in Redis.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{serve,migrate}", parser_class=Parser)
    serve = commands.add_parser("serve", help="serve wargame.v1.Matchmaker (the default command)")
    serve.service_flags("MATCHMAKER", DEFAULT_LISTEN, DEFAULT_METRICS)
    serve.flag(
        "--secret-key-file",
        env="MATCHMAKER_SECRET_KEY_FILE",
        default="",
        help="file holding the installation's 32-byte secret key (64 hex digits, the same on "
        "every replica): bot secrets and hidden deployments at rest derive from it",
    )
    add_server_flags(serve, "MATCHMAKER")
    _engine_tls_flags(serve)
    defaults = Settings()
    for name, text in FLAGS:
        default = getattr(defaults, name)
        serve.flag(
            "--" + name.replace("_", "-"),
            env=env_suffix(name),
            default=default,
            type=type(default),
            help=text,
        )
    migrate = commands.add_parser(
        "migrate",
        help="move Redis to this release's key layout, once every replica runs this release "
        "(idempotent, resumable, safe while games are played)",
    )
    migrate.flag(
        "--redis-url",
        env=env_suffix("redis_url"),
        default=defaults.redis_url,
        help="the Redis holding every session (as for serve)",
    )
    migrate.flag(
        "--wait",
        env="MATCHMAKER_MIGRATE_WAIT",
        default=2 * Layout.FRESH,
        type=float,
        help="seconds the replicas get to read the new layout before due times move "
        "(they read it every 5 s)",
    )
    return parser


def _engine_tls_flags(serve: Parser) -> None:
    serve.flag(
        "--engine-tls",
        env="MATCHMAKER_ENGINE_TLS",
        action="store_true",
        help="call the engine over TLS (on by itself with any --engine-tls-* setting); "
        "plaintext to an engine beyond loopback needs --insecure",
    )
    serve.flag(
        "--engine-tls-ca-file",
        env="MATCHMAKER_ENGINE_TLS_CA_FILE",
        default="",
        help="PEM CA certificates the engine's certificate must be signed by "
        "(default: the system's roots)",
    )
    serve.flag(
        "--engine-tls-cert-file",
        env="MATCHMAKER_ENGINE_TLS_CERT_FILE",
        default="",
        help="PEM certificate chain this matchmaker presents to the engine (mutual TLS; with "
        "--engine-tls-key-file; renewed files are used from the next minute on)",
    )
    serve.flag(
        "--engine-caller-key-file",
        env="MATCHMAKER_ENGINE_CALLER_KEY_FILE",
        default="",
        help="file holding the engine's caller key (its --caller-key-file): the bots' "
        "searches then get the engine's reserved processes, whatever strangers ask of it",
    )
    serve.flag(
        "--engine-tls-key-file",
        env="MATCHMAKER_ENGINE_TLS_KEY_FILE",
        default="",
        help="PEM private key of --engine-tls-cert-file",
    )
    serve.flag(
        "--engine-tls-server-name",
        env="MATCHMAKER_ENGINE_TLS_SERVER_NAME",
        default="",
        help="the name the engine's certificate must carry, when not the host of --engine",
    )


def engine_tls(args: argparse.Namespace) -> ClientTLS | None:
    """TLS to the engine as the flags ask (files checked now), or None for plaintext, which
    is allowed to a loopback engine or with --insecure."""
    settings = (
        args.engine_tls_ca_file,
        args.engine_tls_cert_file,
        args.engine_tls_key_file,
        args.engine_tls_server_name,
    )
    if not args.engine_tls and not any(settings):
        check_plaintext(
            "the matchmaker would call the engine in",
            args.engine,
            insecure=args.insecure,
            remedy="--engine-tls (and --engine-tls-ca-file for a private CA)",
        )
        return None
    try:
        tls = ClientTLS(*settings)
    except ConfigError as error:
        raise ConfigError(f"--engine-tls-cert-file and --engine-tls-key-file: {error}") from None
    tls.credentials()  # every file readable and consistent, or one line now
    if tls.cert_file:
        check_expiry(tls.cert_file, "engine TLS client")
    return tls


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from parsed flags, checked."""
    values = {name: getattr(args, name) for name, _ in FLAGS}
    settings = dataclasses.replace(Settings(), **values)
    for name, _ in FLAGS:
        value = getattr(settings, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            flag = "--" + name.replace("_", "-")
            if value < 0:
                raise ConfigError(f"{flag} must not be negative")
            if value == 0 and name not in ZERO_ALLOWED:
                raise ConfigError(f"{flag} must be positive")
    for rate, burst in LIMITS:
        if getattr(settings, rate) and getattr(settings, burst) < 1:
            raise ConfigError(f"--{burst.replace('_', '-')} must be at least 1")
    if not 1 <= settings.bot_level <= 5:
        raise ConfigError("--bot-level must be 1 to 5")
    try:
        trusted_networks(settings.trusted_proxies)
    except ValueError as error:
        raise ConfigError(f"--trusted-proxies: {error}") from None
    return dataclasses.replace(
        settings,
        secret_key=read_secret_key(args.secret_key_file),
        engine_tls=engine_tls(args),
        engine_caller_key=read_caller_key(args.engine_caller_key_file, "--engine-caller-key-file"),
    )


# Each token bucket's rate and burst settings: a bucket that limits holds at least one.
LIMITS = (
    ("rate_limit", "rate_burst"),
    ("register_peer_rate", "register_peer_burst"),
    ("register_rate", "register_burst"),
    ("guess_player_rate", "guess_player_burst"),
    ("guess_peer_rate", "guess_peer_burst"),
    ("guess_rate", "guess_burst"),
    ("chat_rate", "chat_burst"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `wargame-matchmaker`."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in ("-h", "--help")):
        args_list.insert(0, "serve")
    args = build_parser().parse_args(args_list)
    try:
        if args.command == "migrate":
            return asyncio.run(migrate(args.redis_url, args.wait))
        settings = settings_from(args)
        return asyncio.run(serve(args, settings))
    except ConfigError as error:
        fail(PROG, str(error))
    except KeyboardInterrupt:
        return 130


async def migrate(redis_url: str, wait: float) -> int:
    """`wargame-matchmaker migrate`: what it did, a line at a time on stdout."""
    where = f"cannot migrate Redis at {redact_url(redis_url)}"
    try:
        redis = await connect(redis_url, socket_timeout=30.0, connections=4)
    except RedisSetupError as error:
        raise ConfigError(f"{where}: {error}") from None
    try:
        await schema.migrate(redis, lambda line: print(line, flush=True), wait)
    except SETUP_ERRORS as error:
        raise ConfigError(f"{where}: {str(error).splitlines()[0]}") from None
    finally:
        await redis.aclose()
    return 0


async def serve(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until SIGTERM/SIGINT, then stop gracefully."""
    configure_logging(args.log_format, args.log_level)
    log = structlog.get_logger(component="matchmaker")
    tls = server_tls(args, "the matchmaker")
    # Probe first: gRPC itself would print its own error lines about a busy port.
    check_port_free(args.listen)
    replica = await Replica.connect(settings)
    try:
        serving = replica.server(
            args.listen,
            tls=tls,
            health_listen=None if args.health_listen == "off" else args.health_listen,
        )
    except ConfigError:
        await replica.close()
        raise
    if args.metrics_listen != "off":
        host, port = host_port(args.metrics_listen)
        try:
            start_http_server(port, addr=host)
        except OSError as error:
            await replica.close()
            raise ConfigError(
                f"cannot serve metrics on {args.metrics_listen}: {error.strerror or error}"
            ) from None
    host, _ = host_port(args.listen)
    replica.start_workers()
    log.info(
        "matchmaker serving",
        address=f"{host}:{serving.port}",
        tls=tls.mode if tls else "off",
        health=bound_address(args.health_listen, serving.health_port),
        redis=redact_url(settings.redis_url),
        redis_cluster=is_cluster(replica.redis),
        index_shards=replica.store.read_shards,
        engine=settings.engine,
        engine_tls=settings.engine_tls.mode if settings.engine_tls else "off",
        pid=os.getpid(),
    )

    def on_stop(signal_name: str) -> None:
        log.info("stopping", signal=signal_name)
        replica.begin_shutdown()

    # Past start-up, so that what it built is frozen out of every collection.
    collecting = asyncio.create_task(pace_full_collections(replica.stopping), name="collection")
    await aio_serve(serving, grace=settings.grace, on_stop=on_stop)
    await replica.shutdown(None, settings.grace)
    await collecting
    log.info("matchmaker stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
