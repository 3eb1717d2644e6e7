"""The fleet on hosts of its own (network namespaces, `hosts.py`): a 6-node Redis Cluster
(3 primaries, 3 replicas), 2 engines and 2 matchmakers, each host with its own address,
and a client host whose people and bots play through the matchmakers while hosts fail: a
Redis primary is killed (its replica takes over), a matchmaker host is cut off the
network, an engine host dies. Every connection is TLS as in production (a throwaway CA,
`tests/tls_support.py`): the matchmakers serve TLS, the engines mutual TLS, and the
matchmakers present a client certificate to them; the matchmakers share one secret key.

Nothing a client was told is committed may be lost (every acknowledged version is in the
final record), every game finishes, and every watcher sees every version once, resuming
where it left off. The run prints the games, moves, failovers, lost commits and how long
each failure took to recover from: from the failure until every game that was being
played has moved on. The full run is `slow` (`make test-slow`); the default suite kills
one Redis primary in a shorter run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.servers import matchmaker_key_env
from tests.system.hosts import Host, Network, require, wait_until
from tests.tls_support import Authority, Issued

# A run plays a few hundred moves through failovers on 12 hosts: tens of seconds alone,
# minutes on a busy machine; the players' own stall report (`Players.result`) comes first.
pytestmark = [
    pytest.mark.system,
    pytest.mark.xdist_group("multihost"),
    pytest.mark.timeout(900),
]

REDIS_PORT = 7000
BUS_PORT = 17000
ENGINE_PORT = 7100
MATCHMAKER_PORT = 7200
PLAYERS = "tests.system.multihost_players"
# The name on the engines' certificate: the matchmakers' target lists addresses.
ENGINE_NAME = "engine.wargame.test"


@dataclass(frozen=True)
class Transport:
    """The TLS files of the run: one CA, a certificate per kind of server, and the client
    certificate the matchmakers (and the players' process) present to the engines."""

    ca: Authority
    engine: Issued
    matchmaker: Issued
    client: Issued

    @classmethod
    def create(cls, folder: Path, engines: list[Host], matchmakers: list[Host]) -> Transport:
        ca = Authority.create(folder / "tls", "multihost")
        return cls(
            ca,
            ca.issue("engine", [ENGINE_NAME, *(host.address for host in engines)]),
            ca.issue("matchmaker", [host.address for host in matchmakers]),
            ca.issue("client", [], server=False, client=True),
        )

    def client_flags(self) -> list[str]:
        """The players' flags: trust the CA, show the client certificate to the engines."""
        return [
            "--tls-ca-file", str(self.ca.ca_file),
            "--tls-cert-file", str(self.client.cert_file),
            "--tls-key-file", str(self.client.key_file),
            "--engine-tls-name", ENGINE_NAME,
        ]  # fmt: skip


@dataclass
class ClusterNode:
    """One line of CLUSTER NODES."""

    node_id: str
    address: str
    flags: set[str]
    primary_id: str


@dataclass
class Fleet:
    """Every host of the run and what it serves."""

    network: Network
    folder: Path
    redis: list[Host]
    engines: list[Host]
    matchmakers: list[Host]
    client: Host
    tls: Transport
    failovers: list[str] = field(default_factory=list)

    def nodes(self, asking: Sequence[Host] | None = None) -> list[ClusterNode]:
        """The cluster as a live node sees it: the first of `asking` (every Redis host if
        None) that answers."""
        for host in self.redis if asking is None else asking:
            try:
                text = self.client.run(
                    ["redis-cli", "-h", host.address, "-p", str(REDIS_PORT), "cluster", "nodes"],
                    timeout=5,
                )
            except (RuntimeError, OSError):
                continue
            if text.strip():
                return [
                    ClusterNode(
                        parts[0], parts[1].split("@")[0], set(parts[2].split(",")), parts[3]
                    )
                    for parts in (line.split() for line in text.splitlines())
                ]
        raise AssertionError("no Redis node answers")

    def primary(self, address: str) -> ClusterNode | None:
        """The live primary at `address`, if it is one, as another node sees it (a node just
        resumed does not yet know that it was replaced)."""
        others = [host for host in self.redis if f"{host.address}:{REDIS_PORT}" != address]
        return next(
            (
                node
                for node in self.nodes(others)
                if node.address == address and "master" in node.flags and "fail" not in node.flags
            ),
            None,
        )


def redis_host(host: Host, folder: Path) -> None:
    data = folder / host.name
    data.mkdir(parents=True, exist_ok=True)
    argv = [
        "redis-server", "--bind", host.address, "--port", str(REDIS_PORT),
        "--cluster-enabled", "yes", "--cluster-port", str(BUS_PORT),
        "--cluster-config-file", str(data / "nodes.conf"), "--cluster-node-timeout", "2000",
        "--dir", str(data), "--save", "", "--appendonly", "no", "--protected-mode", "no",
        "--repl-diskless-sync-delay", "0",
    ]  # fmt: skip
    host.spawn(argv, data / "redis.log")


def engine_host(host: Host, folder: Path, seal_key_file: Path, tls: Transport) -> None:
    argv = [
        sys.executable, "-m", "engine_service.main", "serve",
        "--listen", f"{host.address}:{ENGINE_PORT}", "--workers", "1",
        "--metrics-listen", "off", "--seal-key-file", str(seal_key_file),
        "--tls-cert-file", str(tls.engine.cert_file), "--tls-key-file", str(tls.engine.key_file),
        "--tls-client-ca-file", str(tls.ca.ca_file),
    ]  # fmt: skip
    host.spawn(argv, folder / f"{host.name}.log")


def matchmaker_host(host: Host, folder: Path, redis_url: str, engine: str, tls: Transport) -> None:
    # Every player registers from the one client host: no limit per address or in all.
    argv = [
        sys.executable, "-m", "matchmaker.main", "serve",
        "--listen", f"{host.address}:{MATCHMAKER_PORT}", "--redis-url", redis_url,
        "--engine", engine, "--engine-timeout", "2", "--metrics-listen", "off",
        "--rate-limit", "0", "--register-peer-rate", "0", "--register-rate", "0",
        "--retry-hint", "0.2", "--sweep-interval", "0.05", "--bot-time", "0.05", "--grace", "2",
        "--tls-cert-file", str(tls.matchmaker.cert_file),
        "--tls-key-file", str(tls.matchmaker.key_file),
        "--engine-tls-ca-file", str(tls.ca.ca_file),
        "--engine-tls-cert-file", str(tls.client.cert_file),
        "--engine-tls-key-file", str(tls.client.key_file),
        "--engine-tls-server-name", ENGINE_NAME,
    ]  # fmt: skip
    host.spawn(argv, folder / f"{host.name}.log", env=matchmaker_key_env(folder))


@pytest.fixture
def fleet(tmp_path: Path, seal_key_file: Path) -> Iterator[Fleet]:
    require()
    with Network() as network:
        redis = [network.host(f"redis{i}") for i in range(1, 7)]
        engines = [network.host(f"engine{i}") for i in range(1, 3)]
        matchmakers = [network.host(f"matchmaker{i}") for i in range(1, 3)]
        client = network.host("client")
        tls = Transport.create(tmp_path, engines, matchmakers)
        for host in redis:
            redis_host(host, tmp_path)
        for host in engines:
            engine_host(host, tmp_path, seal_key_file, tls)
        nodes = [f"{host.address}:{REDIS_PORT}" for host in redis]

        def answering() -> bool:
            try:
                return all(
                    "PONG" in client.run(["redis-cli", "-h", h.address, "-p", "7000", "ping"], 5)
                    for h in redis
                )
            except RuntimeError:
                return False

        wait_until(answering, "the Redis nodes answer")
        client.run(
            ["redis-cli", "--cluster", "create", *nodes, "--cluster-replicas", "1", "--cluster-yes"]
        )
        fleet = Fleet(network, tmp_path, redis, engines, matchmakers, client, tls)

        def info(host: Host, section: str) -> str:
            return client.run(["redis-cli", "-h", host.address, "-p", "7000", *section.split()])

        def ready() -> bool:
            found = fleet.nodes()
            replicas = [h for h in redis if "role:slave" in info(h, "info replication")]
            return (
                sum("master" in node.flags for node in found) == 3
                and len(replicas) == 3
                and all("master_link_status:up" in info(h, "info replication") for h in replicas)
                and all("cluster_state:ok" in info(h, "cluster info") for h in redis)
            )

        wait_until(ready, "the Redis Cluster is ready")
        engine_target = "ipv4:" + ",".join(f"{h.address}:{ENGINE_PORT}" for h in engines)
        redis_url = f"redis://{redis[0].address}:{REDIS_PORT}/0"
        for host in matchmakers:
            matchmaker_host(host, tmp_path, redis_url, engine_target, tls)
        servers = ",".join(f"{h.address}:{MATCHMAKER_PORT}" for h in matchmakers)
        client.run(
            [sys.executable, "-m", PLAYERS, "--wait-healthy", "--matchmakers", servers,
             "--engine", engine_target, *tls.client_flags()],
            timeout=90,
        )  # fmt: skip
        yield fleet
        for host in matchmakers:
            # No failure of the matchmaker's own code (gRPC itself logs a traceback for a
            # reply to a caller that gave up meanwhile: those are not ours).
            log = (tmp_path / f"{host.name}.log").read_text(errors="replace")
            ours = re.search(r'File \\?"[^"\\]*/matchmaker/[^\n]*', log)
            assert ours is None and '"rpc failed"' not in log, log[-3000:]


class Players:
    """The players' process on the client host, and what it has seen so far."""

    def __init__(self, fleet: Fleet, games: int, bot_games: int, plies: int) -> None:
        self.folder = fleet.folder / "players"
        self.folder.mkdir()
        self.expected = (games + bot_games) * (plies + 2)  # roughly, the commits to come
        # The games go on past `plies` until `result`: the test's events happen while they
        # are played, however fast they go.
        self.hold = self.folder / "hold"
        self.hold.touch()
        addresses = ",".join(f"{h.address}:{MATCHMAKER_PORT}" for h in fleet.matchmakers)
        engine = "ipv4:" + ",".join(f"{h.address}:{ENGINE_PORT}" for h in fleet.engines)
        argv = [
            sys.executable, "-m", PLAYERS, "--matchmakers", addresses, "--engine", engine,
            "--games", str(games), "--bot-games", str(bot_games), "--plies", str(plies),
            "--watched", "10", "--out", str(self.folder), "--hold", str(self.hold),
            *fleet.tls.client_flags(),
        ]  # fmt: skip
        self.process = fleet.client.spawn(argv, self.folder / "players.log")

    def events(self) -> list[dict[str, Any]]:
        path = self.folder / "events.jsonl"
        if not path.exists():
            return []
        lines = path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]  # whole lines only

    def until_share(self, share: float, timeout: float = 120) -> None:
        """Wait until about `share` of the run's commits were seen."""
        wait_until(
            lambda: len(self.events()) >= share * self.expected or self.process.poll() is not None,
            f"{share:.0%} of the play",
            timeout,
            step=0.2,
        )
        assert self.process.poll() is None, "the players stopped early: " + self.log()

    def recovered(self, since: float, timeout: float = 120) -> float:
        """Seconds from `since` until every game being played then moved on again."""

        def moved_on() -> float | None:
            events = self.events()
            playing = {e["game"] for e in events if e["t"] < since}
            playing -= {e["game"] for e in events if e["t"] < since and e.get("end")}
            after: dict[str, float] = {}
            for event in events:
                if event["t"] >= since and event["game"] in playing:
                    after.setdefault(event["game"], event["t"])
            if playing <= set(after):
                return max(after.values(), default=since) - since
            return None

        wait_until(lambda: moved_on() is not None, "recovery", timeout, step=0.2)
        took = moved_on()
        assert took is not None
        return took

    def result(self, timeout: float = 600) -> dict[str, Any]:
        """The players' result, once they are done (each game ends after its action under
        way); a stall fails with where they wait."""
        self.hold.unlink(missing_ok=True)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.folder / "status.txt"
            waiting = status.read_text() if status.exists() else "(no status written)"
            recent = "\n".join(
                json.dumps(refusal) for refusal in refusals(self, time.time() - 60)[-20:]
            )
            raise AssertionError(
                f"the players did not finish within {timeout:g} s "
                f"({len(self.events())} of ~{self.expected} commits seen); "
                f"waiting now:\n{waiting}\nrefusals of the last minute:\n{recent}\n" + self.log()
            ) from None
        path = self.folder / "result.json"
        assert path.exists(), "the players wrote no result: " + self.log()
        result: dict[str, Any] = json.loads(path.read_text())
        return result

    def log(self) -> str:
        path = self.folder / "players.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def kill_a_primary(fleet: Fleet) -> tuple[float, float]:
    """Kill a Redis primary (not the one the matchmakers' URL names): (when, seconds until
    its replica served as primary)."""
    _, _, killed, took = fail_over(fleet)
    return killed, took


