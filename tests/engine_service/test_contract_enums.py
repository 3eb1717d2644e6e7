"""The core's reason, outcome and event names are exactly the contract's enum values."""

from __future__ import annotations

from engine_service.rules.base import CellShape, EventKind, OutcomeReason
from engine_service.rules.errors import Reason
from engine_service.rules.options import OptionKind
from wargame.v1 import board_pb2, errors_pb2, game_pb2


def _names(enum: object, prefix: str) -> set[str]:
    return {name.removeprefix(prefix) for name in enum.DESCRIPTOR.values_by_name} - {"UNSPECIFIED"}  # type: ignore[attr-defined]


def test_every_rule_reason_is_an_error_reason_of_the_contract() -> None:
    contract = _names(errors_pb2.ErrorReason, "ERROR_REASON_")
    assert {reason.value for reason in Reason} <= contract


def test_rule_reasons_are_numbered_below_the_service_reasons() -> None:
    for reason in Reason:
        assert errors_pb2.ErrorReason.Value(f"ERROR_REASON_{reason.value}") < 100, reason


def test_outcome_reasons_match() -> None:
    assert {r.value for r in OutcomeReason} == _names(game_pb2.OutcomeReason, "OUTCOME_REASON_")


def test_event_kinds_match() -> None:
    assert {k.value for k in EventKind} == _names(game_pb2.EventKind, "EVENT_KIND_")


def test_option_kinds_and_cell_shapes_match() -> None:
    assert {k.name for k in OptionKind} == _names(board_pb2.OptionKind, "OPTION_KIND_")
    assert {s.value for s in CellShape} == _names(board_pb2.CellShape, "CELL_SHAPE_")
