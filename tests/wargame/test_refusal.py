"""One refusal type for both services, its reasons exactly the contract's ErrorReason."""

from __future__ import annotations

import ast
from pathlib import Path

import grpc
from google.rpc import error_details_pb2, status_pb2

from engine_service.handling import refusal_of
from engine_service.rules import errors as rules_errors
from engine_service.rules.errors import RuleError
from wargame.runtime.refusal import Reason, Refusal, internal, malformed, missing, unavailable
from wargame.v1 import errors_pb2

PREFIX = "ERROR_REASON_"
RULES = Path(rules_errors.__file__).resolve().parent


def _contract() -> dict[str, int]:
    return {
        name.removeprefix(PREFIX): number
        for name, number in errors_pb2.ErrorReason.items()
        if name != f"{PREFIX}UNSPECIFIED"
    }


def test_the_reasons_both_services_raise_are_exactly_the_contracts() -> None:
    assert {reason.value for reason in Reason} == set(_contract())
    assert all(reason.name == reason.value for reason in Reason)


def _reasons_named_in(folder: Path) -> dict[str, str]:
    """Every `Reason.X` the modules of `folder` name, with the first file naming it."""
    named: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Reason"
            ):
                named.setdefault(node.attr, path.relative_to(RULES.parent).as_posix())
    return named


def test_the_rules_raise_only_the_contracts_rules_reasons_below_the_services() -> None:
    # One list of reasons (wargame/reasons.py); the rules name only those below 100.
    assert rules_errors.Reason is Reason
    contract = _contract()
    named = _reasons_named_in(RULES)
    assert {"UNKNOWN_GAME", "JUMP_CHAIN_INCOMPLETE", "SUPPORT_SELF"} <= set(named)
    services = {name: where for name, where in named.items() if contract[name] >= 100}
    assert not services, f"the rules name services' reasons: {services}"


def test_the_services_share_the_one_refusal_type() -> None:
    refused = refusal_of(RuleError(Reason.UNKNOWN_GAME, "no game 'go'", field="game"))
    assert isinstance(refused, Refusal)
    assert (refused.code, refused.reason, refused.fields) == (
        grpc.StatusCode.NOT_FOUND,
        Reason.UNKNOWN_GAME,
        (("game", "no game 'go'"),),
    )
    illegal = refusal_of(RuleError(Reason.PATH_BLOCKED, "blocked").at(2))
    assert (illegal.code, illegal.metadata) == (grpc.StatusCode.INVALID_ARGUMENT, {"index": "2"})


def _details(refusal: Refusal) -> status_pb2.Status:
    status = refusal.status()
    assert status.code == refusal.code and status.details == refusal.message
    return status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])


def test_a_refusal_travels_as_a_rich_status() -> None:
    proto = _details(unavailable(Reason.ENGINE_UNAVAILABLE, "the engine is away", 0.5))
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    proto.details[0].Unpack(info)
    proto.details[1].Unpack(retry)
    assert (info.reason, info.domain) == ("ENGINE_UNAVAILABLE", "wargame.v1")
    assert info.metadata["retry_after_ms"] == "500" and retry.retry_delay.ToMilliseconds() == 500
    bad = error_details_pb2.BadRequest()
    _details(malformed("side", "no side 'east'")).details[1].Unpack(bad)
    assert [(v.field, v.description) for v in bad.field_violations] == [("side", "no side 'east'")]
    assert missing("game").message == "game is required"
    assert "request id r-1" in internal("r-1").message
