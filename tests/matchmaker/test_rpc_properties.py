"""Property tests over every RPC of the matchmaker: any request, with or
without a token, gets OK or a refusal with the right kind of code and a reason — never
INTERNAL or UNKNOWN — and the games already stored stay exactly as they were.

Requests are drawn from the contract itself (the message descriptors): every field of
every request message, nested messages, maps, oneofs, enum numbers the contract does not
name, integers at the edges of their types, texts that are empty, huge, non-ASCII or
shaped like keys, tokens and ids of real games. Every RPC is tried on a standalone Redis
and on a Redis Cluster: `make test` draws a sample of requests per RPC from the run's
rotating seed (a different sample each day), `-m slow` the fixed, larger set.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import grpc
import hypothesis
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import seeds
from tests.matchmaker.conftest import Client, InProcessMatchmaker, both_stores, players_of
from tests.matchmaker.helpers import legal_actions, war_game_played
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2
from wargame.v1 import matchmaker_pb2 as mm

pytestmark = pytest.mark.integration
Code = grpc.StatusCode
SERVICE = mm.DESCRIPTOR.services_by_name["Matchmaker"]
REFUSALS = {
    Code.INVALID_ARGUMENT,
    Code.NOT_FOUND,
    Code.FAILED_PRECONDITION,
    Code.UNAUTHENTICATED,
    Code.PERMISSION_DENIED,
    Code.ABORTED,
    Code.RESOURCE_EXHAUSTED,
}
STREAM_WAIT = 1.5  # a stream that is still waiting after this has accepted the request
EXAMPLES = {False: 25, True: 100}  # requests per RPC: the sample's, in depth

INTEGERS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [low, high, 0, 1, -1, 2, 5, 6, 100, 101, 10_001, high // 2, low // 2]
    return st.one_of(
        st.sampled_from([edge for edge in edges if low <= edge <= high]),
        st.integers(low, high),
    )


def texts(pool: list[str]) -> st.SearchStrategy[str]:
    odd = [
        "",
        "war",
        "battle",
        "napoleonic",
        "south",
        "north",
        "red",
        "{due}",
        "a}b{c",
        "x" * 5000,
        "\u00e9t\u00e9",
        "\U0001f642",
        "NOPE-0000-0000-0000",
        "7k3m 9qx2 hf4p t8wz",
        base64.urlsafe_b64encode(str(10**40).encode()).decode(),
        base64.urlsafe_b64encode(b"-5").decode(),
        "commit a2=I salt " + "0" * 64,
        "resign",
        "q" + "0" * 20 + ".t1",
    ]
    return st.one_of(st.sampled_from(odd + pool), st.text(max_size=30))


def message_of(descriptor: Descriptor, pool: list[str], depth: int = 0) -> st.SearchStrategy[Any]:
    """Any message of a type, its fields drawn as described in the module docstring."""
    cls = message_factory.GetMessageClass(descriptor)
    if depth > 3:
        return st.just(cls())
    fields = [f for f in descriptor.fields if f.containing_oneof is None]
    oneofs = list(descriptor.oneofs)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        message = cls()
        for field in draw(st.lists(st.sampled_from(fields), unique=True)) if fields else []:
            _fill(draw, message, field, pool, depth)
        for oneof in oneofs:
            chosen = draw(st.none() | st.sampled_from(list(oneof.fields)))
            if chosen is not None:
                _fill(draw, message, chosen, pool, depth)
        return message

    return build()


def _value(field: FieldDescriptor, pool: list[str], depth: int) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in INTEGERS:
        return integers(*INTEGERS[kind])
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if kind == FieldDescriptor.TYPE_STRING:
        return texts(pool)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64) | st.just(b"\x00" * 5000)
    if kind == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        numbers = [value.number for value in field.enum_type.values]
        return st.sampled_from(numbers) | integers(-(2**31), 2**31 - 1)
    assert field.message_type is not None
    return message_of(field.message_type, pool, depth + 1)


def _fill(
    draw: st.DrawFn, message: Any, field: FieldDescriptor, pool: list[str], depth: int
) -> None:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key_field = field.message_type.fields_by_name["key"]
        value_field = field.message_type.fields_by_name["value"]
        entries = draw(
            st.dictionaries(
                _value(key_field, pool, depth), _value(value_field, pool, depth), max_size=3
            )
        )
        target = getattr(message, field.name)
        for key, value in entries.items():
            if value_field.message_type is not None:
                target[key].CopyFrom(value)
            else:
                target[key] = value
        return
    values = draw(st.lists(_value(field, pool, depth), min_size=1, max_size=3))
    if field.is_repeated:
        target = getattr(message, field.name)
        if field.message_type is not None:
            for value in values:
                target.add().CopyFrom(value)
        else:
            target.extend(values)
    elif field.message_type is not None:
        getattr(message, field.name).CopyFrom(values[0])
    else:
        setattr(message, field.name, values[0])


EDGE_TEXTS = [
    "",
    "x" * 5000,
    "\u00e9\U0001f642",
    "a}b{c",
    base64.urlsafe_b64encode(str(10**40).encode()).decode(),
    base64.urlsafe_b64encode(b"-5").decode(),
]


def edge_requests(descriptor: Descriptor, pool: list[str]) -> list[Any]:
    """Requests with one top-level scalar field at each edge of its type (and at each id
    of the pool), the rest unset: the limits, every one of them, every run."""
    cls = message_factory.GetMessageClass(descriptor)
    out = []
    for field in descriptor.fields:
        if field.is_repeated or field.message_type is not None:
            continue
        if field.type == FieldDescriptor.TYPE_STRING:
            values: list[Any] = EDGE_TEXTS + pool
        elif field.type in INTEGERS:
            low, high = INTEGERS[field.type]
            values = [low, high, high // 2 + 1, 101, 6]
        elif field.type == FieldDescriptor.TYPE_ENUM:
            values = [-1, 99, 2**31 - 1]
        elif field.type == FieldDescriptor.TYPE_BYTES:
            values = [b"\x00" * 5000]
        else:
            continue
        for value in values:
            request = cls()
            setattr(request, field.name, value)
            out.append(request)
    return out


def call(client: Client, method: Any, request: Any, metadata: tuple[Any, ...]) -> None:
    """Make one call; raise the RpcError it ends with (streams: their first message)."""
    stub_call = getattr(client.stub, method.name)
    if method.server_streaming:
        stream = stub_call(request, metadata=metadata, timeout=STREAM_WAIT)
        try:
            next(iter(stream), None)
        except grpc.RpcError as error:
            if error.code() != Code.DEADLINE_EXCEEDED:  # still waiting: accepted
                raise
        finally:
            stream.cancel()
        return
    stub_call(request, metadata=metadata, timeout=20)


def answered_or_refused(
    client: Client, method: Any, request: Any, metadata: tuple[Any, ...]
) -> None:
    """The call is answered, or refused with a refusal's code, a reason and a short message."""
    try:
        call(client, method, request, metadata)
    except grpc.RpcError as error:
        details = error_details(error)
        shown = str(request)[:300]
        assert details.code in REFUSALS, (method.name, details.code, details.message, shown)
        assert details.reason, (method.name, details.code, details.message, shown)
        assert len(details.message) < 1000, (method.name, details.message[:200])