def fail_over(fleet: Fleet) -> tuple[Host, Host, float, float]:
    """`kill_a_primary`: (the host killed, the host of the replica promoted, when, seconds
    until it served as primary)."""
    nodes = fleet.nodes()
    url_host = fleet.redis[0].address
    victim = next(
        node
        for node in nodes
        if "master" in node.flags and not node.address.startswith(url_host + ":")
    )
    replica = next(node for node in nodes if node.primary_id == victim.node_id)
    host = next(h for h in fleet.redis if victim.address.startswith(h.address + ":"))
    promoted = next(h for h in fleet.redis if replica.address.startswith(h.address + ":"))
    host.kill()
    killed = time.time()
    took = wait_until(
        lambda: fleet.primary(replica.address) is not None, "the replica's failover", 30
    )
    fleet.failovers.append(f"{victim.address} -> {replica.address}")
    return host, promoted, killed, took


def redis_cli(fleet: Fleet, host: Host, *command: str) -> str:
    """A redis-cli command sent from the client host to the Redis node of `host` ("" while
    the node does not answer)."""
    try:
        return fleet.client.run(
            ["redis-cli", "-h", host.address, "-p", str(REDIS_PORT), *command], timeout=5
        )
    except (RuntimeError, OSError):
        return ""


def waits(fleet: Fleet, host: Host) -> int:
    """How many WAIT commands the Redis node of `host` has run."""
    stats = redis_cli(fleet, host, "info", "commandstats")
    found = re.search(r"cmdstat_wait:calls=(\d+)", stats)
    return int(found.group(1)) if found else 0


