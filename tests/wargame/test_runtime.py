"""The shared runtime: rich statuses both ways, one-line configuration errors, serving."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.servers import busy_port
from wargame.runtime.config import ConfigError, Parser, host_port
from wargame.runtime.serving import (
    MalformedRequest,
    check_port_free,
    create_server,
    register_service,
)
from wargame.runtime.status import error_details, rich_status
from wargame.v1 import engine_pb2, engine_pb2_grpc

pytestmark = pytest.mark.integration


class _Failing(engine_pb2_grpc.RulesEngineServicer):  # only Ping is called
    def Ping(self, request: Any, context: grpc.ServicerContext) -> engine_pb2.PingResponse:
        if isinstance(request, MalformedRequest):
            context.abort_with_status(
                rich_status(
                    grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_REQUEST", request.describe()
                )
            )
        if request.payload == b"fail":
            context.abort_with_status(
                rich_status(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "INVALID_STATE",
                    "bad state",
                    fields=[("state.pieces[2].cell", "z9 is no cell")],
                    metadata={"index": "2"},
                )
            )
        return engine_pb2.PingResponse(payload=request.payload)


@pytest.fixture
def serving():
    instance = create_server(
        "127.0.0.1:0",
        lambda server: register_service(
            server,
            _Failing(),  # type: ignore[abstract]
            engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"],
        ),
        ["wargame.v1.RulesEngine"],
    )
    instance.start()
    yield instance
    instance.stop(0)


def test_rich_status_reaches_the_client_with_reason_and_field(serving) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{serving.port}") as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        assert stub.Ping(engine_pb2.PingRequest(payload=b"ok")).payload == b"ok"
        with pytest.raises(grpc.RpcError) as failure:
            stub.Ping(engine_pb2.PingRequest(payload=b"fail"))
    details = error_details(failure.value)
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "INVALID_STATE" and details.message == "bad state"
    assert details.fields == (("state.pieces[2].cell", "z9 is no cell"),)
    assert details.metadata == {"index": "2"}


def test_retry_hint_travels_as_retry_info() -> None:
    status = rich_status(
        grpc.StatusCode.UNAVAILABLE, "ENGINE_UNAVAILABLE", "down", retry_after=0.25
    )
    from google.rpc import error_details_pb2, status_pb2

    proto = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
    kinds = {detail.type_url.rsplit("/", 1)[1] for detail in proto.details}
    assert kinds == {"google.rpc.ErrorInfo", "google.rpc.RetryInfo"}
    retry = error_details_pb2.RetryInfo()
    next(d for d in proto.details if d.Is(retry.DESCRIPTOR)).Unpack(retry)
    assert retry.retry_delay.ToMilliseconds() == 250


def test_unknown_reason_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        rich_status(grpc.StatusCode.INTERNAL, "NOT_A_REASON", "x")


def test_health_answers_serving_and_reflection_lists_the_service(serving) -> None:
    address = f"127.0.0.1:{serving.port}"
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "wargame.v1.RulesEngine"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        services = ProtoReflectionDescriptorDatabase(channel).get_services()
    assert "wargame.v1.RulesEngine" in services and "grpc.health.v1.Health" in services


def test_graceful_stop_reports_not_serving() -> None:
    instance = create_server("127.0.0.1:0", lambda server: None, ["wargame.v1.RulesEngine"])
    instance.start()
    instance.stop(0)
    assert (
        instance.health._server_status["wargame.v1.RulesEngine"]
        == health_pb2.HealthCheckResponse.NOT_SERVING
    )


def test_a_busy_port_is_refused_not_shared() -> None:
    with busy_port() as port:
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            create_server(f"127.0.0.1:{port}", lambda server: None, [])
        with pytest.raises(ConfigError, match="cannot listen"):
            check_port_free(f"127.0.0.1:{port}")


def test_flags_read_environment_and_fail_in_one_line(monkeypatch, capsys) -> None:
    monkeypatch.setenv("WARGAME_TEST_WORKERS", "3")
    parser = Parser(prog="demo")
    parser.flag("--workers", env="TEST_WORKERS", type=int, default=1)
    assert parser.parse_args([]).workers == 3
    assert parser.parse_args(["--workers", "5"]).workers == 5
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --bogus" in err


def test_host_port_parsing() -> None:
    assert host_port("127.0.0.1:50051") == ("127.0.0.1", 50051)
    assert host_port("[::1]:80") == ("::1", 80)
    for bad in ("nohost", "x:99999", "a:b"):
        with pytest.raises(ValueError):
            host_port(bad)


def test_undecodable_bytes_reach_the_servicer_as_malformed_not_internal(serving) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{serving.port}") as channel:
        raw = channel.unary_unary("/wargame.v1.RulesEngine/Ping")
        with pytest.raises(grpc.RpcError) as failure:
            raw(b"\xff\xff\xff")
    details = error_details(failure.value)
    assert details.code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.reason == "MALFORMED_REQUEST"
    assert "wargame.v1.PingRequest" in details.message
