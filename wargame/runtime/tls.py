"""Transport security written once: TLS for both gRPC servers and for every client.

- `ServerTLS`: the certificate chain and key a service presents and, with a client CA,
  mutual TLS (only clients holding a certificate that CA signed get in). Its credentials
  (and its `ssl_context`, the web service's) read the files again when they change, so a
  renewed certificate (cert-manager, a rotated Secret) is served from the next connection
  on, without a restart.
- `ClientTLS`: what a client trusts (a CA file, or the system's roots), the certificate it
  presents for mutual TLS, and the name the server's certificate must carry when it is not
  the target's host (`server_name`, for tests and for targets named by address).
- `channel` / `aio_channel`: a plaintext channel without TLS, a verified one with it.
- The rule for plaintext (`check_plaintext`): zero configuration on loopback, where nothing
  crosses a network; anywhere else a service refuses to start without TLS unless the
  operator says `--insecure` (a gateway or a private network already encrypts).

Files are PEM. Every problem with them ends start-up with one line naming the file, never
its contents. A certificate past its end is such a problem (`check_expiry`); one that ends
within `EXPIRY_WARNING_DAYS` is served with a warning, and the end of every certificate a
service presents is a metric (`wargame_tls_certificate_expiry_timestamp_seconds`: alert on
it minus `time()`, the seconds left), so a renewal that never came is seen before clients
are refused.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import ipaddress
import os
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wargame.runtime.config import ConfigError, Parser, address_or_off, host_port

# grpc and cryptography load when first needed: a service quiets gRPC's own logging before
# grpc loads (`quiet_grpc_core`), after reading its flags here. structlog too: only the
# services log, and the client is installed without it.
if TYPE_CHECKING:
    import grpc
    from cryptography import x509


def _log() -> Any:
    from wargame.runtime.logs import get_logger

    return get_logger("tls")


# How often a server looks at its certificate files for a renewal (at most; a look is
# made when a client connects).
RELOAD_INTERVAL = 1.0
EXPIRY_WARNING_DAYS = 14  # a certificate ending sooner than this is served with a warning


# --- where plaintext is fine -----------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) never leaves this machine."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def target_hosts(target: str) -> list[str]:
    """The hosts a gRPC target names: `host:port`, `dns:[//resolver]/host:port`,
    `ipv4:a:p,b:p`, `ipv6:[a]:p`; a `unix:` socket is "localhost"."""
    scheme, colon, rest = target.partition(":")
    if colon and scheme in ("unix", "unix-abstract"):
        return ["localhost"]
    if colon and scheme == "dns":
        if rest.startswith("//"):
            rest = rest[2:].partition("/")[2]  # drop the resolver's authority
        return [_host(rest)]
    if colon and scheme in ("ipv4", "ipv6"):
        return [_host(item) for item in rest.split(",")]
    return [_host(target)]


def _host(address: str) -> str:
    try:
        return host_port(address)[0]
    except ValueError:  # no port: the whole text names the host
        return address.strip("[]")


def check_plaintext(what: str, address: str, *, insecure: bool, remedy: str) -> None:
    """Refuse plaintext gRPC off loopback unless `insecure` (ConfigError saying what to do).

    `what` says who would speak plaintext ("the engine would serve"), `address` where (a
    listening address or a gRPC target), `remedy` the flags that give it TLS.
    """
    if insecure or all(is_loopback(host) for host in target_hosts(address)):
        return
    raise ConfigError(
        f"{what} plaintext gRPC on {address}, beyond this machine: anyone on the network "
        f"could read tokens and hidden deployments. Give {remedy}, or --insecure where "
        "something else encrypts (a TLS gateway, a private network)"
    )


# --- files -----------------------------------------------------------------------------


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read the {what} {path}: {error.strerror or error}") from None


def _certificates(path: str, what: str) -> tuple[bytes, list[x509.Certificate]]:
    from cryptography import x509

    data = _read(path, what)
    try:
        certificates = x509.load_pem_x509_certificates(data)
    except ValueError:
        certificates = []
    if not certificates:
        raise ConfigError(f"the {what} {path} holds no PEM certificate")
    return data, certificates


def _key_pair(cert_file: str, key_file: str, whose: str) -> tuple[bytes, bytes]:
    """The PEM chain and key, checked: the key is a key and belongs to the first certificate."""
    from cryptography.hazmat.primitives import serialization

    chain, certificates = _certificates(cert_file, f"{whose} certificate file")
    key_pem = _read(key_file, f"{whose} key file")
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        raise ConfigError(
            f"the {whose} key file {key_file} holds no unencrypted PEM private key"
        ) from None
    der = serialization.Encoding.DER
    info = serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(der, info) != certificates[0].public_key().public_bytes(
        der, info
    ):
        raise ConfigError(
            f"the {whose} key file {key_file} does not belong to the certificate in {cert_file}"
        )
    return chain, key_pem


def check_expiry(cert_file: str, what: str) -> None:
    """ConfigError when the first certificate in `cert_file` has ended; a warning when it
    ends within EXPIRY_WARNING_DAYS. Its end is the gauge of the module docstring."""
    _, certificates = _certificates(cert_file, f"{what} certificate file")
    end = certificates[0].not_valid_after_utc
    _expiry_gauge().labels(cert_file).set(end.timestamp())
    left = end - datetime.datetime.now(datetime.UTC)
    if left <= datetime.timedelta(0):
        raise ConfigError(
            f"the {what} certificate in {cert_file} expired on {end:%Y-%m-%d %H:%M} UTC; "
            "renew it (clients refuse an expired certificate)"
        )
    if left < datetime.timedelta(days=EXPIRY_WARNING_DAYS):
        _log().warning(
            "certificate expires soon",
            cert_file=cert_file,
            expires=f"{end:%Y-%m-%d %H:%M} UTC",
            days_left=round(left.total_seconds() / 86400, 1),
        )


@functools.cache
def _expiry_gauge() -> Any:
    # Made on first use: the engine's supervisor sets prometheus_client up for its workers
    # before it is imported.
    from prometheus_client import Gauge

    return Gauge(
        "wargame_tls_certificate_expiry_timestamp_seconds",
        "When the certificate this service presents ends (Unix time)",
        ["file"],
        multiprocess_mode="min",
    )


def _signature(paths: Sequence[str]) -> tuple[tuple[int, int, int], ...]:
    """What changes when any of the files is replaced (a renewed Secret swaps a symlink)."""
    out = []
    for path in paths:
        try:
            found = os.stat(path)
            out.append((found.st_ino, found.st_size, found.st_mtime_ns))
        except OSError:
            out.append((0, 0, 0))
    return tuple(out)


# --- servers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerTLS:
    """The TLS a service serves: its certificate chain and key, and with `client_ca_file`
    mutual TLS (a client without a certificate that CA signed is refused at the handshake)."""

    cert_file: str
    key_file: str
    client_ca_file: str = ""

    @property
    def mode(self) -> str:
        """ "mutual" or "tls", for logs."""
        return "mutual" if self.client_ca_file else "tls"

    def files(self) -> list[str]:
        """The files this configuration reads."""
        return [p for p in (self.cert_file, self.key_file, self.client_ca_file) if p]

    def configuration(self) -> Any:
        """The files read and checked, as a grpc server certificate configuration."""
        import grpc

        chain, key = _key_pair(self.cert_file, self.key_file, "TLS")
        roots = None
        if self.client_ca_file:
            roots, _ = _certificates(self.client_ca_file, "TLS client CA file")
        return grpc.ssl_server_certificate_configuration([(key, chain)], roots)

    def credentials(self) -> grpc.ServerCredentials:
        """Server credentials that follow the files: a renewal is served from the next
        connection on (a file that cannot be read then keeps the previous certificate)."""
        import grpc

        reloader = _Reloader(self)  # notes the files as they are before reading them
        return grpc.dynamic_ssl_server_credentials(
            self.configuration(),
            reloader,
            require_client_authentication=bool(self.client_ca_file),
        )

    def ssl_context(self) -> ssl.SSLContext:
        """A server `ssl.SSLContext` that follows the files as `credentials` does (for the
        web service's HTTP server): each handshake after a renewal gets a context with the
        new certificate (a file that cannot be read then keeps the previous one)."""
        reloader = _Reloader(self, self._ssl_context)
        listening = self._ssl_context()
        current = [listening]

        def follow(connection: Any, _name: str | None, _context: Any) -> None:
            renewed = reloader()
            if renewed is not None:
                current[0] = renewed
            if current[0] is not listening:
                connection.context = current[0]

        listening.sni_callback = follow  # called for every client hello, SNI or none
        return listening

    def _ssl_context(self) -> ssl.SSLContext:
        _key_pair(self.cert_file, self.key_file, "TLS")  # checked: a problem is one line
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.cert_file, self.key_file)
            if self.client_ca_file:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(self.client_ca_file)
        except (OSError, ssl.SSLError) as error:
            raise ConfigError(f"the TLS files {self.cert_file} cannot be loaded: {error}") from None
        return context


class _Reloader:
    """A certificate fetcher: called before each handshake; `build()` (by default grpc's
    configuration) again when the files changed since the last look (at most one look per
    RELOAD_INTERVAL), else None."""

    def __init__(self, tls: ServerTLS, build: Callable[[], Any] | None = None) -> None:
        self.tls = tls
        self.build = build or tls.configuration
        self.signature = _signature(tls.files())
        self.looked = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        now = time.monotonic()
        with self.lock:
            if now - self.looked < RELOAD_INTERVAL:
                return None
            self.looked = now
            signature = _signature(self.tls.files())
            if signature == self.signature:
                return None
            try:
                check_expiry(self.tls.cert_file, "TLS")
                configuration = self.build()
            except ConfigError as error:  # half-written or stale renewal: keep the old one
                _log().warning("certificate not reloaded", problem=str(error))
                return None
            self.signature = signature
        _log().info("certificate reloaded", cert_file=self.tls.cert_file)
        return configuration


# --- clients ---------------------------------------------------------------------------


def system_roots() -> bytes | None:
    """The system's CA certificates (the file OpenSSL uses; SSL_CERT_FILE overrides it), or
    None for gRPC's own bundle (also when GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names a file)."""
    if os.environ.get("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"):
        return None
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and os.path.isfile(candidate):
            with contextlib.suppress(OSError):
                return Path(candidate).read_bytes()
    return None


@dataclass(frozen=True)
class ClientTLS:
    """How a client speaks TLS: the CA that signed the server's certificate ("" trusts the
    system's roots), the certificate and key it presents for mutual TLS, and the name the
    server's certificate must carry when not the target's host."""

    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    server_name: str = ""

    def __post_init__(self) -> None:
        if bool(self.cert_file) != bool(self.key_file):
            raise ConfigError("a client certificate file and its key file go together")

    @property
    def mode(self) -> str:
        """ "mutual" or "tls", for logs."""
        return "mutual" if self.cert_file else "tls"

    def files(self) -> list[str]:
        """The files this configuration reads."""
        return [p for p in (self.ca_file, self.cert_file, self.key_file) if p]

    def signature(self) -> tuple[tuple[int, int, int], ...]:
        """Changes when one of the files is replaced (a client renews its channels then)."""
        return _signature(self.files())

    def credentials(self) -> grpc.ChannelCredentials:
        """Channel credentials (files read and checked now)."""
        import grpc

        roots = _certificates(self.ca_file, "TLS CA file")[0] if self.ca_file else system_roots()
        chain = key = None
        if self.cert_file:
            chain, key = _key_pair(self.cert_file, self.key_file, "TLS client")
        return grpc.ssl_channel_credentials(roots, key, chain)

    def options(self) -> list[tuple[str, Any]]:
        """Channel options: the server name to check, when overridden."""
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []


def channel(
    target: str, tls: ClientTLS | None, options: Sequence[tuple[str, Any]] = ()
) -> grpc.Channel:
    """A channel to `target`: verified TLS with `tls`, plaintext without."""
    import grpc

    if tls is None:
        return grpc.insecure_channel(target, options=list(options))
    return grpc.secure_channel(target, tls.credentials(), options=[*options, *tls.options()])


def aio_channel(
    target: str, tls: ClientTLS | None, options: Sequence[tuple[str, Any]] = ()
) -> grpc.aio.Channel:
    """An asyncio channel to `target`: verified TLS with `tls`, plaintext without."""
    import grpc

    if tls is None:
        return grpc.aio.insecure_channel(target, options=list(options))
    return grpc.aio.secure_channel(target, tls.credentials(), options=[*options, *tls.options()])


# --- the services' flags ---------------------------------------------------------------


def add_server_flags(parser: Parser, service: str) -> None:
    """The transport flags of a service: its certificate, mutual TLS, plaintext off loopback,
    and the plaintext health port. `service` names the variables (WARGAME_<SERVICE>_TLS_...)."""
    parser.flag(
        "--tls-cert-file",
        env=f"{service}_TLS_CERT_FILE",
        default="",
        help="PEM certificate chain to serve TLS with (with --tls-key-file; no plaintext then)",
    )
    parser.flag(
        "--tls-key-file",
        env=f"{service}_TLS_KEY_FILE",
        default="",
        help="PEM private key of --tls-cert-file (the files are read again when they change)",
    )
    parser.flag(
        "--tls-client-ca-file",
        env=f"{service}_TLS_CLIENT_CA_FILE",
        default="",
        help="PEM CA certificates: require mutual TLS, every client presenting a certificate "
        "one of them signed",
    )
    parser.flag(
        "--insecure",
        env=f"{service}_INSECURE",
        action="store_true",
        help="allow plaintext gRPC on an address other than loopback (behind a TLS gateway, "
        "on a private network); without TLS files the service refuses to start there",
    )
    parser.flag(
        "--health-listen",
        env=f"{service}_HEALTH_LISTEN",
        default="off",
        type=address_or_off,
        help="a plaintext address serving only gRPC health checks, for probes that cannot "
        "speak TLS (Kubernetes), or 'off'",
    )


def server_tls(args: argparse.Namespace, what: str) -> ServerTLS | None:
    """The TLS the parsed flags ask for (files checked now), or None for plaintext, which
    `check_plaintext` allows on loopback or with --insecure. `what`: "the engine"."""
    cert, key, client_ca = args.tls_cert_file, args.tls_key_file, args.tls_client_ca_file
    if not cert and not key:
        if client_ca:
            raise ConfigError("--tls-client-ca-file needs --tls-cert-file and --tls-key-file")
        check_plaintext(
            f"{what} would serve",
            args.listen,
            insecure=args.insecure,
            remedy="--tls-cert-file and --tls-key-file",
        )
        return None
    if not (cert and key):
        raise ConfigError("--tls-cert-file and --tls-key-file go together")
    tls = ServerTLS(cert, key, client_ca)
    tls.configuration()  # every file readable and consistent, or one line now
    check_expiry(cert, "TLS")
    return tls
