"""`wargame-matchmaker` start-up and shutdown as a real process: one clear line and a
non-zero exit for bad configuration, never a traceback; a clean stop on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import redis
import structlog

from matchmaker import keys
from matchmaker.main import build_parser, main, settings_from
from matchmaker.main import serve as serve_in_process
from tests.matchmaker.conftest import start_matchmaker_process
from tests.servers import ROOT, busy_port, free_port, matchmaker_key_env, start_redis
from wargame.runtime.config import ConfigError
from wargame.runtime.tls import ClientTLS
from wargame.v1 import matchmaker_pb2, matchmaker_pb2_grpc

pytestmark = pytest.mark.system


KEY_DIR = Path(tempfile.mkdtemp(prefix="wargame-mm-key-"))


def launch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matchmaker.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **matchmaker_key_env(KEY_DIR), **(env or {})},
    )


def serve(
    redis_url: str, *, listen: str = "", metrics: str = "off"
) -> subprocess.CompletedProcess[str]:
    """`serve` listening on `listen` (a free loopback port if none), with metrics on
    `metrics`, on the Redis at `redis_url`."""
    listen = listen or f"127.0.0.1:{free_port()}"
    return launch(
        "serve", "--listen", listen, "--metrics-listen", metrics, "--redis-url", redis_url
    )


def assert_one_line_failure(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("wargame-matchmaker") and " error: " in lines[0], lines[0]
    assert words in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_unknown_flag() -> None:
    assert_one_line_failure(
        launch("serve", "--no-such-flag"), "unrecognized arguments: --no-such-flag"
    )


def test_bad_value_from_the_environment() -> None:
    result = launch("serve", env={"WARGAME_MATCHMAKER_ABANDON_AFTER": "soon"})
    assert_one_line_failure(result, "WARGAME_MATCHMAKER_ABANDON_AFTER")


def test_negative_timeout() -> None:
    assert_one_line_failure(
        launch("serve", "--abandon-after", "-1"), "--abandon-after must not be negative"
    )


def test_unreachable_redis() -> None:
    port = free_port()
    result = serve(f"redis://127.0.0.1:{port}/0")
    assert_one_line_failure(result, f"cannot use Redis at redis://127.0.0.1:{port}/0")


def test_bad_redis_url() -> None:
    result = serve("http://nowhere")
    assert_one_line_failure(result, "--redis-url")


def test_busy_port(redis_url: str) -> None:
    with busy_port() as port:
        result = serve(redis_url, listen=f"127.0.0.1:{port}")
    assert_one_line_failure(result, f"cannot listen on 127.0.0.1:{port}")


def test_busy_metrics_port(redis_url: str) -> None:
    with busy_port() as port:
        result = serve(redis_url, metrics=f"127.0.0.1:{port}")
    assert_one_line_failure(result, "cannot serve metrics")


def test_help_lists_every_variable() -> None:
    result = launch("serve", "--help")
    assert result.returncode == 0
    for variable in (
        "WARGAME_REDIS_URL",
        "WARGAME_ENGINE",
        "WARGAME_MATCHMAKER_LISTEN",
        "WARGAME_MATCHMAKER_ABANDON_AFTER",
        "WARGAME_MATCHMAKER_RATE_LIMIT",
    ):
        assert variable in result.stdout


def test_serves_then_stops_cleanly_on_sigterm(redis_url: str, tmp_path: Path) -> None:
    process = start_matchmaker_process(tmp_path, redis_url, "127.0.0.1:1")
    with grpc.insecure_channel(process.address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        assert stub.Echo(matchmaker_pb2.EchoRequest(payload=b"hi"), timeout=5).payload == b"hi"
    assert process.stop(signal.SIGTERM) == 0
    log = process.log()
    assert "matchmaker stopped" in log and "Traceback" not in log


def parsed(*flags: str) -> argparse.Namespace:
    """`serve` flags as the command line gives them, with a secret key file."""
    key_file = matchmaker_key_env(KEY_DIR)["WARGAME_MATCHMAKER_SECRET_KEY_FILE"]
    return build_parser().parse_args(["serve", "--secret-key-file", key_file, *flags])


@pytest.mark.parametrize("level", ["0", "6", "9"])
def test_a_bot_level_outside_1_to_5_is_refused(level: str) -> None:
    with pytest.raises(ConfigError, match="--bot-level must be"):
        settings_from(parsed("--bot-level", level))


@pytest.mark.parametrize("level", [1, 5])
def test_bot_levels_1_to_5_are_taken(level: int) -> None:
    assert settings_from(parsed("--bot-level", str(level))).bot_level == level


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """`serve` configures logging for the process: the tests' configuration afterwards."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        structlog.configure(**saved)
        root.handlers[:] = handlers
        root.setLevel(level)


