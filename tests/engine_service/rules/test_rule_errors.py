"""A `RuleError` carries what the service sends: a reason, the message as the exception's own
text, and the optional details (rule, alternatives, accepted forms, index, field)."""

from __future__ import annotations

from engine_service.rules.errors import Reason, RuleError


def test_a_refusal_without_details_carries_empty_details() -> None:
    error = RuleError(Reason.PATH_BLOCKED, "a Troop cannot pass a piece")
    assert error.reason is Reason.PATH_BLOCKED
    assert error.message == "a Troop cannot pass a piece"
    assert str(error) == "a Troop cannot pass a piece"
    assert error.args == ("a Troop cannot pass a piece",)
    assert error.index is None
    assert error.field is None
    assert error.rule == ""
    assert error.alternatives == ()
    assert error.accepted == ""


def test_a_refusal_keeps_every_detail_it_is_given() -> None:
    error = RuleError(
        Reason.NOTATION_INVALID,
        "no such action",
        index=2,
        field="options.compulsion",
        rule="7.3, 7.7",
        alternatives=("c3-c4", "c3xd4"),
        accepted="from-to, e.g. c3-c4",
    )
    assert (error.reason, error.message, str(error)) == (
        Reason.NOTATION_INVALID,
        "no such action",
        "no such action",
    )
    assert error.index == 2
    assert error.field == "options.compulsion"
    assert error.rule == "7.3, 7.7"
    assert error.alternatives == ("c3-c4", "c3xd4")
    assert error.accepted == "from-to, e.g. c3-c4"


def test_placing_a_refusal_in_a_batch_keeps_an_inner_index() -> None:
    outer = RuleError(Reason.ILLEGAL_ACTION, "not legal").at(3)
    assert outer.index == 3
    inner = RuleError(Reason.ILLEGAL_ACTION, "not legal", index=1)
    assert inner.at(3) is inner
    assert inner.index == 1


def test_a_refusal_shows_its_reason_code_and_message() -> None:
    error = RuleError(Reason.GAME_OVER, "the game is over")
    assert repr(error) == "RuleError(GAME_OVER, 'the game is over')"


def test_every_reason_is_its_own_name() -> None:
    assert all(reason.value == reason.name for reason in Reason)
