"""Security fixtures: one real engine process a module, with the default limits.

A module that needs other limits defines its own `engine` fixture beside these.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from tests.security.engine import start_engine
from tests.servers import ServiceProcess
from wargame.v1 import engine_pb2_grpc


@pytest.fixture(scope="module")
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProcess]:
    """An engine process with the default limits (8 request threads, the default pool)."""
    # A module of its own: one module's abuse cannot leave another's engine busy. Its
    # connections are not recycled: a long replay on a busy machine can outlast a
    # connection's age and grace (about 100 s), and recycling is not what these tests are
    # about (tests/system/test_engine_balancing.py is).
    process = start_engine(
        tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]),
        "--max-connection-age",
        "0",
    )
    yield process
    process.stop()


@pytest.fixture
def stub(engine: ServiceProcess) -> Iterator[engine_pb2_grpc.RulesEngineStub]:
    """A stub on a fresh channel to this module's engine."""
    with grpc.insecure_channel(engine.address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)
