"""Test hosts in network namespaces: each host its own network stack and address on one
virtual switch, so a test can kill a host or cut it off the network as happens in
production, on one machine.

    with Network() as network:
        redis = network.host("redis1")          # 10.231.x.y on the switch
        redis.spawn(["redis-server", ...], log)  # runs inside the host's namespace
        redis.cut()                              # its cable pulled: packets vanish
        redis.kill()                             # every process it runs, SIGKILL

The switch is a bridge in a namespace of its own, and every host a namespace joined to it
by a veth pair, so nothing is added to the machine's own network. Names carry this
process's id; closing the network (also after a failure) kills every process a host
started and deletes every namespace. Needs root and iproute2: `require()` skips the test
with the reason where they are missing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from tests.servers import ROOT

SUBNET = "10.231"  # the switch's /16; each network picks a /24 of it


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def unavailable() -> str:
    """Why namespaces cannot be used here ("" when they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "network namespaces need iproute2 (the `ip` command)"
    probe = f"wgprobe{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (subprocess.CalledProcessError, OSError) as error:
        stderr = getattr(error, "stderr", b"") or b""
        return f"cannot create a network namespace: {stderr.decode().strip() or error}"
    with contextlib.suppress(subprocess.CalledProcessError):
        _ip("netns", "del", probe)
    return ""


def require() -> None:
    """Skip the calling test, with the reason, where namespaces cannot be used."""
    reason = unavailable()
    if reason:
        pytest.skip(reason)


class Host:
    """One test host: a network namespace with one address on the switch."""

    def __init__(self, network: Network, name: str, index: int) -> None:
        self.network = network
        self.name = name
        self.namespace = f"{network.prefix}-{name}"
        self.address = f"{network.subnet}.{index}"
        self.port = f"v{index}"  # its end of the cable, on the switch
        self.processes: list[subprocess.Popen[bytes]] = []

    def spawn(
        self, argv: Sequence[str], log: Path, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start `argv` on this host (in its own process group), output into `log`."""
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            process = subprocess.Popen(
                ["ip", "netns", "exec", self.namespace, *argv],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        self.processes.append(process)
        return process

    def run(self, argv: Sequence[str], timeout: float = 60) -> str:
        """Run `argv` on this host to completion; its output (failure raises)."""
        done = subprocess.run(
            ["ip", "netns", "exec", self.namespace, *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(argv)}: {done.stdout}{done.stderr}")
        return done.stdout

    def kill(self) -> None:
        """Kill every process this host runs at once (SIGKILL), as a host that dies."""
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)

    def cut(self) -> None:
        """Pull the host's cable: from now on its packets vanish (no reset, no error)."""
        _ip("-n", self.network.switch, "link", "set", self.port, "down")

    def restore(self) -> None:
        """Plug the cable back in."""
        _ip("-n", self.network.switch, "link", "set", self.port, "up")


class Network:
    """A virtual switch and the hosts on it; a context manager that removes everything."""

    def __init__(self) -> None:
        self.prefix = f"wg{os.getpid()}"
        self.subnet = f"{SUBNET}.{os.getpid() % 250}"
        self.switch = f"{self.prefix}-switch"
        self.hosts: list[Host] = []
        self._made: list[str] = []
        self._on_term: Any = None

    def __enter__(self) -> Network:
        # A test run stopped by SIGTERM still cleans up (the default handler would not).
        self._on_term = signal.signal(signal.SIGTERM, _interrupt)
        try:
            self._namespace(self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def _namespace(self, name: str) -> None:
        _ip("netns", "add", name)
        self._made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def host(self, name: str) -> Host:
        """A new host on the switch, with the next address."""
        host = Host(self, name, len(self.hosts) + 11)
        self._namespace(host.namespace)
        _ip(
            "-n", self.switch, "link", "add", host.port, "type", "veth",
            "peer", "name", "eth0", "netns", host.namespace,
        )  # fmt: skip
        _ip("-n", self.switch, "link", "set", host.port, "master", "br0", "up")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")
        self.hosts.append(host)
        return host

    def close(self) -> None:
        """Kill every process of every host, delete every namespace (and so every link)."""
        for host in self.hosts:
            host.kill()
        for name in reversed(self._made):
            with contextlib.suppress(subprocess.CalledProcessError, OSError):
                _ip("netns", "del", name)
        self._made.clear()
        if self._on_term is not None:
            signal.signal(signal.SIGTERM, self._on_term)
            self._on_term = None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def wait_until(condition: object, what: str, timeout: float = 30, step: float = 0.05) -> float:
    """Wait for `condition()` to be true; the seconds it took (AssertionError after `timeout`)."""
    started = time.monotonic()
    while not condition():  # type: ignore[operator]
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(step)
    return time.monotonic() - started
