"""Section 13 of the specification: the required test scenarios, one test each.

The positions are those of book.py, which the conformance vectors replay as well.
"""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.war.notation import read_text

from .book import start
from .helpers import RULES, act, notations


def _moves_of(state_notations: set[str], origin: str) -> set[str]:
    return {n for n in state_notations if n.lstrip("KGMCH").startswith(origin)}


def test_13_1_compulsion() -> None:
    state = start("13.1-compulsion")
    assert notations(state) == {"c5xd6", "c5:e7", "Md1xd6"}
    for illegal in ("c5-c6", "Md1-d2", "F@e5", "Md1-a1"):
        with pytest.raises(RuleError) as error:
            RULES.apply(state, _literal(illegal))
        assert error.value.reason == "CAPTURE_COMPULSORY", illegal
        assert "d6" in error.value.message


def _literal(text: str) -> tuple[int, ...]:
    """The action a text spells, without matching it against the legal actions."""
    return read_text(text).action()


def test_13_2_a_chain_must_continue() -> None:
    state = start("13.2-a-chain-must-continue")
    assert notations(state) == {"a3:c5:e7", "a3xb4"}
    with pytest.raises(RuleError) as error:
        RULES.apply(state, _literal("a3:c5"))
    assert error.value.reason == "JUMP_CHAIN_INCOMPLETE"
    assert "must continue its jump chain" in error.value.message
    assert error.value.rule == "7.5" and error.value.alternatives == ("a3:c5:e7",)
    after = act(state, "a3:c5:e7")
    assert RULES.setup_text(after).split()[0] == "10/10/10/4T5/10/10/10/10/10/10"


def test_13_3_no_maximum_rule() -> None:
    state = start("13.3-no-maximum-rule")
    legal = notations(state)
    assert {"e3:c5", "e3:g5:i7"} <= legal
    assert {n for n in legal if ":" in n} == {"e3:c5", "e3:g5:i7"}


def test_13_4_no_backward_jump() -> None:
    state = start("13.4-no-backward-jump")
    legal = notations(state)
    assert not any(":" in n for n in legal)
    assert legal == {"d5-d6"}  # no compulsion: the ordinary step is legal


def test_13_5_jumps_only_over_enemy_troops() -> None:
    state = start("13.5-jumps-only-over-enemy-troops")
    legal = notations(state)
    assert not any(":" in n for n in legal)
    assert legal == {"d5xe6", "d5-d6"}  # the capture is legal and not compulsory


def test_13_6a_final_rank_troop_is_immune() -> None:
    state = start("13.6a-final-rank-immunity")
    legal = notations(state)
    assert "Ma1-b1" in legal
    assert "Ma1xc1" not in legal
    with pytest.raises(RuleError) as error:
        RULES.apply(state, _literal("Ma1xc1"))
    assert error.value.reason == "TARGET_NOT_CAPTURABLE"


def test_13_6b_troop_on_south_citadel_is_capturable() -> None:
    state = start("13.6b-troop-on-the-south-citadel")
    after = act(state, "g2xf1")
    assert "Ma1xf1" in notations(after)
    # If South does not capture it, North wins at once.
    lost = act(after, "Ma1-a2")
    outcome = RULES.outcome(lost)
    assert outcome is not None and outcome.winner == "north"
    assert outcome.reason == "CITADEL_HELD"
    assert RULES.legal_actions(lost) == []
    saved = act(after, "Ma1xf1")
    assert RULES.outcome(saved) is None


def test_13_7_citadel_win() -> None:
    state = start("13.7-citadel-win")
    after = act(state, "Gf5xf1")
    assert RULES.outcome(after) is None
    end = act(after, "a3-a4")
    outcome = RULES.outcome(end)
    assert outcome is not None
    assert (outcome.winner, outcome.reason) == ("north", "CITADEL_HELD")


def test_13_8a_no_placement_on_a_citadel() -> None:
    state = start("13.8a-no-placement-on-a-citadel-at-the-start")
    after_kings_leave = start("13.8a-no-placement-on-an-empty-citadel")
    for placing in (state, after_kings_leave):
        legal = notations(placing)
        assert "F@f1" not in legal and "F@f10" not in legal
        for citadel in ("f1", "f10"):
            with pytest.raises(RuleError) as error:
                RULES.apply(placing, _literal(f"F@{citadel}"))
            assert error.value.reason == "PLACEMENT_FORBIDDEN"
    assert "F@e5" in notations(after_kings_leave)


def test_13_8b_flying_machine_blocks() -> None:
    south = start("13.8b-flying-machine-blocks-south-to-move")
    north = start("13.8b-flying-machine-blocks-north-to-move")
    general = _moves_of(notations(north), "e8")
    assert {"Ge8-e7", "Ge8-e6"} <= general
    assert not {"Ge8-e5", "Ge8-e4", "Ge8-e3", "Ge8-e2", "Ge8xe1"} & general
    legal = notations(south)
    mortar = _moves_of(legal, "e1")
    assert {"Me1-e2", "Me1-e3", "Me1-e4"} <= mortar
    assert not {"Me1-e5", "Me1-e6", "Me1-e7", "Me1xe8"} & mortar
    horse = _moves_of(legal, "d3")
    assert {"Hd3-f4", "Hd3-c5"} <= horse
    assert not any(n.endswith("e5") for n in horse)
    # Nothing can capture the machine.
    assert not any(n.endswith("xe5") for n in legal | notations(north))


def test_13_9_no_en_passant() -> None:
    state = start("13.9-no-en-passant")
    after = act(state, "d9-d7")
    legal = notations(after)
    assert "e7xd8" not in legal
    assert not any(":" in n for n in legal)
    with pytest.raises(RuleError):
        RULES.apply(after, _literal("e7xd8"))
    # With en_passant = displacement_only the capture in passing becomes legal.
    state = start("13.9-en-passant-displacement-only")
    after = act(state, "d9-d7")
    assert "e7xd8" in notations(after)
    taken = act(after, "e7xd8")
    assert RULES.setup_text(taken).split()[0] == "10/10/3T6/10/10/10/10/10/10/10"


def test_13_10a_final_rank_troop_has_no_moves() -> None:
    state = start("13.10a-final-rank-troop-is-immune")
    after = act(state, "c9-c10")
    legal = notations(after)
    assert "Ma10xc10" not in legal
    assert "Ma10-b10" in legal
    back = start("13.10a-final-rank-troop-has-no-moves")  # the Troop is stuck
    assert not _moves_of(notations(back), "c10")
    with pytest.raises(RuleError) as error:
        RULES.apply(back, _literal("c10-c9"))
    assert error.value.reason == "PIECE_IMMOBILE"


def test_13_10b_troop_on_north_citadel_must_be_captured() -> None:
    state = start("13.10b-troop-on-the-north-citadel")
    after = act(state, "f9-f10")
    assert "Ma10xf10" in notations(after)
    lost = act(after, "Ma10-a9")
    outcome = RULES.outcome(lost)
    assert outcome is not None and (outcome.winner, outcome.reason) == ("south", "CITADEL_HELD")
    saved = act(after, "Ma10xf10")
    assert RULES.outcome(saved) is None
