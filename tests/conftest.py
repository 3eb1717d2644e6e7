"""Fixtures shared by every suite: real Redis, real engine servers (in-process and processes).

Markers: tests without unit/integration/system/slow are marked `unit`; fixtures that start
servers mark nothing by themselves, so suites mark themselves (`pytestmark`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
import redis
from hypothesis import HealthCheck, settings

from tests import seeds
from tests.servers import (
    RedisServer,
    ServiceProcess,
    free_port,
    reserve_port,
    start_engine,
    start_redis,
)

KINDS = ("unit", "integration", "system")

# Property tests never depend on the machine's speed (CI runs on a busy machine): no time
# limit per example, no health check that times the drawing of inputs.
settings.register_profile("wargame", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("wargame")
NOWHERE = reserve_port()  # held for the whole session; see keep_off_default_addresses


def pytest_configure(config: pytest.Config) -> None:
    """Service logs in tests: readable lines, warnings and above only; no default address."""
    from wargame.runtime.logs import configure_logging

    configure_logging("console", "warning")
    keep_off_default_addresses()
    seeds.fix_for_the_run()


def pytest_collection_finish(session: pytest.Session) -> None:
    """What start-up and collection built (modules, the items) lives as long as the run:
    frozen out of every garbage collection (each full one walked it again, ~15 s of the
    workers' CPU in all)."""
    gc.freeze()


def pytest_report_header() -> str:
    """The run's seed of the sampled random tests."""
    return f"random samples: {seeds.reproduce_line()}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test that drew random games says which seed drew them."""
    report: pytest.TestReport = yield
    if report.failed and "playout_seed" in getattr(item, "fixturenames", ()):
        report.sections.append(("random sample", seeds.reproduce_line()))
    return report


@pytest.fixture
def playout_seed() -> int:
    """The run's base seed, for a test that plays a sample of random games (`seeds`)."""
    return seeds.base_seed()


def keep_off_default_addresses() -> None:
    """Point every WARGAME_* address variable at a port this session holds without listening.

    Tests give each server and client an address of their own. One that forgets gets
    "connection refused" or "cannot listen" at once, instead of binding a default port (50051,
    50052, 6399, 9151, 9152) or talking to a stack a developer runs there; metrics are off
    unless a test asks for them.
    """
    nowhere = f"127.0.0.1:{NOWHERE.getsockname()[1]}"
    os.environ.update(
        {
            "WARGAME_ENGINE": nowhere,
            "WARGAME_MATCHMAKER": nowhere,
            "WARGAME_ENGINE_LISTEN": nowhere,
            "WARGAME_MATCHMAKER_LISTEN": nowhere,
            "WARGAME_WEB_LISTEN": nowhere,
            "WARGAME_REDIS_URL": f"redis://{nowhere}/0",
            "WARGAME_ENGINE_METRICS_LISTEN": "off",
            "WARGAME_MATCHMAKER_METRICS_LISTEN": "off",
            "WARGAME_WEB_METRICS_LISTEN": "off",
        }
    )


# The folders whose modules run longest (whole stacks, browsers, clusters), collected first.
# `--dist loadgroup` hands the workers modules (and `xdist_group`s) by their number of tests,
# most first, and in this order among equals; with its reordering off
# (`--no-loadscope-reorder`, this order alone) and with the folders spread evenly over the
# run, `make test` was no faster on 2 cores (289 s and 325 s, against 277-302 s).
TESTS = Path(__file__).resolve().parent
LONGEST_FIRST = (
    "system",
    "web",
    "node",
    "matchmaker",
    "security",
    "conformance",
    "wargame",
    "engine_service",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests that name no kind as unit tests; the longest folders first (a stable
    sort: each module's tests stay together, in their order)."""
    for item in items:
        if not any(item.get_closest_marker(kind) for kind in KINDS):
            item.add_marker(pytest.mark.unit)

    def rank(item: pytest.Item) -> int:
        folder = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
        return LONGEST_FIRST.index(folder) if folder in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


@pytest.fixture(scope="session")
def nowhere() -> str:
    """An address where nothing listens, and nothing can start listening, for the session."""
    return f"127.0.0.1:{NOWHERE.getsockname()[1]}"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server for the session, on a free loopback port."""
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session's Redis, flushed before the test."""
    return flushed(redis_server)


def flushed(server: RedisServer) -> str:
    """`server` emptied (FLUSHALL): its URL."""
    client = redis.Redis.from_url(server.url)
    client.flushall()
    client.close()
    return server.url


@contextmanager
def engine_in_process(seal_key: bytes | None = None) -> Iterator[str]:
    """Serve a RulesEngine in this process on a free port (not a default one); its address.

    `seal_key` None starts it without a seal key, as an engine configured without one.
    """
    from engine_service.convert.tags import tag_key
    from engine_service.rules import rulesets
    from engine_service.service import SERVICE_NAME, RulesEngine
    from wargame.runtime.serving import create_server, register_service
    from wargame.v1 import engine_pb2

    servicer = RulesEngine(rulesets(seal_key), tag_key=tag_key(seal_key))
    serving = create_server(
        f"127.0.0.1:{free_port()}",
        lambda server: register_service(
            server, servicer, engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"]
        ),
        [SERVICE_NAME],
    )
    serving.start()
    try:
        yield f"127.0.0.1:{serving.port}"
    finally:
        serving.stop(grace=1)


@pytest.fixture(scope="session")
def engine_address() -> Iterator[str]:
    """A RulesEngine served in-process on a free port, with the tests' seal key."""
    with engine_in_process(TEST_SEAL_KEY) as address:
        yield address


@pytest.fixture
def engine_channel(engine_address: str) -> Iterator[grpc.Channel]:
    """A channel to the in-process engine."""
    with grpc.insecure_channel(engine_address) as channel:
        yield channel


TEST_SEAL_KEY = bytes(range(32))


@pytest.fixture(scope="session")
def seal_key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A seal-key file holding TEST_SEAL_KEY in hex."""
    path = tmp_path_factory.mktemp("keys") / "seal.key"
    path.write_text(TEST_SEAL_KEY.hex() + "\n")
    return path


@pytest.fixture(scope="session")
def engine_process(
    tmp_path_factory: pytest.TempPathFactory, seal_key_file: Path
) -> Iterator[ServiceProcess]:
    """A RulesEngine run as a real `wargame-engine` process (one worker)."""
    logs = tmp_path_factory.mktemp("engine-logs")
    process = start_engine(logs, "--seal-key-file", str(seal_key_file))
    yield process
    process.stop()