def test_the_start_line_names_the_process(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` in this process: its start line (JSON, on stderr) carries this process's
    id and component, by which an operator finds the process that logged it, and says
    whether it speaks TLS (off: loopback, no certificate; nor to the engine); SIGTERM
    stops it."""
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    args = parsed(
        "--listen", f"127.0.0.1:{free_port()}", "--metrics-listen", "off", "--log-format", "json",
        "--redis-url", redis_url, "--engine", "127.0.0.1:1", "--grace", "1",
    )  # fmt: skip

    async def serve_until_started() -> int:
        served = asyncio.create_task(serve_in_process(args, settings_from(args)))
        while "matchmaker serving" not in stderr.getvalue():
            if served.done():
                return await served
            await asyncio.sleep(0.01)
        signal.raise_signal(signal.SIGTERM)  # handled by the server's loop from now on
        return await served

    with logging_restored():
        assert asyncio.run(serve_until_started()) == 0
    lines = [json.loads(line) for line in stderr.getvalue().splitlines() if line.startswith("{")]
    started = next(line for line in lines if line["event"] == "matchmaker serving")
    assert started["pid"] == os.getpid()
    assert (started["component"], started["tls"], started["engine_tls"]) == (
        "matchmaker",
        "off",
        "off",
    )
    stopped = lines[-1]
    assert (stopped["event"], stopped["component"]) == ("matchmaker stopped", "matchmaker")


def test_the_listen_addresses_are_read_from_the_matchmakers_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WARGAME_MATCHMAKER_LISTEN and WARGAME_MATCHMAKER_METRICS_LISTEN (the names the
    deployment sets) give the addresses when no flag does."""
    monkeypatch.setenv("WARGAME_MATCHMAKER_LISTEN", "127.0.0.1:7001")
    monkeypatch.setenv("WARGAME_MATCHMAKER_METRICS_LISTEN", "off")
    args = parsed()
    assert (args.listen, args.metrics_listen) == ("127.0.0.1:7001", "off")


def test_settings_read_their_matchmaker_variables_and_shared_ones_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A setting reads WARGAME_MATCHMAKER_<SETTING>; the Redis URL and the engine address,
    which the other commands share, read WARGAME_REDIS_URL and WARGAME_ENGINE (README)."""
    monkeypatch.setenv("WARGAME_MATCHMAKER_ABANDON_AFTER", "42")
    monkeypatch.setenv("WARGAME_REDIS_URL", "redis://127.0.0.1:1/3")
    monkeypatch.setenv("WARGAME_ENGINE", "127.0.0.1:2")
    monkeypatch.setenv("WARGAME_MATCHMAKER_REDIS_URL", "redis://127.0.0.1:9/9")
    settings = settings_from(parsed())
    assert (settings.abandon_after, settings.redis_url, settings.engine) == (
        42.0,
        "redis://127.0.0.1:1/3",
        "127.0.0.1:2",
    )


def test_an_unknown_command_is_refused_in_one_line_naming_the_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The error names the commands as the usage line shows them, `{serve,migrate}`."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["bogus"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "wargame-matchmaker: error: argument {serve,migrate}: invalid choice: 'bogus' "
        "(choose from 'serve', 'migrate') (see wargame-matchmaker --help)\n"
    )


def test_the_transport_settings_are_read_from_the_matchmakers_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The health port, plaintext beyond loopback and the TLS files come from the
    WARGAME_MATCHMAKER_* variables the deployment sets."""
    monkeypatch.setenv("WARGAME_MATCHMAKER_HEALTH_LISTEN", "127.0.0.1:7002")
    monkeypatch.setenv("WARGAME_MATCHMAKER_INSECURE", "1")
    monkeypatch.setenv("WARGAME_MATCHMAKER_TLS_CERT_FILE", "/certs/tls.crt")
    monkeypatch.setenv("WARGAME_MATCHMAKER_TLS_KEY_FILE", "/certs/tls.key")
    monkeypatch.setenv("WARGAME_MATCHMAKER_TLS_CLIENT_CA_FILE", "/certs/ca.crt")
    args = parsed()
    assert args.health_listen == "127.0.0.1:7002" and args.insecure
    assert (args.tls_cert_file, args.tls_key_file, args.tls_client_ca_file) == (
        "/certs/tls.crt",
        "/certs/tls.key",
        "/certs/ca.crt",
    )


def test_the_engine_is_called_over_tls_when_the_matchmakers_variable_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WARGAME_MATCHMAKER_ENGINE_TLS (README) turns on TLS to the engine without a flag."""
    monkeypatch.setenv("WARGAME_MATCHMAKER_ENGINE_TLS", "1")
    settings = settings_from(parsed("--engine", "127.0.0.1:1"))
    assert settings.engine_tls == ClientTLS()


def test_the_engine_tls_files_and_name_are_read_from_the_matchmakers_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CA, the client certificate and key (mutual TLS) and the engine's name for TLS
    come from the WARGAME_MATCHMAKER_ENGINE_TLS_* variables the README lists."""
    monkeypatch.setenv("WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE", "/certs/ca.crt")
    monkeypatch.setenv("WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE", "/certs/mm.crt")
    monkeypatch.setenv("WARGAME_MATCHMAKER_ENGINE_TLS_KEY_FILE", "/certs/mm.key")
    monkeypatch.setenv("WARGAME_MATCHMAKER_ENGINE_TLS_SERVER_NAME", "engine.internal")
    args = parsed()
    assert (
        args.engine_tls_ca_file,
        args.engine_tls_cert_file,
        args.engine_tls_key_file,
        args.engine_tls_server_name,
    ) == ("/certs/ca.crt", "/certs/mm.crt", "/certs/mm.key", "engine.internal")


def test_the_engine_is_called_over_tls_as_the_flags_ask() -> None:
    settings = settings_from(parsed("--engine-tls", "--engine-tls-server-name", "engine.internal"))
    assert settings.engine_tls == ClientTLS(server_name="engine.internal")
    assert settings_from(parsed("--engine", "127.0.0.1:1")).engine_tls is None


def test_a_distant_engine_in_plaintext_is_refused_saying_who_would_call_it() -> None:
    """README (Transport security): off loopback the matchmaker refuses to call the engine
    without TLS, in one line that says who would speak plaintext, where, and the flags
    that give TLS or allow it; with --insecure it calls it in plaintext."""
    with pytest.raises(ConfigError) as refused:
        settings_from(parsed("--engine", "engine.internal:50051"))
    message = str(refused.value)
    assert message.startswith(
        "the matchmaker would call the engine in plaintext gRPC on engine.internal:50051, "
        "beyond this machine"
    )
    assert "--engine-tls" in message and "--insecure" in message
    insecure = settings_from(parsed("--engine", "engine.internal:50051", "--insecure"))
    assert insecure.engine_tls is None


def test_main_refuses_a_busy_port_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """`main` in this process, flags without a command (so `serve`): the listen address is
    taken, which `serve` finds out before it connects to anything."""
    key_file = matchmaker_key_env(KEY_DIR)["WARGAME_MATCHMAKER_SECRET_KEY_FILE"]
    with busy_port() as port, logging_restored(), pytest.raises(SystemExit) as exited:
        main(
            ["--secret-key-file", key_file, "--listen", f"127.0.0.1:{port}",
             "--metrics-listen", "off", "--engine", "127.0.0.1:1"]
        )  # fmt: skip
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(
        f"wargame-matchmaker: error: cannot listen on 127.0.0.1:{port}: "
    )


def test_a_negative_setting_is_refused_naming_its_flag() -> None:
    with pytest.raises(ConfigError, match=r"^--abandon-after must not be negative$"):
        settings_from(parsed("--abandon-after", "-1"))


def test_zero_is_refused_where_it_would_mean_nothing() -> None:
    with pytest.raises(ConfigError, match=r"^--abandon-after must be positive$"):
        settings_from(parsed("--abandon-after", "0"))


# The settings where zero turns a limit, a growth or a wait off (the flags' help says so).
ZERO_TURNS_OFF = [
    "--rate-limit",
    "--window-growth",
    "--grace",
    "--replica-wait",
    "--register-peer-rate",
    "--register-rate",
    "--guess-player-rate",
    "--guess-peer-rate",
    "--guess-rate",
    "--max-open-games",
    "--rematch-follow",
    "--finished-stream-keep",
]


@pytest.mark.parametrize("flag", ZERO_TURNS_OFF)
def test_zero_is_taken_where_it_turns_something_off(flag: str) -> None:
    settings = settings_from(parsed(flag, "0"))
    assert getattr(settings, flag[2:].replace("-", "_")) == 0


# Each token bucket's rate flag and burst flag.
BUCKETS = [
    ("--rate-limit", "--rate-burst"),
    ("--register-peer-rate", "--register-peer-burst"),
    ("--register-rate", "--register-burst"),
    ("--guess-player-rate", "--guess-player-burst"),
    ("--guess-peer-rate", "--guess-peer-burst"),
    ("--guess-rate", "--guess-burst"),
]


@pytest.mark.parametrize(("rate", "burst"), BUCKETS)
def test_a_bucket_that_limits_must_hold_one_request(rate: str, burst: str) -> None:
    """A burst below one would refuse every request; a bucket turned off (rate 0) is not
    looked at."""
    with pytest.raises(ConfigError, match=f"^{burst} must be at least 1$"):
        settings_from(parsed(rate, "2", burst, "0.5"))
    unlimited = settings_from(parsed(rate, "0", burst, "0.5"))
    assert getattr(unlimited, burst[2:].replace("-", "_")) == 0.5


def test_a_trusted_proxy_that_is_no_network_is_refused_naming_it() -> None:
    with pytest.raises(
        ConfigError, match=r"^--trusted-proxies: 'nowhere' is not an address or network$"
    ):
        settings_from(parsed("--trusted-proxies", "10.0.0.0/8,nowhere"))
    assert settings_from(parsed("--trusted-proxies", "10.0.0.0/8")).trusted_proxies == "10.0.0.0/8"


def test_a_redis_that_evicts_keys_is_refused(tmp_path: Path) -> None:
    """A Redis that may evict keys when full would drop games in play: refused at start."""
    evicting = start_redis(tmp_path / "redis", extra=("--maxmemory-policy", "allkeys-lru"))
    try:
        result = serve(evicting.url)
    finally:
        evicting.stop()
    assert_one_line_failure(
        result, "maxmemory-policy is allkeys-lru: Redis would evict games and players when full"
    )


def test_a_redis_of_a_newer_key_layout_is_refused(redis_url: str) -> None:
    """A Redis a newer release migrated holds keys this one cannot read: it refuses to
    start (and to migrate) rather than write what it does not know."""
    client = redis.Redis.from_url(redis_url)
    client.set(keys.schema(), keys.SCHEMA + 1)
    client.close()
    words = f"Redis holds key layout {keys.SCHEMA + 1}, newer than this matchmaker knows"
    assert_one_line_failure(serve(redis_url), words)
    assert_one_line_failure(launch("migrate", "--redis-url", redis_url), words)
