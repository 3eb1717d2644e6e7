"""Quoting what a client sent, briefly: refusals never echo a whole input.

A refusal that quoted a few kilobytes of bad input would push its status past gRPC's
metadata limit, and the client would get a bare RESOURCE_EXHAUSTED instead of the reason.
`quoted` is the one way both services (and the engine's rules, which know no gRPC, hence
this module of its own) quote client text, and `withheld` the way they name text that holds
a secret (a hidden deployment, a salt) without quoting any of it: refusals reach the logs.
`bounded` is the last guard on any message (`Refusal` applies it to everything it carries).
"""

from __future__ import annotations

QUOTE_CHARS = 40  # characters of client text a message quotes
MESSAGE_BYTES = 600  # UTF-8 bytes of one message (or one detail) a refusal carries
_MORE = "…"


def quoted(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` quoted for a message: its repr, cut to `limit` characters with its length."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}{_MORE} ({len(text)} characters)"


def withheld(text: str, head: str) -> str:
    """Secret `text` for a message: `head` (its keyword, not secret) quoted, the rest only
    counted, never quoted."""
    return f"{head!r}{_MORE} ({len(text)} characters, not quoted: they hold a secret)"


def bounded(text: str, limit: int = MESSAGE_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes (ending in '…' when cut)."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(_MORE.encode("utf-8"))
    return data[:room].decode("utf-8", errors="ignore") + _MORE
