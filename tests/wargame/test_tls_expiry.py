"""A certificate past its end stops a service at start, one ending soon is
a warning, and the end of every certificate a service presents is a metric.

Before, an engine or a matchmaker started and served with an expired certificate, and
every client was refused at the handshake with nothing in the service's own log.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
import structlog
from cryptography import x509
from prometheus_client import REGISTRY

from tests.matchmaker.test_main import assert_one_line_failure, launch
from tests.servers import ROOT
from tests.tls_support import Authority, Issued
from wargame.runtime.config import ConfigError
from wargame.runtime.tls import EXPIRY_WARNING_DAYS, server_tls

GAUGE = "wargame_tls_certificate_expiry_timestamp_seconds"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return Authority.create(tmp_path_factory.mktemp("pki"), "expiry")


def _args(issued: Issued) -> argparse.Namespace:
    return argparse.Namespace(
        tls_cert_file=str(issued.cert_file),
        tls_key_file=str(issued.key_file),
        tls_client_ca_file="",
        listen="127.0.0.1:0",
        insecure=False,
    )


def _end(issued: Issued) -> float:
    certificate = x509.load_pem_x509_certificate(issued.cert_file.read_bytes())
    return certificate.not_valid_after_utc.timestamp()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_engine_with_an_expired_certificate_refuses_to_start_in_one_line(
    ca: Authority, workers: str
) -> None:
    expired = ca.issue(f"engine-expired-{workers}", expired=True)
    command = [sys.executable, "-m", "engine_service.main", "serve", "--listen", "127.0.0.1:0"]
    command += ["--workers", workers, "--metrics-listen", "off"]
    command += ["--tls-cert-file", str(expired.cert_file), "--tls-key-file", str(expired.key_file)]
    done = subprocess.run(
        command,
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "WARGAME_LOG_FORMAT": "json"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        f"wargame-engine: error: the TLS certificate in {expired.cert_file} expired on "
    ), lines[0]
    assert "renew it" in lines[0] and "BEGIN" not in lines[0]


def test_a_matchmaker_with_an_expired_certificate_refuses_to_start_in_one_line(
    ca: Authority,
) -> None:
    expired = ca.issue("matchmaker-expired", expired=True)
    result = launch(
        "serve", "--listen", "127.0.0.1:0", "--metrics-listen", "off",
        "--tls-cert-file", str(expired.cert_file), "--tls-key-file", str(expired.key_file),
    )  # fmt: skip
    assert_one_line_failure(result, f"the TLS certificate in {expired.cert_file} expired on ")


def test_a_certificate_ending_soon_is_served_with_a_warning_and_its_end_is_a_metric(
    ca: Authority,
) -> None:
    soon = ca.issue("soon", days=EXPIRY_WARNING_DAYS - 1)
    with structlog.testing.capture_logs() as logs:
        assert server_tls(_args(soon), "the engine") is not None
    warned = [line for line in logs if line["event"] == "certificate expires soon"]
    assert len(warned) == 1 and warned[0]["log_level"] == "warning", logs
    assert warned[0]["cert_file"] == str(soon.cert_file)
    assert EXPIRY_WARNING_DAYS - 2 < warned[0]["days_left"] < EXPIRY_WARNING_DAYS
    assert REGISTRY.get_sample_value(GAUGE, {"file": str(soon.cert_file)}) == _end(soon)


def test_a_certificate_with_time_left_is_served_quietly_and_its_end_is_a_metric(
    ca: Authority,
) -> None:
    later = ca.issue("later", days=EXPIRY_WARNING_DAYS + 30)
    with structlog.testing.capture_logs() as logs:
        assert server_tls(_args(later), "the engine") is not None
    assert not [line for line in logs if line["log_level"] == "warning"], logs
    assert REGISTRY.get_sample_value(GAUGE, {"file": str(later.cert_file)}) == _end(later)


def test_an_expired_certificate_is_refused_by_the_check_itself(ca: Authority) -> None:
    expired = ca.issue("expired-check", expired=True)
    with pytest.raises(ConfigError, match="expired on"):
        server_tls(_args(expired), "the engine")
    assert REGISTRY.get_sample_value(GAUGE, {"file": str(expired.cert_file)}) == _end(expired)
