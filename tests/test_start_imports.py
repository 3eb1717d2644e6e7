"""Starts load only what they need: asserted on the modules a fresh process
holds, never on a timing.

- `wargame --help`, `--version` and an argument error load no gRPC, protobuf, structlog or
  rich: the command line alone, the rest once a command runs.
- No service module loads rich: structlog's `dev` module imports it when it can, and the
  services' logs are rendered without it (`wargame.runtime.logs`).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.servers import ROOT

HEAVY = ("grpc", "google.protobuf", "structlog", "rich")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (which may exit)."""
    probe = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.__stderr__))\n"
        + code
    )
    done = subprocess.run(  # an argument error exits with 2: the modules are printed still
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["play", "--help"], ["plya"], ["play", "war", "--level", "9"], []],
    ids=["help", "version", "play-help", "mistyped-command", "bad-level", "no-command"],
)
def test_the_command_line_alone_loads_no_grpc_protobuf_structlog_or_rich(argv: list[str]) -> None:
    modules = _modules_after(
        f"import sys\nfrom cli_client.main import main\nsys.exit(main({argv!r}))\n"
    )
    assert "cli_client.arguments" in modules  # the probe ran the command line
    assert _heavy(modules) == []


def test_a_command_that_runs_loads_what_it_needs() -> None:
    """The other side of the test above: the probe sees what a command loads."""
    modules = _modules_after(
        "import sys\nfrom cli_client.main import main\n"
        "sys.exit(main(['replay', '/nonexistent/record.txt', '--engine', '127.0.0.1:1']))\n"
    )
    assert {"grpc", "rich"} <= modules


def test_no_service_module_loads_rich() -> None:
    modules = _modules_after(
        "import importlib, pkgutil\n"
        "import engine_service, matchmaker, wargame.runtime\n"
        "for package in (engine_service, matchmaker, wargame.runtime):\n"
        "    for found in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(found.name)\n"
    )
    assert {"structlog", "engine_service.service", "matchmaker.server"} <= modules
    assert sorted(m for m in modules if m == "rich" or m.startswith("rich.")) == []
