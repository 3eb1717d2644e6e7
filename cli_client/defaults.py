"""What the command line needs before anything else is loaded: the servers' default
addresses, how an address says TLS or plaintext, the bot's levels.

Imports nothing beyond the standard library's core, so `wargame --help`, `--version` and
argument errors never load gRPC, protobuf or rich (`arguments.py` reads only this).
"""

from __future__ import annotations

DEFAULT_ENGINE = "127.0.0.1:50051"
DEFAULT_MATCHMAKER = "127.0.0.1:50052"
TLS_SCHEME = "grpcs://"  # an address that says "over TLS"
PLAIN_SCHEME = "grpc://"  # one that says "plaintext", whatever --tls says
SERVER_PORT = 443  # `--server HOST`: both services behind one TLS gateway (deploy/k8s)
BOT_LEVELS = 5  # the bot plays at levels 1 (a beginner can beat it) to 5 (the strongest)


def split_target(text: str) -> tuple[str, bool | None]:
    """`grpcs://host:port` -> (host:port, True), `grpc://host:port` -> (host:port, False),
    `host:port` -> (host:port, None: as --tls says)."""
    for scheme, tls in ((TLS_SCHEME, True), (PLAIN_SCHEME, False)):
        if text.lower().startswith(scheme):
            return text[len(scheme) :], tls
    return text, None


def server_address(text: str) -> str:
    """`--server`'s HOST[:PORT] (a scheme kept) as HOST:PORT, port SERVER_PORT if none."""
    address = split_target(text)[0]
    bare_ipv6 = address.count(":") > 1 and not address.startswith("[")
    if bare_ipv6 or not address.rpartition(":")[2].isdigit():
        return f"{text[: len(text) - len(address)]}{address}:{SERVER_PORT}"
    return text
