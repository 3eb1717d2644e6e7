"""The procedures the web service serves, each forwarded to one gRPC method.

Every method of `wargame.v1.Matchmaker` goes to the matchmaker; of `wargame.v1.RulesEngine`
only the read-only calls a board needs go to the engine (the engine's searches and state
changes stay behind the matchmaker, which checks who may ask for them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor

from wargame.v1 import engine_pb2, matchmaker_pb2

ENGINE_CALLS = ("DescribeGame", "ListLegalActions", "ParseAction", "FormatAction")


@dataclass(frozen=True)
class Route:
    """One served procedure: `/wargame.v1.Matchmaker/SubmitActions`."""

    path: str
    backend: str  # "matchmaker" or "engine"
    method: str  # the gRPC method path
    request: Any  # the request message class
    response: Any  # the response message class
    streaming: bool  # server-streaming


def _route(method: MethodDescriptor, backend: str) -> Route:
    path = f"/{method.containing_service.full_name}/{method.name}"
    return Route(
        path=path,
        backend=backend,
        method=path,
        request=message_factory.GetMessageClass(method.input_type),
        response=message_factory.GetMessageClass(method.output_type),
        streaming=method.server_streaming,
    )


def routes() -> dict[str, Route]:
    """Every served procedure by its path."""
    matchmaker = matchmaker_pb2.DESCRIPTOR.services_by_name["Matchmaker"]
    engine = engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"]
    served = [_route(method, "matchmaker") for method in matchmaker.methods]
    served += [_route(engine.methods_by_name[name], "engine") for name in ENGINE_CALLS]
    return {route.path: route for route in served}
