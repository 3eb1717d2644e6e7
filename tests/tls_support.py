"""TLS in tests: throwaway certificate authorities (the `cryptography` package) and services
started with TLS.

`Authority.create(folder)` writes a CA certificate (`ca_file`); `issue` writes a
certificate and key it signs for server names and addresses, for serving, for presenting
as a client, or both — valid now, or expired. Nothing here is ever trusted outside a test.
`start_tls_service` runs a service whose port speaks TLS only and waits for it on its
plaintext health port.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.servers import (
    ROOT,
    START_TIMEOUT,
    RedisServer,
    ServiceProcess,
    free_ports,
    listens,
    matchmaker_key_env,
    start_redis,
    wait_healthy,
)
from wargame.runtime.tls import ClientTLS, channel

HOUR = datetime.timedelta(hours=1)
LOCAL = ("localhost", "127.0.0.1")


@dataclass(frozen=True)
class Issued:
    """A certificate (PEM chain) and its key, as files."""

    cert_file: Path
    key_file: Path


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
        encipher_only=False, decipher_only=False,
    )  # fmt: skip


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


@dataclass
class Authority:
    """A certificate authority of a test: its key in memory, its certificate in `ca_file`."""

    directory: Path
    name: str
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def ca_file(self) -> Path:
        """The CA certificate (PEM), what clients and servers are told to trust."""
        return self.directory / f"{self.name}-ca.crt"

    @classmethod
    def create(cls, directory: Path, name: str = "test") -> Authority:
        """A new CA named `name`, its certificate written under `directory`."""
        directory.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        subject = _name(f"wargame {name} CA")
        certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - HOUR)
            .not_valid_after(now + 24 * HOUR)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_key_usage(ca=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        made = cls(directory, name, key, certificate)
        made.ca_file.write_bytes(_pem(certificate))
        return made

    def issue(
        self,
        name: str,
        hosts: Sequence[str] = LOCAL,
        *,
        server: bool = True,
        client: bool = False,
        expired: bool = False,
        days: float = 1.0,
    ) -> Issued:
        """A certificate for `hosts` (names and IP addresses), signed by this CA, usable to
        serve and/or as a client, valid for `days` more; `expired` ended an hour ago."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        start, end = (
            (now - 48 * HOUR, now - HOUR) if expired else (now - HOUR, now + days * 24 * HOUR)
        )
        alternative: list[x509.GeneralName] = []
        for host in hosts:
            try:
                alternative.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                alternative.append(x509.DNSName(host))
        usages = [ExtendedKeyUsageOID.SERVER_AUTH] if server else []
        usages += [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), False
            )
        )
        if alternative:
            builder = builder.add_extension(x509.SubjectAlternativeName(alternative), False)
        certificate = builder.sign(self.key, hashes.SHA256())
        issued = Issued(self.directory / f"{name}.crt", self.directory / f"{name}.key")
        issued.cert_file.write_bytes(_pem(certificate))
        _write_key(key, issued.key_file)
        return issued


def tls_channel(
    address: str, ca: Authority, client: Issued | None = None, **tls: str
) -> grpc.Channel:
    """A channel to `address` trusting `ca`, presenting `client` if given."""
    settings = ClientTLS(
        ca_file=str(ca.ca_file),
        cert_file=str(client.cert_file) if client else "",
        key_file=str(client.key_file) if client else "",
        **tls,
    )
    return channel(address, settings)


@dataclass
class TlsService(ServiceProcess):
    """A service process whose port speaks TLS, and its plaintext health port."""

    health_address: str = ""


def start_tls_service(
    module: str,
    args: Sequence[str],
    *,
    log_path: Path,
    service: str,
    env: dict[str, str] | None = None,
) -> TlsService:
    """Start `python -m module serve --listen 127.0.0.1:<free> --health-listen 127.0.0.1:<free>
    args...` and wait until its health port says SERVING and the process holds its port."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    if module == "matchmaker.main" and "--secret-key-file" not in args:
        env = {**matchmaker_key_env(log_path.parent), **(env or {})}
    port, health = free_ports(2)
    address, health_address = f"127.0.0.1:{port}", f"127.0.0.1:{health}"
    argv = [sys.executable, "-m", module, "serve", "--listen", address]
    argv += ["--health-listen", health_address, *args]
    with log_path.open("ab") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, "WARGAME_LOG_FORMAT": "json", **(env or {})},
        )  # fmt: skip
    handle = TlsService(address, process, log_path, argv, health_address=health_address)
    try:
        wait_healthy(health_address, service, timeout=START_TIMEOUT)
        if not listens(process.pid, port):
            raise TimeoutError(f"another program answers on {address}")
    except TimeoutError as error:
        handle.kill()
        raise RuntimeError(f"{module} did not start ({error}): {handle.log()[-2000:]}") from None
    return handle


@dataclass
class TlsServices:
    """A private CA with an engine's and a matchmaker's certificates, a Redis, and the
    services started with them (see `tls_services`)."""

    folder: Path
    ca: Authority
    engine_cert: Issued
    matchmaker_cert: Issued  # also a client certificate, to present to the engine
    redis: RedisServer
    started: list[TlsService] = field(default_factory=list)

    def start(
        self, module: str, args: Sequence[str], service: str, env: dict[str, str] | None = None
    ) -> TlsService:
        """Start a service (see `start_tls_service`), its log `<package>.log` in the
        folder; stopped when `tls_services` ends."""
        name = module.partition(".")[0].removesuffix("_service")
        started = start_tls_service(
            module, args, log_path=self.folder / f"{name}.log", service=service, env=env
        )
        self.started.append(started)
        return started

    def start_engine(self, seal_key_file: Path, *flags: str, workers: int = 1) -> TlsService:
        """An engine serving TLS with the engine certificate, `workers` workers and `flags`."""
        return self.start(
            "engine_service.main",
            ["--workers", str(workers), "--metrics-listen", "off",
             "--seal-key-file", str(seal_key_file),
             "--tls-cert-file", str(self.engine_cert.cert_file),
             "--tls-key-file", str(self.engine_cert.key_file), *flags],
            "wargame.v1.RulesEngine",
        )  # fmt: skip


@contextmanager
def tls_services(folder: Path) -> Iterator[TlsServices]:
    """A CA, certificates for an engine and a matchmaker, and a Redis in `folder`; the
    services started on them are stopped (last first) at the end, then the Redis."""
    ca = Authority.create(folder / "pki")
    engine_cert = ca.issue("engine")
    matchmaker_cert = ca.issue("matchmaker", client=True)
    services = TlsServices(folder, ca, engine_cert, matchmaker_cert, start_redis(folder / "redis"))
    try:
        yield services
    finally:
        for service in reversed(services.started):
            service.stop()
        services.redis.stop()