def refusals(players: Players, since: float) -> list[dict[str, Any]]:
    """The calls refused (for a reason that passes) since `since`."""
    path = players.folder / "refusals.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    found = [json.loads(line) for line in lines if line.endswith("}")]
    return [refusal for refusal in found if refusal["t"] >= since]


def report(
    result: dict[str, Any],
    fleet: Fleet,
    recoveries: dict[str, float],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Print the run's figures (to the terminal, past pytest's capture) and keep them beside
    the run's logs."""
    watchers = result["watchers"].values()
    lines = [
        f"multi-host run: {result['games']} games ({result['finished']} finished), "
        f"{result['moves']} moves, {result['acknowledged']} acknowledged commits, "
        f"{len(result['lost'])} lost; failovers: {', '.join(fleet.failovers) or 'none'}; "
        f"{len(list(watchers))} watchers, "
        f"{sum(w['resumed'] for w in result['watchers'].values())} resumes; "
        f"{result['retries']} client retries, "
        f"{result['lost_views']} moves made on a read a failover lost, read again"
    ]
    lines += [
        f"  {failure}: recovered in {seconds:.1f} s" for failure, seconds in recoveries.items()
    ]
    (fleet.folder / "figures.txt").write_text("\n".join(lines) + "\n")
    with capsys.disabled():
        print("\n" + "\n".join(lines))


