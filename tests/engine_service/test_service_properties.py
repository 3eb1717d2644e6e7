"""Property tests: whatever arrives, the engine answers with a proper status, and the right one.

Random bytes as requests, states mutated anywhere (any field, found by protobuf reflection,
set to any value of its type), random action texts, and requests of every RPC filled by
reflection (long and strange texts, numbers across their whole range) against an engine
with small limits: every answer is OK or a refusal with a reason (INVALID_ARGUMENT,
NOT_FOUND, RESOURCE_EXHAUSTED) in a short message — never INTERNAL or UNKNOWN, never a
hang — and a state the engine accepts comes back as a state it accepts again.

The verdict on a mutated state is not taken from the engine: each mutation in
`tests/engine_service/state_mutations.py` says what the rules make of it (a state that could
not arise must be refused, a harmless change accepted), and a random mutation is checked
against an independent structural oracle. An accepted action is checked against the rules
too: it is one of the legal actions, and applying it gives what applying that legal action
gives.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_service.handling import Limits
from engine_service.rules import rulesets
from engine_service.service import SERVICE_NAME, RulesEngine
from tests.conftest import TEST_SEAL_KEY
from tests.engine_service.state_mutations import (
    MUTATIONS,
    REFUSE,
    SIDES,
    Mutation,
    structural_problem,
)
from wargame.runtime.quoting import MESSAGE_BYTES
from wargame.runtime.serving import create_server, register_service
from wargame.runtime.status import error_details
from wargame.v1 import engine_pb2, engine_pb2_grpc, game_pb2

pytestmark = pytest.mark.integration

GAMES = ("war", "battle", "napoleonic")
REFUSALS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
SERVICE = engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"]
METHODS = [method.name for method in SERVICE.methods]


def draw_state(
    data: st.DataObject, states: dict[str, list[game_pb2.GameState]]
) -> tuple[str, game_pb2.GameState]:
    """A game drawn from GAMES, and one of its sample states."""
    game = data.draw(st.sampled_from(GAMES))
    return game, data.draw(st.sampled_from(states[game]))


SETTINGS = settings(
    max_examples=120,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def states(engine_address: str) -> dict[str, list[game_pb2.GameState]]:
    """Valid states of every game: initial ones and a few from random play, in their
    structured form (position text left out), which is what the mutations change."""
    found: dict[str, list[game_pb2.GameState]] = {}
    with grpc.insecure_channel(engine_address) as channel:
        stub = engine_pb2_grpc.RulesEngineStub(channel)
        rng = random.Random(99)
        for game in GAMES:
            state = stub.NewGame(engine_pb2.NewGameRequest(game=game)).state
            found[game] = [state]
            for _ in range(30):
                actions = stub.ListLegalActions(
                    engine_pb2.ListLegalActionsRequest(state=state)
                ).actions
                if not actions:
                    break
                state = stub.ApplyActions(
                    engine_pb2.ApplyActionsRequest(
                        state=state, actions=[rng.choice(actions).action]
                    )
                ).state
                found[game].append(state)
    for listed in found.values():
        for state in listed:
            state.ClearField("position")
    return found


def _answer(call: Any, request: Any) -> tuple[grpc.StatusCode, Any]:
    try:
        return grpc.StatusCode.OK, call(request, timeout=20)
    except grpc.RpcError as error:
        details = error_details(error)
        assert details.code in REFUSALS, (details.code, details.message)
        assert details.reason, details.message
        return details.code, None


def _scalar_value(field: FieldDescriptor, data: st.DataObject) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return data.draw(
            st.one_of(
                st.text(max_size=12),
                st.sampled_from(
                    [
                        "",
                        "a1",
                        "j10",
                        "e5",
                        "139",
                        "47",
                        "d4",
                        "south",
                        "north",
                        "red",
                        "black",
                        "attacker",
                        "defender",
                        "troop",
                        "artillery",
                        "guards",
                        "wagon",
                        "war",
                        "battle",
                    ]
                ),
            )
        )
    if kind == FieldDescriptor.TYPE_BOOL:
        return data.draw(st.booleans())
    if kind == FieldDescriptor.TYPE_BYTES:
        return data.draw(st.binary(max_size=40))
    if kind == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        return data.draw(st.sampled_from([v.number for v in field.enum_type.values] + [999]))
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return data.draw(st.floats(allow_nan=False, width=32))
    bits = (
        64
        if kind
        in (
            FieldDescriptor.TYPE_UINT64,
            FieldDescriptor.TYPE_FIXED64,
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_SINT64,
            FieldDescriptor.TYPE_SFIXED64,
        )
        else 32
    )
    signed = kind in (
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    )
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return data.draw(st.one_of(st.integers(0, 20), st.integers(low, high)))


def _targets(message: Any) -> list[tuple[Any, FieldDescriptor]]:
    """Every (message, field) in a message tree, set or not."""
    found: list[tuple[Any, FieldDescriptor]] = []
    for field in message.DESCRIPTOR.fields:
        found.append((message, field))
        if (
            field.type == FieldDescriptor.TYPE_MESSAGE
            and not field.message_type.GetOptions().map_entry
        ):
            if field.is_repeated:
                for item in getattr(message, field.name):
                    found += _targets(item)
            elif message.HasField(field.name):
                found += _targets(getattr(message, field.name))
    return found


def mutate(state: game_pb2.GameState, data: st.DataObject) -> game_pb2.GameState:
    """A copy of `state` with one to three fields changed anywhere in its tree."""
    mutated = game_pb2.GameState()
    mutated.CopyFrom(state)
    for _ in range(data.draw(st.integers(1, 3))):
        holder, field = data.draw(st.sampled_from(_targets(mutated)))
        container = getattr(holder, field.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            key = data.draw(st.sampled_from(sorted(container) or ["x"]))
            if data.draw(st.booleans()):
                container.pop(key, None)
            else:
                container[key] = data.draw(st.text(max_size=8))
        elif field.is_repeated:
            action = data.draw(st.sampled_from(["drop", "duplicate", "append"]))
            if action == "drop" and len(container):
                del container[data.draw(st.integers(0, len(container) - 1))]
            elif action == "duplicate" and len(container):
                item = container[data.draw(st.integers(0, len(container) - 1))]
                if field.type == FieldDescriptor.TYPE_MESSAGE:
                    container.add().CopyFrom(item)
                else:
                    container.append(item)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                container.add()
            else:
                container.append(_scalar_value(field, data))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            holder.ClearField(field.name)
        else:
            setattr(holder, field.name, _scalar_value(field, data))
    return mutated


@given(data=st.data())
@SETTINGS
def test_random_bytes_to_any_rpc_get_a_proper_status(
    engine_channel: grpc.Channel, data: st.DataObject
) -> None:
    method = data.draw(st.sampled_from(METHODS))
    payload = data.draw(st.binary(max_size=300))
    raw = engine_channel.unary_unary(f"/wargame.v1.RulesEngine/{method}")
    try:
        raw(payload, timeout=20)
    except grpc.RpcError as error:
        details = error_details(error)
        assert details.code in REFUSALS, (method, details.code, details.message)


def _accepted_state_is_consistent(
    stub: engine_pb2_grpc.RulesEngineStub, state: game_pb2.GameState, reply: Any, rng: random.Random
) -> None:
    """An accepted state: a listed action applies, and the result is accepted again."""
    if not reply.actions:
        return
    action = rng.choice(list(reply.actions)).action
    code, applied = _answer(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action])
    )
    assert code is grpc.StatusCode.OK, "an action listed as legal must apply"
    code, _ = _answer(
        stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=applied.state)
    )
    assert code is grpc.StatusCode.OK, "a state the engine returns must be accepted again"


def _check_verdict(
    stub: engine_pb2_grpc.RulesEngineStub,
    mutation: Mutation,
    original: game_pb2.GameState,
    start: game_pb2.GameState,
    rng: random.Random,
) -> bool:
    """Mutate `original`, ask the engine, and hold its answer to the mutation's verdict.

    Returns False when the mutation does not apply to this state."""
    made = mutation.make(original, rng, start)
    if made is None:
        return False
    state, verdict = made
    code, reply = _answer(stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=state))
    if verdict is REFUSE:
        assert code is grpc.StatusCode.INVALID_ARGUMENT, (
            f"{mutation.name}: a state that could not arise was accepted"
        )
    else:
        assert code is grpc.StatusCode.OK, f"{mutation.name}: a state that can arise was refused"
        _accepted_state_is_consistent(stub, state, reply, rng)
    return True


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_gets_the_verdict_of_the_rules(
    stub: engine_pb2_grpc.RulesEngineStub,
    states: dict[str, list[game_pb2.GameState]],
    mutation: Mutation,
) -> None:
    rng = random.Random(mutation.name)
    applied = 0
    for game in mutation.games or GAMES:
        for original in states[game]:
            applied += _check_verdict(stub, mutation, original, states[game][0], rng)
    assert applied, f"{mutation.name} applies to none of the sample states"


@given(data=st.data())
@SETTINGS
def test_mutated_states_are_refused_or_accepted_consistently(
    stub: engine_pb2_grpc.RulesEngineStub,
    states: dict[str, list[game_pb2.GameState]],
    data: st.DataObject,
) -> None:
    game, original = draw_state(data, states)
    rng = data.draw(st.randoms(use_true_random=False))
    if data.draw(st.booleans()):
        # A named mutation, its verdict from the rules.
        choices = [m for m in MUTATIONS if game in (m.games or GAMES)]
        mutation = data.draw(st.sampled_from(choices))
        _check_verdict(stub, mutation, original, states[game][0], rng)
        return
    # A random mutation anywhere: structural impossibilities must be refused.
    state = mutate(original, data)
    code, reply = _answer(stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=state))
    problem = structural_problem(original, state)
    if problem is not None:
        assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND), problem
    if code is grpc.StatusCode.OK:
        _accepted_state_is_consistent(stub, state, reply, rng)


def _random_action(
    state: game_pb2.GameState, legal: list[engine_pb2.LegalAction], data: st.DataObject
) -> game_pb2.Action:
    """A legal action, one sent for another side, one with a field changed, or one made up."""
    kind = data.draw(
        st.sampled_from(
            ["legal", "other side", "changed", "notation", "war", "battle", "napoleonic", "resign"]
        )
    )
    if kind in ("legal", "other side", "changed") and legal:
        action = game_pb2.Action()
        action.CopyFrom(data.draw(st.sampled_from(legal)).action)
        if kind == "other side":
            action.side = data.draw(st.sampled_from(SIDES[state.game]))
        elif kind == "changed":
            scalars = [
                (holder, field)
                for holder, field in _targets(action)
                if field.type != FieldDescriptor.TYPE_MESSAGE and not field.is_repeated
            ]
            holder, field = data.draw(st.sampled_from(scalars))
            setattr(holder, field.name, _scalar_value(field, data))
        return action
    action = game_pb2.Action(
        side=data.draw(st.sampled_from([*state.to_act, "south", "red", "nobody", ""]))
    )
    if kind == "notation":
        action.notation = data.draw(st.text(max_size=30))
    elif kind in ("war", "battle", "napoleonic", "resign"):
        branch = getattr(action, kind)
        branch.SetInParent()
        for holder, field in _targets(branch)[:6]:
            if field.type != FieldDescriptor.TYPE_MESSAGE and not field.is_repeated:
                setattr(holder, field.name, _scalar_value(field, data))
    return action


@given(data=st.data())
@SETTINGS
def test_random_actions_are_refused_with_a_reason(
    stub: engine_pb2_grpc.RulesEngineStub,
    states: dict[str, list[game_pb2.GameState]],
    data: st.DataObject,
) -> None:
    _game, state = draw_state(data, states)
    legal = list(stub.ListLegalActions(engine_pb2.ListLegalActionsRequest(state=state)).actions)
    action = _random_action(state, legal, data)
    code, verdict = _answer(
        stub.ValidateAction, engine_pb2.ValidateActionRequest(state=state, action=action)
    )
    applied_code, applied = _answer(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action])
    )
    format_code, formatted = _answer(
        stub.FormatAction, engine_pb2.FormatActionRequest(state=state, action=action)
    )
    if code is not grpc.StatusCode.OK:
        assert applied_code is not grpc.StatusCode.OK, "applied what ValidateAction refused"
        return
    if not verdict.legal:
        assert verdict.reason and verdict.message, "a verdict of illegal names its reason"
        assert applied_code is not grpc.StatusCode.OK, "applied an action judged illegal"
        return
    # Judged legal: it applies, and it is what the rules allow.
    assert applied_code is grpc.StatusCode.OK, "an action judged legal must apply"
    assert format_code is grpc.StatusCode.OK and formatted.notation == verdict.notation
    assert applied.applied[0].notation == verdict.notation
    if action.WhichOneof("kind") in ("resign", "offer_draw", "accept_draw", "decline_draw"):
        assert (
            applied.state.HasField("outcome")
            or applied.state.draw_offer
            or (action.WhichOneof("kind") == "decline_draw")
        )
        return
    assert not action.side or action.side in state.to_act, "a side acted out of turn"
    same = [entry for entry in legal if entry.notation == verdict.notation]
    assert len(same) == 1, f"{verdict.notation!r} is not one of the legal actions"
    by_rules = stub.ApplyActions(
        engine_pb2.ApplyActionsRequest(state=state, actions=[same[0].action])
    )
    assert applied.state == by_rules.state, "the action did not do what its legal twin does"
    assert list(applied.events) == list(by_rules.events)


# -- every RPC, with the limits ------------------------------------------------------------

SMALL_LIMITS = Limits(
    max_message_bytes=64 * 1024,
    max_actions=8,
    max_record_actions=40,
    max_record_bytes=4096,
    max_suggest_seconds=0.05,
)
LONG_TEXTS = ["x" * 5000, "é" * 3000, "7" * 5000, '[Game "war"]\n' + "1. south e3-e4\n" * 300]


@pytest.fixture(scope="module")
def limited_channel() -> Iterator[grpc.Channel]:
    """An engine in this process with small limits, so that requests reach them often."""
    servicer = RulesEngine(rulesets(TEST_SEAL_KEY), SMALL_LIMITS)
    serving = create_server(
        "127.0.0.1:0",
        lambda server: register_service(
            server,
            servicer,
            engine_pb2.DESCRIPTOR.services_by_name["RulesEngine"],
            max_request_bytes=SMALL_LIMITS.max_message_bytes,
        ),
        [SERVICE_NAME],
        max_message_bytes=SMALL_LIMITS.max_message_bytes,
    )
    serving.start()
    with grpc.insecure_channel(
        f"127.0.0.1:{serving.port}", options=[("grpc.max_send_message_length", 1 << 24)]
    ) as channel:
        yield channel
    serving.stop(grace=1)


def _text(data: st.DataObject) -> str:
    return data.draw(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(["", "war", "battle", "napoleonic", "south", "e3-e4", "a1", "0"]),
            st.sampled_from(LONG_TEXTS),
        )
    )


def fill(
    message: Any,
    data: st.DataObject,
    states: dict[str, list[game_pb2.GameState]],
    depth: int = 3,
) -> None:
    """Set some fields of `message` (by reflection) to values of their types: valid and
    mutated states, texts short, long and strange, numbers across their whole range."""
    for field in message.DESCRIPTOR.fields:
        if not data.draw(st.booleans()):
            continue
        holder = getattr(message, field.name)
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            entry = field.message_type
            if entry.GetOptions().map_entry:
                for _ in range(data.draw(st.integers(0, 3))):
                    holder[_text(data)] = _text(data)
            elif entry.full_name == "wargame.v1.GameState":
                _game, state = draw_state(data, states)
                if data.draw(st.booleans()):
                    state = mutate(state, data)
                for _ in range(data.draw(st.integers(1, 2)) if field.is_repeated else 1):
                    (holder.add() if field.is_repeated else holder).CopyFrom(state)
            elif depth > 0:
                for _ in range(data.draw(st.integers(0, 12)) if field.is_repeated else 1):
                    item = holder.add() if field.is_repeated else holder
                    item.SetInParent()
                    fill(item, data, states, depth - 1)
        elif field.type == FieldDescriptor.TYPE_STRING:
            for _ in range(data.draw(st.integers(0, 3)) if field.is_repeated else 1):
                value = _text(data)
                holder.append(value) if field.is_repeated else setattr(message, field.name, value)
        elif field.is_repeated:
            for _ in range(data.draw(st.integers(0, 3))):
                holder.append(_scalar_value(field, data))
        else:
            setattr(message, field.name, _scalar_value(field, data))


@given(data=st.data())
@SETTINGS
def test_any_request_to_any_rpc_gets_ok_or_a_refusal_with_a_reason(
    limited_channel: grpc.Channel, states: dict[str, list[game_pb2.GameState]], data: st.DataObject
) -> None:
    method = data.draw(st.sampled_from(list(SERVICE.methods)))
    request = message_factory.GetMessageClass(method.input_type)()
    fill(request, data, states)
    call = limited_channel.unary_unary(
        f"/{SERVICE.full_name}/{method.name}",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
    )
    try:
        call(request, timeout=30)
    except grpc.RpcError as error:
        details = error_details(error)
        assert details.code in REFUSALS, (method.name, details.code, details.message)
        assert details.reason, (method.name, details.code, details.message)
        assert len(details.message.encode()) <= MESSAGE_BYTES
