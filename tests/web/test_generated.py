"""The page's generated code (web/static/gen) is what the pinned buf and protoc-gen-es make
from proto/ now: a change to the contract without `make proto` fails here, as `make
proto-check` fails for the Python stubs (wargame/v1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.servers import ROOT

TEMPLATE = ROOT / "web" / "page" / "buf.gen.yaml"
PLUGIN = ROOT / "web" / "page" / "node_modules" / ".bin" / "protoc-gen-es"
CHECKED_IN = ROOT / "web" / "static" / "gen"
BUF = ROOT / ".venv" / "bin" / "buf"


def files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` by its path there."""
    found = (path for path in folder.rglob("*") if path.is_file())
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in found}


@pytest.mark.integration
def test_the_checked_in_page_code_is_what_buf_generates_from_the_proto(tmp_path: Path) -> None:
    if not PLUGIN.exists():
        assert not os.environ.get("WARGAME_REQUIRE_NODE"), "web/page is not installed (make setup)"
        pytest.skip("web/page's packages are not installed (make setup, with npm): not checked")
    buf = BUF if BUF.exists() else Path("buf")
    subprocess.run(
        [str(buf), "generate", "--template", str(TEMPLATE), "--output", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=240,
    )
    generated = files(tmp_path / "web" / "static" / "gen")
    checked_in = files(CHECKED_IN)
    assert sorted(generated) == sorted(checked_in), "run 'make proto': files differ"
    stale = [name for name in generated if generated[name] != checked_in[name]]
    assert not stale, f"web/static/gen is stale (run 'make proto'): {stale}"
    assert "wargame/v1/matchmaker_pb.js" in generated
