"""Web fixtures: a real stack (redis-server, engine, matchmaker, web service) on free ports.

The matchmaker trusts loopback as a proxy, as a deployment trusts its web service, so the
web service's `x-forwarded-for` names each caller (its per-address limits stay per caller).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.matchmaker.conftest import start_matchmaker_process
from tests.servers import ROOT, RedisServer, ServiceProcess, free_port, listens, spawn
from tests.web.connect_client import MATCHMAKER, ConnectClient
from wargame.v1 import matchmaker_pb2


def web_command(address: str, matchmaker: str, engine: str, *flags: str) -> list[str]:
    """The command line of a `wargame-web` on `address` forwarding to the two services."""
    return [
        sys.executable, "-m", "web.main", "serve", "--listen", address,
        "--matchmaker", matchmaker, "--engine", engine, "--metrics-listen", "off", *flags,
    ]  # fmt: skip


def healthy(address: str) -> bool:
    """Whether the web service at `address` answers its health check."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


def start_web(
    directory: Path,
    matchmaker: str,
    engine: str,
    *flags: str,
    port: int | None = None,
    health: str = "",
) -> ServiceProcess:
    """A real `wargame-web` process, once it serves on its own port (asked whether it is
    healthy there, or on its plaintext `health` port: one of `flags` then names it)."""
    chosen = port or free_port()
    address = f"127.0.0.1:{chosen}"
    log_path = directory / "web.log"
    handle = spawn(web_command(address, matchmaker, engine, *flags), address, log_path)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and handle.process.poll() is None:
        if healthy(health or address) and listens(handle.process.pid, chosen):
            return handle
        time.sleep(0.05)
    handle.kill()
    raise RuntimeError(f"wargame-web did not start: {handle.log()[-2000:]}")


@dataclass
class Stack:
    """The services of a web test, and where they listen."""

    engine: ServiceProcess
    matchmaker: ServiceProcess
    web: ServiceProcess
    directory: Path

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.web.address}"

    def client(self, token: str = "", *, binary: bool = False) -> ConnectClient:
        """A Connect client of the web service."""
        return ConnectClient(self.web.address, token, binary=binary)

    def player(self, name: str) -> ConnectClient:
        """A guest registered through the web service, and its client."""
        reply = self.client().unary(
            MATCHMAKER + "RegisterPlayer",
            matchmaker_pb2.RegisterPlayerRequest(display_name=name),
            matchmaker_pb2.RegisterPlayerResponse(),
        )
        return self.client(reply.token)

    def restart_web(self) -> None:
        """Stop the web service and start it again on the same port."""
        self.web.stop()
        port = int(self.web.address.rpartition(":")[2])
        self.web = start_web(
            self.directory, self.matchmaker.address, self.engine.address, port=port
        )


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: RedisServer,
    engine_process: ServiceProcess,
) -> Iterator[Stack]:
    """A matchmaker and a web service of the module's own, on the session's Redis and engine."""
    directory = tmp_path_factory.mktemp("web-stack")
    matchmaker = start_matchmaker_process(
        directory, redis_server.url, engine_process.address, "--trusted-proxies", "127.0.0.1/32"
    )
    try:
        web = start_web(directory, matchmaker.address, engine_process.address)
    except BaseException:
        matchmaker.stop()
        raise
    running = Stack(engine_process, matchmaker, web, directory)
    yield running
    with contextlib.suppress(Exception):
        running.web.stop()
    matchmaker.stop()


# --- the browser (Playwright driving the system's Chromium) ---------------------------------

CHROMIUM = os.environ.get("WARGAME_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """The system's Chromium under Playwright (its own browser download is not used);
    the browser tests are skipped, with one line, where there is none."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"browser tests: no Chromium at {CHROMIUM} (apt-get install chromium)")
    if not (ROOT / "web" / "static" / "vendor").is_dir():
        assert not os.environ.get("WARGAME_REQUIRE_NODE"), "web/page is not installed (make setup)"
        pytest.skip("browser tests: the page's packages are not installed (make setup, with npm)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("browser tests: playwright is not installed (make setup)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where boards are photographed, the run's artefacts: $WARGAME_WEB_SCREENSHOTS, else
    run/web-screenshots in the checkout (kept after the run; each test overwrites its own)."""
    chosen = Path(os.environ.get("WARGAME_WEB_SCREENSHOTS") or ROOT / "run" / "web-screenshots")
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen
