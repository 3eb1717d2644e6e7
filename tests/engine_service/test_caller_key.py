"""The caller key as both services read it: a file of at least 32
characters, or nothing; a short key or an unreadable file ends start-up with one line that
never shows the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers import ROOT
from wargame.runtime.config import CALLER_KEY_MIN_CHARS, ConfigError, read_caller_key


def test_a_caller_key_is_read_stripped_or_refused_in_one_line(tmp_path: Path) -> None:
    assert read_caller_key("", "--caller-key-file") == ""
    good = tmp_path / "good.key"
    good.write_text("ab" * 32 + "\n")
    assert read_caller_key(str(good), "--caller-key-file") == "ab" * 32
    short = tmp_path / "short.key"
    short.write_text("s3cret-but-short\n")
    with pytest.raises(ConfigError) as refused:
        read_caller_key(str(short), "--caller-key-file")
    message = str(refused.value)
    assert message.startswith(f"--caller-key-file: the key in {short} needs at least ")
    assert str(CALLER_KEY_MIN_CHARS) in message and "s3cret" not in message
    with pytest.raises(ConfigError, match="cannot read"):
        read_caller_key(str(tmp_path / "missing.key"), "--engine-caller-key-file")


@pytest.mark.parametrize(
    ("module", "flag"),
    [("engine_service.main", "--caller-key-file"), ("matchmaker.main", "--engine-caller-key-file")],
)
def test_a_service_with_a_short_caller_key_refuses_to_start(
    tmp_path: Path, module: str, flag: str
) -> None:
    short = tmp_path / "short.key"
    short.write_text("s3cret-but-short\n")
    secret = tmp_path / "secret.key"
    secret.write_text(os.urandom(32).hex())
    done = subprocess.run(
        [sys.executable, "-m", module, "serve", "--listen", "127.0.0.1:0", flag, str(short)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "WARGAME_LOG_FORMAT": "json",
            "WARGAME_ENGINE_METRICS_LISTEN": "off",
            "WARGAME_MATCHMAKER_METRICS_LISTEN": "off",
            "WARGAME_MATCHMAKER_SECRET_KEY_FILE": str(secret),
        },
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"{flag}: the key in {short} needs at least" in lines[0], lines[0]
    assert "s3cret" not in done.stdout + done.stderr
