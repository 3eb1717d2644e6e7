"""`wargame-engine serve` refuses what an operator must not deploy: a seal key that is short,
all zeros or an obvious placeholder, and a negative connection age — each with one line on
stderr, exit status 2, and never the key itself in the message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.system


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine_service.main", "serve", "--listen", "127.0.0.1:0", *args],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "WARGAME_LOG_FORMAT": "json", "WARGAME_ENGINE_METRICS_LISTEN": "off"},
    )


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("00" * 32, "is all zeros"),
        ("ab" * 16, "has 16 bytes; it needs 32 (64 hex digits)"),
        ("0123456789abcdef" * 4, "is a placeholder, not a random key"),
        ("42" * 32, "is a placeholder, not a random key"),
    ],
)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_weak_seal_key_is_refused_at_start(
    tmp_path: Path, key: str, message: str, workers: str
) -> None:
    path = tmp_path / "seal.key"
    path.write_text(key + "\n")
    done = _serve("--workers", workers, "--seal-key-file", str(path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"wargame-engine: error: the seal key in {path} {message}")
    assert "secrets.token_hex(32)" in lines[0]  # how to make a good one
    assert key not in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_the_examples_shipped_in_deploy_hold_no_usable_key() -> None:
    # Examples show where the key goes; a real key is made per installation, never shipped.
    shipped = [path for path in (ROOT / "deploy").rglob("*") if path.is_file()]
    assert shipped
    for path in shipped:
        text = path.read_text(errors="replace")
        assert not any(
            len(word) == 64 and all(c in "0123456789abcdefABCDEF" for c in word)
            for word in text.replace('"', " ").split()
        ), f"{path} holds what looks like a seal key"


@pytest.mark.parametrize("flag", ["--max-connection-age", "--max-connection-age-grace"])
def test_a_negative_connection_age_is_refused(flag: str) -> None:
    done = _serve("--workers", "1", flag, "-1")
    assert done.returncode == 2
    assert done.stderr.strip() == f"wargame-engine: error: {flag} must be 0 or more seconds"
