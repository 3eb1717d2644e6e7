"""The core's outcome, event, option and cell names are exactly the contract's enum values.

(The rules' refusal reasons are checked with both services' in tests/wargame/test_refusal.py.)
"""

from __future__ import annotations

from engine_service.rules.base import CellShape, EventKind, OutcomeReason
from engine_service.rules.options import OptionKind
from wargame.v1 import board_pb2, game_pb2


def _names(enum: object, prefix: str) -> set[str]:
    return {name.removeprefix(prefix) for name in enum.DESCRIPTOR.values_by_name} - {"UNSPECIFIED"}  # type: ignore[attr-defined]


def test_outcome_reasons_match() -> None:
    assert {r.value for r in OutcomeReason} == _names(game_pb2.OutcomeReason, "OUTCOME_REASON_")


def test_event_kinds_match() -> None:
    assert {k.value for k in EventKind} == _names(game_pb2.EventKind, "EVENT_KIND_")


def test_option_kinds_and_cell_shapes_match() -> None:
    assert {k.name for k in OptionKind} == _names(board_pb2.OptionKind, "OPTION_KIND_")
    assert {s.value for s in CellShape} == _names(board_pb2.CellShape, "CELL_SHAPE_")
