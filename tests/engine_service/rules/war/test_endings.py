"""Sections 9 and 10: the Citadel held through the reply, and the other endings."""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.war.notation import read_text

from .helpers import RULES, act, options, position


def _ended(state: object) -> tuple[str | None, str] | None:
    outcome = RULES.outcome(state)  # type: ignore[arg-type]
    return None if outcome is None else (outcome.winner, outcome.reason.value)


def test_9_any_man_may_take_the_citadel() -> None:
    for letter, move in (("H", "He8-f10"), ("M", "Mf5-f10"), ("C", "Cd8-f10"), ("K", "Ke9-f10")):
        state = position(f"{letter}{move[1:3]} Ka1 ka10" if letter != "K" else "Ke9 ka10")
        after = act(state, move)
        assert _ended(after) is None  # North still has its reply
        held = act(after, "Ka10-a9")
        assert _ended(held) == ("south", "CITADEL_HELD"), letter


def test_9_entering_by_capturing_the_king_on_his_citadel() -> None:
    state = position("Mf5 kf10 ma9 Ka1")
    after = act(state, "Mf5xf10")
    assert _ended(act(after, "Ma9-a8")) == ("south", "CITADEL_HELD")


def test_9_recapture_cycles_restart_the_test() -> None:
    state = position("Mf5 mh10 Kj1 ka9")
    entered = act(state, "Mf5-f10")
    retaken = act(entered, "Mh10xf10")
    assert _ended(retaken) is None
    assert _ended(act(retaken, "Kj1-j2")) is None  # North's Mortar is on its own Citadel


def test_9_your_own_men_may_stand_on_your_citadel() -> None:
    state = position("Gf3 Ka1 ka10")
    assert "Gf3-f1" in {RULES.format_action(state, a) for a in RULES.legal_actions(state)}


def test_9_the_earlier_occupation_wins_when_both_citadels_are_occupied() -> None:
    # North's General sits on f1; South enters f10 instead of capturing it: North wins.
    state = position("gf1 Mf5 Ka3 ka10")
    after = act(state, "Mf5-f10")
    assert _ended(after) == ("north", "CITADEL_HELD")


def test_9_3_no_move_while_the_citadel_is_occupied_loses_to_the_occupier() -> None:
    # South's only man is a Troop blocked by the machine; North's Horse holds f1.
    state = position("hf1 Ta5 Fa6 ka10", opts=options(no_legal_move="draw"))
    assert _ended(state) == ("north", "CITADEL_HELD")
    assert RULES.legal_actions(state) == []


def test_10_no_legal_move_loses_by_default() -> None:
    state = position("Ta5 Fa6 ka10")
    assert RULES.legal_actions(state) == []
    assert _ended(state) == ("north", "NO_LEGAL_MOVE")
    assert RULES.to_act(state) == ()


def test_10_no_legal_move_is_a_draw_with_the_option() -> None:
    state = position("Ta5 Fa6 ka10", opts=options(no_legal_move="draw"))
    assert _ended(state) == (None, "NO_LEGAL_MOVE")


def test_10_all_men_captured_means_no_legal_move() -> None:
    state = position("Mf5 tg6 ka10", side="N")
    after = act(state, "g6xf5")
    assert _ended(after) == ("north", "NO_LEGAL_MOVE")


def test_10_a_flying_machine_in_reserve_is_a_legal_move() -> None:
    state = position("Ta5 Fa6 ka10", reserves="F:-")
    assert _ended(state) is None
    assert {RULES.format_action(state, a) for a in RULES.legal_actions(state)} >= {"F@e5"}


def test_10_threefold_repetition_is_a_draw() -> None:
    state = position("Ka1 ka10")
    for text in ("Ka1-a2", "Ka10-a9", "Ka2-a1", "Ka9-a10") * 2:
        assert _ended(state) is None
        state = act(state, text)
    assert _ended(state) == (None, "REPETITION")  # the start position, third time
    assert RULES.legal_actions(state) == []


def test_10_repetition_counts_from_the_last_irreversible_action() -> None:
    state = position("Ka1 ka10 Tb5")
    for text in ("Ka1-a2", "Ka10-a9", "Ka2-a1", "Ka9-a10", "b5-b6", "Ka10-a9"):
        state = act(state, text)
    assert len(state.history) == 2  # reset by the Troop move
    assert _ended(state) is None


def test_10_no_progress_limit() -> None:
    opts = options(no_progress_limit="2")
    state = position("Ka1 kj10 Tb5", opts=opts)
    for text in ("Ka1-a2", "Kj10-j9", "Ka2-a3"):
        state = act(state, text)
        assert _ended(state) is None
    state = act(state, "Kj9-j8")  # 2 moves by each side without progress
    assert _ended(state) == (None, "NO_PROGRESS")


def test_10_a_troop_move_resets_the_no_progress_count() -> None:
    opts = options(no_progress_limit="2")
    state = position("Ka1 kj10 Tb5", opts=opts)
    for text in ("Ka1-a2", "Kj10-j9", "b5-b6", "Kj9-j8", "Ka2-a3", "Kj8-j7"):
        state = act(state, text)
    assert state.quiet == 3 and _ended(state) is None


def test_a_finished_game_has_no_legal_actions_and_refuses_actions() -> None:
    state = position("Ta5 Fa6 ka10")
    with pytest.raises(RuleError) as error:
        RULES.apply(state, read_text("a5-a6").action())
    assert error.value.reason == "GAME_OVER"
    assert RULES.perft(state, 1) == 0


def test_game_over_event_names_the_winner() -> None:
    state = position("Tf9 ma10 Ka1")
    after = act(state, "f9-f10")
    events = RULES.apply(after, RULES.parse_action(after, "Ma10-a9"))[1]
    over = [e for e in events if e.kind is EventKind.GAME_OVER]
    assert len(over) == 1 and over[0].side == "south"
    assert "Citadel" in over[0].text


def test_the_draws_by_no_legal_move_and_no_progress_say_why_in_words() -> None:
    stuck = RULES.outcome(position("Ta5 Fa6 ka10", opts=options(no_legal_move="draw")))
    assert stuck is not None
    assert stuck.message == "south has no legal move: the game is drawn"
    quiet = position("Ka1 ka10", extra="quiet=19", opts=options(no_progress_limit="10"))
    drawn = RULES.outcome(act(quiet, "Ka1-a2"))
    assert drawn is not None
    assert drawn.message == (
        "drawn: 10 moves by each side without a capture, Troop move or Flying-Machine placement"
    )