@pytest.fixture
def arena(
    matchmaker: InProcessMatchmaker, clients: Callable[..., Client], engine_stub: Any
) -> tuple[Client, dict[str, Client], mm.GameView, list[str]]:
    """A fuzzing player, and a game between two others it must never be able to change."""
    two = players_of(matchmaker.address, clients, "south", "north")
    game = war_game_played(engine_stub, two, 3, 11)
    fuzzer = clients(matchmaker.address, "Fuzz")
    mine = fuzzer.CreateGame(mm.CreateGameRequest(game="war")).game
    pool = [game.id, mine.id, two["south"].player_id, fuzzer.player_id, fuzzer.token_id]
    return fuzzer, two, game, pool


@both_stores
@pytest.mark.parametrize("rpc", [method.name for method in SERVICE.methods])
@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
def test_every_request_is_answered_or_refused_with_a_reason_and_games_stay_intact(
    rpc: str,
    arena: tuple[Client, dict[str, Client], mm.GameView, list[str]],
    engine_stub: Any,
    in_depth: bool,
    playout_seed: int,
) -> None:
    fuzzer, two, game, pool = arena
    method = SERVICE.methods_by_name[rpc]
    tokens = st.sampled_from(
        [
            (),
            (("authorization", f"Bearer {fuzzer.token}"),),
            (("authorization", f"Bearer {fuzzer.token}"),),
            (("authorization", "Bearer " + "p" + "a" * 16 + ".forged-forged-forged-forged"),),
            (("authorization", "Basic abc"),),
            (("authorization", "Bearer " + "x" * 3000),),
            (("authorization", f"Bearer {fuzzer.token}"), ("x-request-id", '{}<>"; ' * 20)),
        ]
    )

    @settings(
        max_examples=EXAMPLES[in_depth],
        derandomize=in_depth,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(request=message_of(method.input_type, pool), metadata=tokens)
    def check(request: Any, metadata: tuple[Any, ...]) -> None:
        answered_or_refused(fuzzer, method, request, metadata)

    if not in_depth:
        check = hypothesis.seed(playout_seed)(check)
    own = (("authorization", f"Bearer {fuzzer.token}"),)
    for request in edge_requests(method.input_type, pool):
        answered_or_refused(fuzzer, method, request, own)
    check()
    after = two["south"].GetGame(mm.GetGameRequest(game_id=game.id)).game
    assert after.version == game.version and after.state == game.state
    assert list(after.moves) == list(game.moves) and after.status == game.status
    assert legal_actions(engine_stub, after.state)  # the stored state is one the engine takes
    record = two["north"].GetRecord(mm.GetRecordRequest(game_id=game.id)).record
    replayed = engine_stub.ReplayRecord(engine_pb2.ReplayRecordRequest(record=record))
    assert replayed.final_state == after.state