def check(result: dict[str, Any]) -> None:
    assert not result["failures"], result["failures"]
    assert result["lost"] == [], f"acknowledged commits lost: {result['lost']}"
    assert result["finished"] == result["games"]
    for game_id, watcher in result["watchers"].items():
        got = watcher["versions"]
        missing = sorted(set(range(1, watcher["final"] + 1)) - set(got))
        repeated = sorted({v for v in got if got.count(v) > 1})
        assert watcher["complete"], (
            f"watcher of {game_id} (final version {watcher['final']}, resumed "
            f"{watcher['resumed']} times): missing {missing}, repeated {repeated}, "
            f"resyncs at {watcher['resyncs']}, last seen {got[-3:]}"
        )


def test_a_redis_primary_fails_over_mid_play(
    fleet: Fleet, capsys: pytest.CaptureFixture[str]
) -> None:
    players = Players(fleet, games=8, bot_games=4, plies=24)
    players.until_share(0.25)
    killed, failover = kill_a_primary(fleet)
    recoveries = {
        f"Redis primary killed (replica promoted in {failover:.1f} s)": players.recovered(killed)
    }
    result = players.result()
    report(result, fleet, recoveries, capsys)
    check(result)


@pytest.mark.slow
def test_fifty_games_survive_a_primary_a_matchmaker_host_and_an_engine_host(
    fleet: Fleet, capsys: pytest.CaptureFixture[str]
) -> None:
    players = Players(fleet, games=40, bot_games=14, plies=40)
    recoveries: dict[str, float] = {}
    players.until_share(0.15)
    killed, failover = kill_a_primary(fleet)
    recoveries[f"Redis primary killed (replica promoted in {failover:.1f} s)"] = players.recovered(
        killed
    )
    players.until_share(0.4)
    fleet.matchmakers[1].cut()
    cut = time.time()
    recoveries["matchmaker host cut off the network"] = players.recovered(cut)
    players.until_share(0.65)
    dead = fleet.engines[1]
    dead.cut()
    dead.kill()
    died = time.time()
    recoveries["engine host dead"] = players.recovered(died)
    result = players.result()
    report(result, fleet, recoveries, capsys)
    check(result)
    assert result["games"] >= 50


