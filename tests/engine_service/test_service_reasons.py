"""Every ErrorReason the engine can give, produced on purpose through a real server.

Each rule case builds a position with the game's own set-up text, plays a prelude, then
sends one action: ApplyActions must refuse it with INVALID_ARGUMENT and exactly this
reason (and the index of the action in the batch), and ValidateAction must give the same
verdict as data. Service reasons are provoked through the RPC that owns them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from google.protobuf import duration_pb2

from engine_service.rules.errors import Reason
from tests.conftest import engine_in_process
from tests.engine_service.conftest import applying, refused
from wargame.runtime.status import ErrorDetails
from wargame.v1 import engine_pb2, engine_pb2_grpc, errors_pb2, game_pb2

pytestmark = pytest.mark.integration

NAPOLEONIC_TEST_OPTIONS = {"auto_skip_defence": "false"}
WAR_EMPTY = "10/10/10/10/10/10/10/10/10/10"


@dataclass(frozen=True)
class Case:
    """A position, a prelude and one refused action."""

    reason: str
    game: str
    setup: str
    action: str  # notation, sent as Action.notation by `side`
    side: str
    prelude: tuple[tuple[str, str], ...] = ()
    options: dict[str, str] = field(default_factory=dict)


def nap(
    reason: str,
    units: str,
    action: str,
    *,
    side: str = "red",
    prelude: tuple[tuple[str, str], ...] = (),
    **options: str,
) -> Case:
    """A Napoleonic case on the 8x8 board, Guards on h1 and a8 (as in the spec's tests).

    `units` is "red: ...; black: ..." items plus any terrain sections.
    """
    red, _, rest = units.partition("; black:")
    black, _, terrain = rest.partition(";")
    setup = f"board 8x8; red: h1=G#R_G {red.removeprefix('red:').strip()}; "
    setup += f"black: a8=G#B_G {black.strip()}" + (f";{terrain}" if terrain else "")
    return Case(reason, "napoleonic", setup, action, side, prelude,
                {**NAPOLEONIC_TEST_OPTIONS, **options})  # fmt: skip


RED_ENDS = (("red", "end"),)


def black_defends(reason: str, units: str, action: str) -> Case:
    """A Napoleonic case where black, defending d5 against red's d4 (the declaration
    ended), is refused `action`."""
    return nap(reason, units, action, side="black", prelude=(("red", "attack d4>d5"), *RED_ENDS))


RULE_CASES = [
    # -- shared by the games -----------------------------------------------------------------
    Case("NOT_YOUR_TURN", "war", "10/10/10/10/10/10/10/10/4T5/5K4 S :", "e2-e3", "north"),
    Case("NO_PIECE", "war", "10/10/10/10/10/10/10/10/4T5/5K4 S :", "d2-d3", "south"),
    Case("DESTINATION_OCCUPIED", "war", "10/10/10/10/10/10/10/10/4T5/4K5 S :", "Ke1-e2", "south"),
    Case("PATH_BLOCKED", "war", "10/10/10/10/10/10/10/3T6/10/3M6 S :", "Md1-d5", "south"),
    Case("ILLEGAL_MOVE_GEOMETRY", "war", "10/10/10/10/10/10/10/10/10/3M6 S :", "Md1-e2", "south"),
    Case("TARGET_NOT_CAPTURABLE", "war", "10/10/10/10/10/10/10/10/10/M1t7 S :", "Ma1xc1", "south"),
    Case("PASSING_NOT_ALLOWED", "war", "k9/10/10/10/10/10/10/10/10/K9 S :", "pass", "south"),
    Case("UNKNOWN_CELL", "war", "10/10/10/10/10/10/10/10/10/3M6 S :", "Md1-d11", "south"),
    Case("NOTATION_INVALID", "war", "10/10/10/10/10/10/10/10/10/3M6 S :", "castle long", "south"),
    Case(
        "GAME_OVER",
        "battle",
        "attacker to move; attacker: W129 C34; defender: T19 I7",
        "34x19",
        "attacker",
        prelude=(("attacker", "resign"),),
    ),
    Case("DRAW_NOT_OFFERED", "war", "k9/10/10/10/10/10/10/10/10/K9 S :", "accept draw", "north"),
    Case(
        "ILLEGAL_ACTION",
        "war",
        "k9/10/10/10/10/10/10/10/10/K9 S :",
        "offer draw",
        "south",
        prelude=(("south", "offer draw"),),
    ),
    Case(
        "DRAW_BY_AGREEMENT_DISABLED",
        "war",
        "k9/10/10/10/10/10/10/10/10/K9 S :",
        "offer draw",
        "south",
        options={"draw_by_agreement": "false"},
    ),
    # -- The Game of War ---------------------------------------------------------------------
    Case("CAPTURE_COMPULSORY", "war", "10/10/10/10/3t6/2T7/10/10/10/3M6 S F:", "F@a5", "south"),
    Case("JUMP_CHAIN_INCOMPLETE", "war", "10/10/10/10/3t6/10/1t8/T9/10/10 S :", "a3:c5", "south"),
    Case("PIECE_IMMOBILE", "war", "2T6k/10/10/10/10/10/10/10/10/K9 S :", "c10-c9", "south"),
    Case("PLACEMENT_FORBIDDEN", "war", "10/10/10/10/10/10/10/10/10/10 S F:", "F@f1", "south"),
    Case("NO_FLYING_MACHINE_LEFT", "war", "k9/10/10/10/10/10/10/10/10/K9 S :f", "F@e5", "south"),
    # -- The Game of Battle -----------------------------------------------------------------
    Case(
        "EXPOSED_TO_ARTILLERY",
        "battle",
        "defender to move; attacker: W129 A51 I125; defender: T19 I28",
        "28-43",
        "defender",
    ),
    Case(
        "UNCOVERS_FIGURE",
        "battle",
        "defender to move; attacker: W129 A51 I125; defender: T19 A44 I37",
        "44-36",
        "defender",
    ),
    Case(
        "FORCED_REPLY",
        "battle",
        "defender to move; attacker: W129 A51 I125; defender: T19 I44 I7",
        "7-8",
        "defender",
    ),
    Case(
        "CITADEL_DUTY",
        "battle",
        "defender to move; attacker: W129 A33 I125; defender: T19 C38 I7",
        "38-37",
        "defender",
    ),
    Case(
        "WAGON_UNDER_COVER",
        "battle",
        "defender to move; attacker: W127 A110 I119 A106 I101 C102; "
        "defender: T19 I129 I94 C113 I108 A95 A92",
        "129x127",
        "defender",
    ),
    Case(
        "CAPTURE_NOT_ALLOWED",
        "battle",
        "defender to move; attacker: W129 I40; defender: T19 A33 I7",
        "33x40",
        "defender",
    ),
    Case(
        "RIVER_CROSSING",
        "battle",
        "defender to move; attacker: W129 I125; defender: T19 L39",
        "39-54",
        "defender",
    ),
    # -- Napoleonic Chess --------------------------------------------------------------------
    nap(
        "WRONG_PHASE",
        "red: d4=A#R_A a2=I#R_I; black: d5=I#B_I",
        "move a2-a3",
        prelude=(("red", "attack d4>d5"), *RED_ENDS),
    ),
    nap("UNKNOWN_UNIT", "red: d4=I#R_I; black: d5=I#B_I", "attack d4>e6"),
    nap("NOT_OWN_UNIT", "red: d4=I#R_I; black: d5=I#B_I", "attack d5>d4"),
    nap("DESTINATION_OFF_BOARD", "red: d8=I#R_I; black:", "move d8-d9"),
    nap(
        "UNIT_ALREADY_MOVED",
        "red: d2=I#R_I; black:",
        "move d3-d4",
        prelude=(("red", "move d2-d3"),),
    ),
    nap(
        "HILL_ON_AND_OFF",
        "red: d3=I#R_I e5=A#R_A; black: d5=I#B_I; hills: d4",
        "advance d4>d5",
        prelude=(
            ("red", "move d3-d4"),
            ("red", "attack d4>d5"),
            ("red", "attack e5>d5"),
            *RED_ENDS,
            ("black", "end"),
        ),
    ),
    nap(
        "ATTACKER_ALREADY_ASSIGNED",
        "red: d4=I#R_I; black: d5=I#B_I e4=I#B_J",
        "attack d4>e4",
        prelude=(("red", "attack d4>d5"),),
    ),
    nap("TARGET_NOT_ENEMY", "red: d4=I#R_I d5=I#R_J; black:", "attack d4>d5"),
    nap("ATTACK_NOT_ADJACENT", "red: d3=A#R_A; black: d5=I#B_I", "attack d3>d5"),
    nap("ATTACK_DIRECTION_NOT_ALLOWED", "red: c4=I#R_I; black: d5=I#B_I", "attack c4>d5"),
    nap(
        "SUPPORTER_ALREADY_ASSIGNED",
        "red: d4=A#R_A f4=A#R_B; black: d5=I#B_I f5=I#B_J e6=H#B_H",
        "support e6>f5",
        side="black",
        prelude=(
            ("red", "attack d4>d5"),
            ("red", "attack f4>f5"),
            *RED_ENDS,
            ("black", "support e6>d5"),
        ),
    ),
    nap(
        "SUPPORTER_UNDER_ATTACK",
        "red: d4=A#R_A c6=I#R_I; black: d5=I#B_I d6=I#B_J",
        "support d6>d5",
        side="black",
        prelude=(("red", "attack d4>d5"), ("red", "attack c6>d6"), *RED_ENDS),
    ),
    black_defends(
        "SUPPORTED_NOT_UNDER_ATTACK",
        "red: d4=A#R_A; black: d5=I#B_I e6=I#B_J f6=I#B_K",
        "support f6>e6",
    ),
    black_defends(
        "SUPPORT_NOT_FRIENDLY", "red: d4=A#R_A e5=I#R_I; black: d5=I#B_I", "support e5>d5"
    ),
    black_defends("SUPPORT_SELF", "red: d4=A#R_A; black: d5=I#B_I", "support d5>d5"),
    black_defends(
        "SUPPORT_NOT_ADJACENT", "red: d4=A#R_A; black: d5=I#B_I d7=I#B_J", "support d7>d5"
    ),
    black_defends(
        "SUPPORT_DIRECTION_NOT_ALLOWED", "red: d4=A#R_A; black: d5=I#B_I d6=C#B_C", "support d6>d5"
    ),
    nap(
        "SUPPORT_ACROSS_OBSTACLE",
        "red: d4=A#R_A; black: d5=I#B_I d6=I#B_J; obstacles: d5|d6",
        "support d6>d5",
        side="black",
        prelude=(("red", "attack d4>d5"), *RED_ENDS),
        obstacles_block_support="true",
    ),
    nap(
        "ADVANCE_SQUARE_NOT_VACATED",
        "red: d4=A#R_A; black: d5=I#B_I",
        "advance d4>d6",
        prelude=(("red", "attack d4>d5"), *RED_ENDS, ("black", "end")),
    ),
    nap(
        "ADVANCE_NOT_ATTACKER",
        "red: d4=A#R_A c5=I#R_I; black: d5=I#B_I",
        "advance c5>d5",
        prelude=(("red", "attack d4>d5"), *RED_ENDS, ("black", "end")),
    ),
    nap(
        "ADVANCE_DUPLICATE_SQUARE",
        "red: d4=A#R_A c5=I#R_I; black: d5=I#B_I",
        "advance c5>d5",
        prelude=(
            ("red", "attack d4>d5"),
            ("red", "attack c5>d5"),
            *RED_ENDS,
            ("black", "end"),
            ("red", "advance d4>d5"),
        ),
    ),
    nap(
        "ADVANCE_AFTER_MOVE_FORBIDDEN",
        "red: d3=A#R_A; black: d5=I#B_I",
        "advance d4>d5",
        prelude=(("red", "move d3-d4"), ("red", "attack d4>d5"), *RED_ENDS, ("black", "end")),
        advance_requires_unmoved="true",
    ),
    nap(
        "ADVANCE_TERRAIN_FORBIDDEN",
        "red: d4=A#R_A c5=I#R_I e5=I#R_J; black: d5=I#B_I; redoubts: d5=black",
        "advance d4>d5",
        prelude=(
            ("red", "attack d4>d5"),
            ("red", "attack c5>d5"),
            ("red", "attack e5>d5"),
            *RED_ENDS,
            ("black", "end"),
        ),
    ),
    nap("REDOUBT_NOT_ALLOWED", "red: d4=I#R_I; black: d5=I#B_I", "redoubt e4"),
]


def _start(stub: engine_pb2_grpc.RulesEngineStub, case: Case) -> game_pb2.GameState:
    state = stub.NewGame(
        engine_pb2.NewGameRequest(game=case.game, options=case.options, setup=case.setup)
    ).state
    for side, text in case.prelude:
        state = stub.ApplyActions(applying(state, side, notation=text)).state
    return state


@pytest.mark.parametrize("case", RULE_CASES, ids=[case.reason for case in RULE_CASES])
def test_rule_reason(stub: engine_pb2_grpc.RulesEngineStub, case: Case) -> None:
    state = _start(stub, case)
    action = game_pb2.Action(side=case.side, notation=case.action)
    error = refused(
        stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=[action])
    )
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, case.reason), (
        error.message
    )
    assert error.metadata.get("index") == "0" and error.message
    verdict = stub.ValidateAction(engine_pb2.ValidateActionRequest(state=state, action=action))
    assert not verdict.legal and verdict.reason == errors_pb2.ErrorReason.Value(
        f"ERROR_REASON_{case.reason}"
    )


def test_notation_ambiguous_when_several_sides_may_act(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    state = stub.NewGame(
        engine_pb2.NewGameRequest(game="napoleonic", options={"deployment": "attack_at_dawn"})
    ).state
    assert len(state.to_act) == 2
    error = refused(stub.ParseAction, engine_pb2.ParseActionRequest(state=state, text="end"))
    assert error.reason == "NOTATION_AMBIGUOUS"


def test_deployment_reasons(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    state = stub.NewGame(
        engine_pb2.NewGameRequest(
            game="napoleonic",
            options={"deployment": "attack_at_dawn", "attack_at_dawn_mode": "sealed"},
        )
    ).state
    array = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
    wrong = refused(
        stub.ApplyActions,
        applying(state, "red", notation="seal a2=A b2=C"),
    )
    assert wrong.reason == "DEPLOYMENT_INVALID"
    sealed = stub.ApplyActions(applying(state, "red", notation=f"seal {array}")).state
    twice = refused(
        stub.ApplyActions,
        applying(sealed, "red", notation=f"seal {array}"),
    )
    assert twice.reason == "ALREADY_DEPLOYED"


@pytest.fixture
def keyless_stub() -> Iterator[engine_pb2_grpc.RulesEngineStub]:
    """An engine started without a seal key."""
    with engine_in_process(None) as address, grpc.insecure_channel(address) as channel:
        yield engine_pb2_grpc.RulesEngineStub(channel)


def test_sealed_mode_needs_the_engine_key(keyless_stub: engine_pb2_grpc.RulesEngineStub) -> None:
    options = {"deployment": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    error = refused(
        keyless_stub.NewGame, engine_pb2.NewGameRequest(game="napoleonic", options=options)
    )
    assert error.reason == "SEAL_KEY_UNAVAILABLE"


def test_option_and_setup_reasons(stub: engine_pb2_grpc.RulesEngineStub) -> None:
    cases = [
        (engine_pb2.NewGameRequest(game="chess"), grpc.StatusCode.NOT_FOUND, "UNKNOWN_GAME"),
        (
            engine_pb2.NewGameRequest(game="war", options={"x": "1"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "UNKNOWN_OPTION",
        ),
        (
            engine_pb2.NewGameRequest(game="battle", options={"first_player": "nobody"}),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_OPTION_VALUE",
        ),
        (
            engine_pb2.NewGameRequest(game="napoleonic", preset="blitz"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "UNKNOWN_PRESET",
        ),
        (
            engine_pb2.NewGameRequest(game="battle", setup="attacker: Z999"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_SETUP",
        ),
        (engine_pb2.NewGameRequest(), grpc.StatusCode.INVALID_ARGUMENT, "MISSING_FIELD"),
    ]
    for request, code, reason in cases:
        error = refused(stub.NewGame, request)
        assert (error.code, error.reason) == (code, reason), error.message


def test_state_record_and_request_reasons(
    stub: engine_pb2_grpc.RulesEngineStub, engine_channel: grpc.Channel
) -> None:
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state
    broken = game_pb2.GameState()
    broken.CopyFrom(state)
    broken.ClearField("position")  # the structured form, as clients before positions send it
    broken.pieces[0].cell = broken.pieces[1].cell
    assert (
        refused(stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=broken)).reason
        == "INVALID_STATE"
    )
    bad_text = game_pb2.GameState(game="war", position=state.position.replace("S FF", "X FF"))
    assert (
        refused(stub.ListLegalActions, engine_pb2.ListLegalActionsRequest(state=bad_text)).reason
        == "INVALID_STATE"
    )
    assert (
        refused(stub.ReplayRecord, engine_pb2.ReplayRecordRequest(record="nonsense")).reason
        == "INVALID_RECORD"
    )
    long = refused(stub.ReplayRecord, engine_pb2.ReplayRecordRequest(record="#" * (2 << 20) + "\n"))
    assert long.reason == "RECORD_TOO_LONG"
    many = [game_pb2.Action(side="south", notation="e3-e4")] * 600
    too_many = refused(stub.ApplyActions, engine_pb2.ApplyActionsRequest(state=state, actions=many))
    assert (too_many.reason, [name for name, _why in too_many.fields]) == (
        "TOO_MANY_ACTIONS",
        ["actions"],
    )
    slow = engine_pb2.SuggestActionRequest(
        state=state, time_budget=duration_pb2.Duration(seconds=120)
    )
    assert refused(stub.SuggestAction, slow).reason == "DEADLINE_TOO_LONG"
    raw = engine_channel.unary_unary("/wargame.v1.RulesEngine/ListLegalActions")
    with pytest.raises(grpc.RpcError) as failure:
        raw(b"\x0a\xff\xff\xff\xff\x0f", timeout=10)
    from wargame.runtime.status import error_details

    assert error_details(failure.value).reason == "MALFORMED_REQUEST"


def test_every_rule_reason_is_covered_here() -> None:
    """A new reason in the rules needs a case in this file."""
    covered = {case.reason for case in RULE_CASES} | {
        "NOTATION_AMBIGUOUS", "DEPLOYMENT_INVALID", "ALREADY_DEPLOYED", "SEAL_KEY_UNAVAILABLE",
        "UNKNOWN_GAME", "UNKNOWN_OPTION", "INVALID_OPTION_VALUE", "UNKNOWN_PRESET", "INVALID_SETUP",
        "INVALID_STATE", "INVALID_RECORD",
    }  # fmt: skip
    rules = {  # the rules' reasons: the contract's below 100 (wargame/reasons.py)
        reason.value
        for reason in Reason
        if errors_pb2.ErrorReason.Value(f"ERROR_REASON_{reason.value}") < 100
    }
    assert rules == covered


def test_a_searchs_time_budget_and_level_are_refused_naming_the_field(
    stub: engine_pb2_grpc.RulesEngineStub,
) -> None:
    """A time budget that is no duration (the Duration's own rules: nanos within a second,
    of the seconds' sign), not positive (zero, or a valid negative duration), or beyond the
    limit, and a level beyond the levels, each name their field and say what is wrong;
    level 0 is the default."""
    state = stub.NewGame(engine_pb2.NewGameRequest(game="war")).state

    def suggest(request: engine_pb2.SuggestActionRequest) -> ErrorDetails:
        request.state.CopyFrom(state)
        return refused(stub.SuggestAction, request)

    invalid = (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
        "time_budget is no valid duration",
    )
    not_positive = (
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_REQUEST",
        "time_budget must be positive",
    )
    for budget, expected in [
        (duration_pb2.Duration(seconds=1, nanos=-1), invalid),
        (duration_pb2.Duration(seconds=-1, nanos=1), invalid),
        (duration_pb2.Duration(nanos=1_000_000_000), invalid),
        (duration_pb2.Duration(nanos=-1_000_000_000), invalid),
        (duration_pb2.Duration(), not_positive),
        (duration_pb2.Duration(nanos=-1), not_positive),  # -1 ns: seconds 0, nanos negative
        (duration_pb2.Duration(seconds=-1), not_positive),
    ]:
        error = suggest(engine_pb2.SuggestActionRequest(time_budget=budget))
        assert (error.code, error.reason, error.message) == expected, budget
        assert [name for name, _why in error.fields] == ["time_budget"], error
    error = suggest(engine_pb2.SuggestActionRequest(time_budget=duration_pb2.Duration(seconds=120)))
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "DEADLINE_TOO_LONG")
    assert [name for name, _why in error.fields] == ["time_budget"], error
    assert error.message.startswith("time_budget 120 s is beyond the limit of ")
    error = suggest(engine_pb2.SuggestActionRequest(level=9))
    assert (error.reason, [name for name, _why in error.fields]) == ("MALFORMED_REQUEST", ["level"])
    assert "level 9 is no playing strength" in error.message
    quick = duration_pb2.Duration(nanos=50_000_000)
    assert stub.SuggestAction(
        engine_pb2.SuggestActionRequest(state=state, level=0, time_budget=quick)
    ).HasField("action")
