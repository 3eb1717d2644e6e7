"""gRPC server reflection as `grpc.reflection.v1` and `grpc.reflection.v1alpha`.

grpcio-reflection (pinned at 1.85.1) serves only `v1alpha`; clients that speak only `v1`
(newer grpcurl, grpc-js tools, Postman) would get UNIMPLEMENTED. The two versions have the
same messages with the same field numbers; only the package differs. So `v1` is served by
the same servicer from the same descriptor pool: its file descriptor is the `v1alpha` one
under the package `grpc.reflection.v1` (added to the default pool, so reflection describes
itself in both versions), and its messages go over the wire as the `v1alpha` classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1ALPHA_SERVICE_NAME: str = reflection.SERVICE_NAME
V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
_METHOD = "ServerReflectionInfo"


def v1_file() -> FileDescriptor:
    """The `grpc.reflection.v1` file descriptor, added to the default pool once."""
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(V1_FILE)
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old = f".{proto.package}."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.ClearField("options")
    for message in proto.message_type:
        for message_field in message.field:
            if message_field.HasField("type_name"):
                message_field.type_name = message_field.type_name.replace(old, f".{V1_PACKAGE}.")
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, f".{V1_PACKAGE}.")
            method.output_type = method.output_type.replace(old, f".{V1_PACKAGE}.")
    pool.AddSerializedFile(proto.SerializeToString())
    return pool.FindFileByName(V1_FILE)


def enable_reflection(service_names: Sequence[str], server: Any) -> None:
    """Serve reflection in both versions on a sync or asyncio server, listing
    `service_names`, the two reflection services among them."""
    v1_file()
    names = (*service_names, *SERVICE_NAMES)
    if isinstance(server, grpc.aio.Server):
        servicer: Any = reflection.aio.ReflectionServicer(names)
    else:
        servicer = reflection.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        tuple(
            grpc.method_handlers_generic_handler(name, {_METHOD: handler}) for name in SERVICE_NAMES
        )
    )