# A second failover after a first, with a frozen replica between (18 s of CPU, the most of
# any test): `make test-slow`, beside the fifty games; `make test` keeps the first failover.
@pytest.mark.slow
def test_a_shard_fails_over_again_once_its_old_primary_is_back_as_a_lagging_replica(
    fleet: Fleet, capsys: pytest.CaptureFixture[str]
) -> None:
    """A primary dies and its replica takes over; the old primary comes back as the new
    one's replica, and the matchmakers' moves on that shard wait for it again. It freezes
    (SIGSTOP): the shard's moves are refused with the retry hint, as no replica can confirm
    them. Then the new primary dies and the frozen one, resumed, takes over: no
    acknowledged move is lost."""
    players = Players(fleet, games=8, bot_games=4, plies=40)
    players.until_share(0.15)
    old, promoted, killed, failover = fail_over(fleet)
    recoveries = {
        f"Redis primary killed (replica promoted in {failover:.1f} s)": players.recovered(killed)
    }
    redis_host(old, fleet.folder)  # back with its cluster config: it rejoins as a replica
    wait_until(
        lambda: "master_link_status:up" in redis_cli(fleet, old, "info", "replication"),
        "the old primary's rejoining",
        60,
    )
    before = waits(fleet, promoted)
    wait_until(lambda: waits(fleet, promoted) > before, "moves waiting for the replica", 60)
    players.until_share(0.35)
    if "role:master" in redis_cli(fleet, old, "info", "replication"):
        # The shard failed back of its own accord meanwhile (a busy machine): the roles swap.
        fleet.failovers.append(f"{promoted.address} -> {old.address} (of its own accord)")
        old, promoted = promoted, old
    server = old.processes[-1]  # a Redis host runs its redis-server alone
    os.kill(server.pid, signal.SIGSTOP)
    frozen = time.time()
    try:
        wait_until(
            lambda: any(
                refusal["method"] == "SubmitActions"
                and refusal["code"] == "UNAVAILABLE"
                and "no Redis replica has confirmed it yet" in refusal["message"]
                and "retry in 0.2 s" in refusal["message"]
                for refusal in refusals(players, frozen)
            ),
            "a move refused while no replica can confirm it",
            60,
        )
        promoted.kill()
    finally:
        os.kill(server.pid, signal.SIGCONT)
    second = time.time()
    took = wait_until(
        lambda: fleet.primary(f"{old.address}:{REDIS_PORT}") is not None, "the second failover", 60
    )
    fleet.failovers.append(f"{promoted.address} -> {old.address}")
    recoveries[f"promoted primary killed (lagging replica promoted in {took:.1f} s)"] = (
        players.recovered(second)
    )
    result = players.result()
    report(result, fleet, recoveries, capsys)
    check(result)
