"""Pools made one after another in a process whose other threads are busy in gRPC, the
process prepared for gRPC as the engine prepares its own (`engine_service.main.before_grpc`).

Run as a script (`test_pool.py`), outside the `tests` package, which prepares its processes
the same way: `python pools_beside_grpc.py POOLS` prints how many pools could not start
their processes, and exits 1 if any could not.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from engine_service.main import before_grpc

if TYPE_CHECKING:
    from engine_service.pool import Work


def echo() -> Work:
    """Work that answers its payload."""
    return lambda job, payload, seconds: payload


class Caller:
    """A caller that stays, without a deadline."""

    def is_active(self) -> bool:
        return True

    def time_remaining(self) -> None:
        return None


def main(pools: int) -> int:
    before_grpc()
    from concurrent import futures

    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    from engine_service.pool import Job, Pool

    server = grpc.server(futures.ThreadPoolExecutor(4))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    stop = threading.Event()

    def call_again() -> None:  # a thread in gRPC at every moment it can be
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            check = health_pb2_grpc.HealthStub(channel).Check
            while not stop.is_set():
                check(health_pb2.HealthCheckRequest(), timeout=30)

    callers = [threading.Thread(target=call_again) for _ in range(3)]
    for thread in callers:
        thread.start()
    failed = 0
    try:
        for _ in range(pools):
            pool = Pool(echo, (), processes=2, queue=0, log_format="console", log_level="critical")
            try:
                for _ in range(3):
                    pool.run(Job("echo", b"up", 5.0, 30.0), Caller())
            except Exception as error:
                failed += 1
                print(f"a pool failed: {error}", file=sys.stderr)
            finally:
                pool.close()
    finally:
        stop.set()
        for thread in callers:
            thread.join()
        server.stop(None)
    print(f"{failed} of {pools} pools could not start their processes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
