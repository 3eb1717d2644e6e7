"""Section 8: Flying Machines - one placement each, whole turn, never on a Citadel, a block."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.war.notation import read_text

from .helpers import RULES, act, notations, options, position


def test_8_2_one_placement_action_per_empty_non_citadel_square() -> None:
    state = position("Ka1 ka10 Tb2", reserves="FF:ff")
    placements = {n for n in notations(state) if n.startswith("F@")}
    assert len(placements) == 100 - 3 - 2  # three men, two Citadels
    assert "F@b2" not in placements and "F@a1" not in placements


def test_8_2_placement_is_the_whole_turn() -> None:
    state = position("Ka1 ka10", reserves="FF:ff")
    after = act(state, "F@e5")
    assert RULES.to_act(after) == ("north",)
    assert after.reserves == (1, 2)
    assert RULES.setup_text(after).split()[0].count("F") == 1


def test_8_3_each_machine_is_used_once() -> None:
    state = position("Ka1 ka10", reserves="F:f")
    after = act(act(state, "F@e5"), "Ka10-b10")
    assert not any(n.startswith("F@") for n in notations(after))
    with pytest.raises(RuleError) as error:
        RULES.apply(after, read_text("F@e6").action())
    assert error.value.reason == "NO_FLYING_MACHINE_LEFT"


def test_8_3_a_placed_machine_never_moves_and_is_never_captured() -> None:
    state = position("Fe5 Ka1 ka10 gd5 me8 hf3", side="N")
    legal = notations(state)
    assert not any(n.endswith("e5") for n in legal)
    with pytest.raises(RuleError) as error:
        RULES.apply(state, read_text("Gd5xe5").action())
    assert error.value.reason == "TARGET_NOT_CAPTURABLE"
    south = position("Fe5 Ka1 ka10")
    with pytest.raises(RuleError) as error:
        RULES.apply(south, read_text("e5-e6").action())
    assert error.value.reason == "PIECE_IMMOBILE"


def test_8_4_blocked_for_both_sides_and_for_jumps() -> None:
    # A machine on the landing square stops a jump; a machine is never jumped.
    assert not any(":" in n for n in notations(position("Td5 te6 Ff7 Ka1")))
    assert not any(":" in n for n in notations(position("Td5 fe6 Ka1")))
    # The owner's own men are blocked too.
    mortar = {n for n in notations(position("Ma1 Fa3 Kj1")) if n.startswith("Ma1")}
    assert mortar == {"Ma1-a2"} | {f"Ma1-{c}1" for c in "bcdefghi"}


def test_8_6_placement_is_allowed_on_the_first_turn_and_anywhere_but_a_citadel() -> None:
    state = RULES.new_game(options())
    legal = notations(state)
    assert {"F@e9", "F@e7"} <= legal  # in the enemy camp
    assert {"F@g1", "F@e2", "F@d1"} <= legal  # next to the Citadel, on a station
    assert "F@f1" not in legal and "F@f10" not in legal


def test_8_7_no_placement_while_a_capture_is_compulsory() -> None:
    state = position("Tc5 td6 Ka1 ka10", reserves="FF:ff")
    assert not any(n.startswith("F@") for n in notations(state))
    with pytest.raises(RuleError) as error:
        RULES.apply(state, read_text("F@e5").action())
    assert error.value.reason == "CAPTURE_COMPULSORY"


def test_placement_then_move_keeps_en_passant() -> None:
    # placement_uses_turn = false: the move after the placement may take en passant.
    opts = options(en_passant="displacement_only", placement_uses_turn="false")
    state = position("Te7 td7 Kj1 kj10", extra="ep=d8", reserves="F:f", opts=opts)
    assert {"F@c1 e7xd8", "F@f5 e7xd8"} <= notations(state)


def test_placement_then_move_keeps_only_the_longest_chains() -> None:
    # A14 with compulsion = huff (placements stay legal beside jumps): after F@a1 the a3
    # chain takes two men, so j3:h5 is no choice; a Flying Machine on e7 cuts that chain.
    opts = options(compulsion="huff", placement_uses_turn="false", longest_jump_required="true")
    state = position("Ta3 tb4 td6 Tj3 ti4 Kf1 kf10", reserves="F:f", opts=opts)
    legal = notations(state)
    assert "F@a1 a3:c5:e7" in legal and "F@a1 j3:h5" not in legal
    assert "F@e7 j3:h5" in legal
    quiet = position("Ka1 ka10", reserves="F:f", opts=opts)
    assert "F@e5 Ka1-a2" in notations(quiet)
