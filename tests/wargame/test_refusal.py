"""One refusal type for both services, its reasons exactly the contract's ErrorReason."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2

from engine_service.handling import refusal_of
from engine_service.rules.errors import Reason as RuleReason
from engine_service.rules.errors import RuleError
from matchmaker.errors import ServiceError
from wargame.runtime.refusal import Reason, Refusal, internal, malformed, missing, unavailable
from wargame.v1 import errors_pb2

PREFIX = "ERROR_REASON_"


def _contract() -> dict[str, int]:
    return {
        name.removeprefix(PREFIX): number
        for name, number in errors_pb2.ErrorReason.items()
        if name != f"{PREFIX}UNSPECIFIED"
    }


def test_the_reasons_both_services_raise_are_exactly_the_contracts() -> None:
    assert {reason.value for reason in Reason} == set(_contract())
    assert all(reason.name == reason.value for reason in Reason)


def test_the_rules_reasons_are_contract_reasons_below_the_services() -> None:
    contract = _contract()
    assert {reason.value for reason in RuleReason} <= {reason.value for reason in Reason}
    for reason in RuleReason:
        assert contract[reason.value] < 100, reason
    services = {reason for reason in Reason if contract[reason] >= 100}
    assert not services & {reason.value for reason in RuleReason}


def test_the_services_share_the_one_refusal_type() -> None:
    assert ServiceError is Refusal  # the matchmaker's former name
    refused = refusal_of(RuleError(RuleReason.UNKNOWN_GAME, "no game 'go'", field="game"))
    assert isinstance(refused, Refusal)
    assert (refused.code, refused.reason, refused.fields) == (
        grpc.StatusCode.NOT_FOUND,
        Reason.UNKNOWN_GAME,
        (("game", "no game 'go'"),),
    )
    illegal = refusal_of(RuleError(RuleReason.PATH_BLOCKED, "blocked").at(2))
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
