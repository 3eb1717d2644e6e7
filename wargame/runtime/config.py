"""Command-line configuration: every flag has a `WARGAME_*` environment variable.

Flags win over the environment, the environment over the defaults; `--help` shows the
variable and default of every flag. Bad configuration ends with one clear line on stderr
and a non-zero exit (`ConfigError`), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn


def quiet_grpc_core() -> None:
    """Keep gRPC's C core from printing its own log lines (our errors are one line already).

    Call before grpc is imported; an operator may still set GRPC_VERBOSITY to see them.
    """
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")


def no_grpc_fork_handlers() -> None:
    """Keep gRPC's C core out of this process's forks. Its fork handlers (on unless
    GRPC_ENABLE_FORK_SUPPORT says otherwise) pause and reset its threads around each fork,
    and are skipped when another thread is in gRPC at that moment; a fork made after such a
    skip that forks again may crash in them. The engine forks its pool's spawner, which forks
    the search processes (`engine_service.pool`): forks made before gRPC serves, none of
    which uses gRPC, so the handlers have nothing to save.

    Call before grpc is imported.
    """
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")


class ConfigError(Exception):
    """A configuration problem to report in one line before exiting with status 2."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a flag's default only when there is one worth showing (not empty, not repeated)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if default in (None, "", False, [], argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and whose flags read WARGAME_* variables."""

    def __init__(self, *args: Any, env_prefix: str = "WARGAME_", **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self.env_prefix = env_prefix

    def error(self, message: str) -> NoReturn:
        """Print `prog: error: message (see --help)` and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def flag(self, name: str, *, env: str | None = None, **kwargs: Any) -> argparse.Action:
        """Add `--name`, defaulting to $WARGAME_<ENV> when set (converted by `type`)."""
        var = self.env_prefix + (env or name.lstrip("-").replace("-", "_").upper())
        if var in os.environ:
            raw = os.environ[var]
            switch = kwargs.get("action") == "store_true"
            convert = switch_value if switch else kwargs.get("type", str)
            try:
                kwargs["default"] = convert(raw)
            except (TypeError, ValueError, argparse.ArgumentTypeError):
                self.error(f"${var}={raw!r} is not a valid value for {name}")
        help_text = kwargs.get("help", "")
        kwargs["help"] = f"{help_text} [env {var}]".strip()
        return self.add_argument(name, **kwargs)

    def service_flags(self, service: str, listen: str, metrics: str) -> None:
        """The flags every service has: where it listens, its metrics page, its logs.

        `service` names their variables: WARGAME_<SERVICE>_LISTEN, ..._METRICS_LISTEN.
        """
        self.flag(
            "--listen",
            env=f"{service}_LISTEN",
            default=listen,
            type=listen_address,
            help="address to serve gRPC on (port 0 picks a free port)",
        )
        self.flag(
            "--metrics-listen",
            env=f"{service}_METRICS_LISTEN",
            default=metrics,
            type=address_or_off,
            help="address of the Prometheus metrics page, or 'off'",
        )
        self.flag(
            "--log-format",
            env="LOG_FORMAT",
            default="auto",
            choices=("auto", "json", "console"),
            help="log lines as JSON or readable console text (auto: console on a terminal)",
        )
        self.flag(
            "--log-level",
            env="LOG_LEVEL",
            default="info",
            choices=("debug", "info", "warning", "error"),
            help="lowest level logged",
        )


def switch_value(text: str) -> bool:
    """The value of an on/off variable: 1/true/yes/on or 0/false/no/off (or empty)."""
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"{text!r} is neither on nor off")


def listen_address(text: str) -> str:
    """A host:port flag value (argparse type)."""
    try:
        host_port(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def address_or_off(text: str) -> str:
    """A host:port flag value, or 'off' (argparse type)."""
    if text.lower() in ("", "0", "off", "none"):
        return "off"
    return listen_address(text)


CALLER_KEY_MIN_CHARS = 32  # a caller key is a random secret: 64 hex digits make a good one
CALLER_KEY_HEADER = "x-wargame-caller-key"  # the metadata header that carries it


def read_caller_key(path: str, flag: str) -> str:
    """The caller key in `path` ("" without one): the secret by which the matchmaker proves
    its calls to the engine its own (`engine_service.service`); ConfigError, naming `flag`,
    for a file that cannot be read or a key too short to be a secret."""
    if not path:
        return ""
    try:
        with open(path, encoding="ascii") as file:
            key = file.read().strip()
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not ASCII text"
        raise ConfigError(f"{flag}: cannot read {path}: {reason}") from None
    if len(key) < CALLER_KEY_MIN_CHARS or not key.isprintable():
        raise ConfigError(
            f"{flag}: the key in {path} needs at least {CALLER_KEY_MIN_CHARS} printable "
            "characters; make one with: python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return key


def fail(prog: str, message: str, status: int = 2) -> NoReturn:
    """Print one error line for `prog` and exit."""
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(status)


def host_port(text: str) -> tuple[str, int]:
    """Split "host:port" (IPv6 in brackets); ValueError with a readable message if malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not host:port")
    return host.strip("[]") or "0.0.0.0", int(port)
