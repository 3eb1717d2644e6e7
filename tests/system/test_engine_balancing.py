"""Engine traffic spreads over engine replicas.

Real `wargame-engine` processes listen on the same port of two loopback addresses
(127.0.0.1 and 127.0.0.2), as pods of one Deployment do on their own IPs. The matchmaker's
engine client (`matchmaker.engine.Engine`, its channel settings unchanged) reaches them by a
name served by the test's own DNS server (`tests/system/dns_server.py`), whose answers change
during a test the way a headless Service's answers change when a pod is added — so the
client resolves `dns://…/engine.test:<port>` through gRPC's DNS resolver exactly as it
resolves `dns:///wargame-engine:50051` on Kubernetes. Which engine served a call is read
from each engine's own metrics page.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from matchmaker.engine import Engine
from matchmaker.settings import Settings
from tests.servers import (
    ROOT,
    START_TIMEOUT,
    ServiceProcess,
    engine_command,
    free_port,
    stopping,
    wait_healthy,
)
from tests.system.dns_server import DnsServer, dns_server

pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(
        os.environ.get("GRPC_DNS_RESOLVER", "").lower() == "native",
        reason="GRPC_DNS_RESOLVER=native cannot ask a DNS server named in the target",
    ),
]

NAME = "engine.test"
SERVED = 'wargame_engine_rpcs_total{code="OK",rpc="NewGame"}'


class EngineHost:
    """One `wargame-engine` process on `host:port`, with its own metrics page."""

    def __init__(self, host: str, port: int, log_dir: Path, *extra: str) -> None:
        self.address = f"{host}:{port}"
        self.metrics = free_port()
        argv = engine_command(self.address, *extra, metrics=f"127.0.0.1:{self.metrics}")
        log_path = log_dir / f"engine-{host}.log"
        process = subprocess.Popen(
            argv,
            stdout=log_path.open("ab"),
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "WARGAME_LOG_FORMAT": "json"},
        )
        self.process = ServiceProcess(self.address, process, log_path, argv)
        try:
            wait_healthy(self.address, "wargame.v1.RulesEngine", timeout=START_TIMEOUT)
        except TimeoutError:
            self.process.kill()
            log = self.process.log()
            raise RuntimeError(f"engine on {self.address} did not start: {log}") from None

    def served(self) -> int:
        """NewGame calls this engine has answered."""
        page = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=10)
        for line in page.read().decode().splitlines():
            if line.startswith(SERVED):
                return int(float(line.split()[-1]))
        return 0

    def stop(self) -> None:
        """Stop the process; it must not have crashed."""
        self.process.stop()
        assert "Traceback" not in self.process.log(), self.process.log()[-3000:]


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with dns_server() as server:
        yield server


@pytest.fixture
def engines() -> Iterator[list[EngineHost]]:
    """Engines the test starts; all stopped at the end."""
    with stopping(EngineHost.stop) as started:
        yield started


def test_calls_of_one_matchmaker_spread_over_every_resolved_engine(
    dns: DnsServer, engines: list[EngineHost], tmp_path: Path
) -> None:
    port = free_port()
    engines += [EngineHost(host, port, tmp_path) for host in ("127.0.0.1", "127.0.0.2")]
    dns.answer(NAME, ["127.0.0.1", "127.0.0.2"])
    # One channel: the spreading is the channel's balancing per call, not the pool of channels.
    settings = Settings(engine=dns.target(NAME, port), engine_connections=1)

    async def play() -> list[int]:
        engine = Engine(settings.engine, settings)
        try:
            # Until both connections are up, calls go to the one that is.
            deadline = time.monotonic() + 30
            while min(e.served() for e in engines) == 0 and time.monotonic() < deadline:
                await engine.new_game("war", {}, "", "")
            before = [e.served() for e in engines]
            for _ in range(60):
                await engine.new_game("war", {}, "", "")
            return [e.served() - b for e, b in zip(engines, before, strict=True)]
        finally:
            await engine.close()

    assert asyncio.run(play()) == [30, 30], "round robin alternates between the two engines"


def _spread_after_new_replica(
    dns: DnsServer, engines: list[EngineHost], tmp_path: Path, age: str
) -> tuple[int, int, float]:
    """Start engine A, a matchmaker client on it, then engine B and add B to the name.

    Calls go on until B has served one (or for `patience` seconds); returns the calls A and
    B served after B came, and the seconds it took.
    """
    port = free_port()
    recycling = ["--max-connection-age", age, "--max-connection-age-grace", "1"]
    first = EngineHost("127.0.0.1", port, tmp_path, *recycling)
    engines.append(first)
    dns.answer(NAME, ["127.0.0.1"])
    settings = Settings(engine=dns.target(NAME, port))
    patience = 60.0 if age != "0" else 6.0

    async def play() -> tuple[int, int, float]:
        engine = Engine(settings.engine, settings)
        try:
            for _ in range(20):
                await engine.new_game("war", {}, "", "")
            assert first.served() == 20
            second = EngineHost("127.0.0.2", port, tmp_path, *recycling)
            engines.append(second)
            dns.answer(NAME, ["127.0.0.1", "127.0.0.2"])
            before = first.served()
            started = time.monotonic()
            calls = 0
            while second.served() == 0 and time.monotonic() - started < patience:
                for _ in range(10):  # every call succeeds while connections are recycled
                    await engine.new_game("war", {}, "", "")
                calls += 10
                await asyncio.sleep(0.05)
            after_first = first.served() - before
            assert after_first + second.served() == calls
            return after_first, second.served(), time.monotonic() - started
        finally:
            await engine.close()

    return asyncio.run(play())


def test_a_recycled_connection_brings_a_running_matchmaker_to_a_new_engine(
    dns: DnsServer, engines: list[EngineHost], tmp_path: Path
) -> None:
    _, to_new, seconds = _spread_after_new_replica(dns, engines, tmp_path, age="1")
    assert to_new > 0, f"the new engine got no call in {seconds:.1f} s"


def test_without_a_connection_age_a_running_matchmaker_never_finds_a_new_engine(
    dns: DnsServer, engines: list[EngineHost], tmp_path: Path
) -> None:
    # The control of the test above: nothing else makes the client look the name up again.
    to_old, to_new, seconds = _spread_after_new_replica(dns, engines, tmp_path, age="0")
    assert to_new == 0 and to_old > 0 and seconds >= 6.0


def _connections_to(port: int) -> set[int]:
    """The local ports of the established TCP connections to `port` (IPv4 or, as IPv4
    mapped into IPv6, in either table)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            columns = row.split()
            if columns[3] == "01" and int(columns[2].rpartition(":")[2], 16) == port:
                found.add(int(columns[1].rpartition(":")[2], 16))
    return found


def test_the_engine_answers_the_keepalive_pings_of_an_idle_matchmaker(
    engines: list[EngineHost], tmp_path: Path
) -> None:
    # The matchmaker pings its engine connections every 5 s, busy or idle, to notice a host
    # that vanished; an engine that allowed fewer pings would close the
    # connection at the third early one (GOAWAY "too_many_pings", about 17 s in) and the
    # client would slow its pings down. No connection age: only pings could end it.
    port = free_port()
    engines.append(EngineHost("127.0.0.1", port, tmp_path, "--max-connection-age", "0"))
    settings = Settings(engine=f"127.0.0.1:{port}", engine_connections=1)

    async def idle() -> tuple[set[int], set[int]]:
        engine = Engine(settings.engine, settings)
        try:
            await engine.new_game("war", {}, "", "")
            before = _connections_to(port)
            await asyncio.sleep(22)  # four pings
            await engine.new_game("war", {}, "", "")
            return before, _connections_to(port)
        finally:
            await engine.close()

    before, after = asyncio.run(idle())
    assert len(before) == 1 and after == before, "the engine closed the pinging connection"
