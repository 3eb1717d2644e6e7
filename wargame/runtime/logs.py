"""structlog set-up: JSON lines in services, readable key=value lines on a terminal.

Both renderers are chosen here, with plain-text tracebacks: no process loads rich for its
logs (see the import of structlog below).

Secrets never reach a log line: `redact` runs on every event of both services, after
tracebacks are formatted and before rendering. It hides the values of secret-shaped keys
(token, password, secret, salt, key material, authorization) wherever they sit in the
event, and scrubs secrets out of any text: the user part of URLs and secret query values
(`redact_url`), bearer tokens and player tokens.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# structlog's `dev` module (which `import structlog` loads) imports rich when it can, for
# tracebacks we never print (`format_exc_info` writes them as plain text): about 0.3 s of
# CPU at every start of every process. So rich is hidden while structlog loads (a None in
# sys.modules makes `import rich` fail as if it were not installed), unless something
# loaded it already. The services' packages import this module first.
if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog
    finally:
        del sys.modules["rich"]
import structlog

HIDDEN = "[redacted]"
HIDDEN_IN_URL = "***"  # what stands for the user information and secret values of a URL
# Keys whose values are secrets, matched as whole words of a key ("redis_password",
# "seal_key", "token" — but not "token_id", "idempotency_key" or "keys").
SECRET_WORDS = frozenset(
    {"token", "password", "passwd", "pwd", "secret", "salt", "authorization", "cookie",
     "credentials", "credential", "apikey", "sealed", "ciphertext", "array", "placements"}
)  # fmt: skip
SECRET_KEYS = re.compile(r"(^|_)(seal_key|secret_key|private_key|api_key|key_material)($|_)")
NOT_SECRET = frozenset({"token_id", "tokens", "token_ids"})
# Query parameters of a URL that carry secrets (Redis and TLS options).
SECRET_QUERY = re.compile(r"pass|secret|token|key|auth|cred", re.IGNORECASE)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[^\s'\",;]+")
# A wargame player token: `p<16 base32>.<secret>` (matchmaker/tokens.py).
_PLAYER_TOKEN = re.compile(r"\b(p[a-z2-7]{16})\.[A-Za-z0-9_-]{20,}")


def redact_url(url: str) -> str:
    """`url` without secrets: the user information replaced, secret query values hidden."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = HIDDEN_IN_URL + "@" + netloc.rpartition("@")[2]
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode(
                [
                    (name, HIDDEN_IN_URL if SECRET_QUERY.search(name) else value)
                    for name, value in pairs
                ],
                safe="*",
            )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return HIDDEN


def scrub(text: str) -> str:
    """Text with the secrets it may quote hidden: URL credentials, bearer and player tokens."""
    if "://" in text:
        text = _URL.sub(lambda match: redact_url(match.group(0)), text)
    text = _BEARER.sub(lambda match: f"{match.group(1)} {HIDDEN}", text)
    return _PLAYER_TOKEN.sub(lambda match: f"{match.group(1)}.{HIDDEN}", text)


def secret_key(name: str) -> bool:
    """True when a log key names a secret."""
    lowered = name.lower()
    if lowered in NOT_SECRET:
        return False
    words = set(re.split(r"[^a-z0-9]+", lowered))
    return bool(words & SECRET_WORDS) or bool(SECRET_KEYS.search(lowered))


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {k: HIDDEN if secret_key(str(k)) else _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return HIDDEN  # raw bytes in a log line are keys, salts or ciphertexts
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return scrub(str(value))


def redact(logger: Any, method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """structlog processor: hide secret-shaped keys' values, scrub secrets out of text."""
    return {
        key: HIDDEN if secret_key(key) and key != "event" else _clean(value)
        for key, value in event.items()
    }


class _RedactingFormatter(logging.Formatter):
    """Standard-library log lines (gRPC, asyncio, redis-py) scrubbed the same way."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


def configure_logging(fmt: str = "auto", level: str = "info", stream: Any = None) -> None:
    """Route structlog (and stdlib logging) to `stream` as JSON or console lines.

    `fmt` is "json", "console" or "auto" (console when the stream is a terminal).
    """
    out = stream or sys.stderr
    if fmt == "auto":
        fmt = "console" if out.isatty() else "json"
    renderer: Any = (
        structlog.processors.JSONRenderer(sort_keys=False)
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(
            colors=out.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    )
    numeric = getattr(logging, level.upper(), logging.INFO)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(_RedactingFormatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_wargame", False):
            root.removeHandler(old)
    handler._wargame = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(max(numeric, logging.WARNING))


def get_logger(name: str) -> Any:
    """A structlog logger bound to a component name."""
    return structlog.get_logger(component=name)
