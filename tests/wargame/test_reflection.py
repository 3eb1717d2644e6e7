"""Server reflection answers clients that speak only `grpc.reflection.v1`, and `v1alpha` ones,
on sync and asyncio servers alike (both servers of the project are made by `serving`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from wargame.runtime.reflection import V1_FILE, v1_file
from wargame.runtime.serving import create_aio_server, create_server

pytestmark = pytest.mark.integration
SERVICE = "wargame.v1.RulesEngine"
V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def _v1_classes() -> tuple[Any, Any]:
    """The v1 request and response classes in a pool of their own (a client's view)."""
    proto = descriptor_pb2.FileDescriptorProto()
    v1_file().CopyToProto(proto)
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(proto.SerializeToString())
    request = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionRequest")
    response = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionResponse")
    return message_factory.GetMessageClass(request), message_factory.GetMessageClass(response)


def _ask_v1(address: str, **fields: Any) -> Any:
    request_class, response_class = _v1_classes()
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(
            V1_METHOD,
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        return next(iter(call(iter([request_class(**fields)]), timeout=10)))


def _check(address: str) -> None:
    listed = _ask_v1(address, list_services="")
    names = {service.name for service in listed.list_services_response.service}
    assert {SERVICE, "grpc.health.v1.Health"} <= names
    assert {
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names
    found = _ask_v1(address, file_containing_symbol="grpc.reflection.v1.ServerReflection")
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(data)
        for data in found.file_descriptor_response.file_descriptor_proto
    ]
    assert [f.name for f in files] == [V1_FILE] and files[0].package == "grpc.reflection.v1"
    with grpc.insecure_channel(address) as channel:  # and v1alpha as before
        assert SERVICE in ProtoReflectionDescriptorDatabase(channel).get_services()


@pytest.fixture
def sync_address() -> Iterator[str]:
    serving = create_server("127.0.0.1:0", lambda server: None, [SERVICE])
    serving.start()
    yield f"127.0.0.1:{serving.port}"
    serving.stop(0)


@pytest.fixture
def aio_address() -> Iterator[str]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def run() -> None:
        serving = create_aio_server("127.0.0.1:0", lambda server: None, [SERVICE])
        await serving.start()
        holder["serving"] = serving
        ready.set()
        await holder.setdefault("stop", asyncio.Event()).wait()
        await serving.stop(0)

    def main() -> None:
        loop.run_until_complete(run())

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(20)
    yield f"127.0.0.1:{holder['serving'].port}"
    loop.call_soon_threadsafe(holder["stop"].set)
    thread.join(20)


def test_a_v1_only_client_lists_the_services_of_a_sync_server(sync_address: str) -> None:
    _check(sync_address)


def test_a_v1_only_client_lists_the_services_of_an_asyncio_server(aio_address: str) -> None:
    _check(aio_address)
