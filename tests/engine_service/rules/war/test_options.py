"""Section 16: every option refuses bad values by name, and every ruling changes play."""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, OfferDraw
from engine_service.rules.war.notation import read_text
from engine_service.rules.war.options import OPTION_SPECS

from .helpers import RULES, START, act, notations, options, position

BAD_VALUES = {
    "back_rank": ["MHC.GK.CHMM", "MHCCGKK.HM", "MHC.G.KCHM", "mhc.gk.chm"],
    "troop_parity": ["rear_even"],
    "north_layout": ["rotate_90"],
    "initial_position": ["not a setup", START.replace("K", "G")],
    "first_player": ["east"],
    "flying_machine_capturable": ["sometimes"],
    "horse_leaps_flying_machine": ["2"],
    "flying_machine_blocks_sliders": ["blocked"],
    "placement_uses_turn": ["half"],
    "placement_first_turn": ["never"],
    "compulsion": ["penalty"],
    "citadel_defence_overrides_compulsion": ["yes please"],
    "longest_jump_required": ["longest"],
    "backward_jumps": ["back"],
    "jump_over_non_troops": ["all"],
    "double_step": ["van_only"],
    "en_passant": ["jump_only"],
    "own_men_on_own_citadel": ["king_only"],
    "passing_allowed": ["sometimes"],
    "no_legal_move": ["win"],
    "repetition_draw": ["1", "-3", "three", "101"],
    "no_progress_limit": ["-1", "lots", "10001"],
    "draw_by_agreement": ["maybe"],
}


def test_every_option_of_section_16_exists_with_its_default() -> None:
    defaults = {spec.name: spec.default for spec in OPTION_SPECS}
    assert defaults == {
        "back_rank": "MHC.GK.CHM",
        "troop_parity": "rear_bdfhj",
        "north_layout": "mirror",
        "initial_position": "",
        "first_player": "south",
        "flying_machine_capturable": "false",
        "horse_leaps_flying_machine": "true",
        "flying_machine_blocks_sliders": "true",
        "placement_uses_turn": "true",
        "placement_first_turn": "true",
        "compulsion": "legality",
        "citadel_defence_overrides_compulsion": "false",
        "longest_jump_required": "false",
        "backward_jumps": "false",
        "jump_over_non_troops": "false",
        "double_step": "any_unmoved_troop",
        "en_passant": "none",
        "own_men_on_own_citadel": "true",
        "passing_allowed": "false",
        "no_legal_move": "loss",
        "repetition_draw": "3",
        "no_progress_limit": "off",
        "draw_by_agreement": "true",
    }


@pytest.mark.parametrize(
    ("name", "value"), [(name, value) for name, values in BAD_VALUES.items() for value in values]
)
def test_bad_values_are_refused_naming_the_option_and_the_allowed_values(
    name: str, value: str
) -> None:
    spec = next(s for s in OPTION_SPECS if s.name == name)
    with pytest.raises(RuleError) as error:
        RULES.resolve_options({name: value})
    assert error.value.reason == "INVALID_OPTION_VALUE"
    assert error.value.field == f"options.{name}"
    message = error.value.message
    assert name in message
    assert spec.describe_allowed() in message
    for allowed in spec.allowed:
        assert allowed in message


def test_unknown_options_are_refused_with_the_list_of_options() -> None:
    with pytest.raises(RuleError) as error:
        RULES.resolve_options({"promotion": "true"})
    assert error.value.reason == "UNKNOWN_OPTION"
    assert "promotion" in error.value.message and "compulsion" in error.value.message


def test_back_rank() -> None:
    assert RULES.new_game(options(back_rank="MHC.KG.CHM")).rules.citadels == (4, 94)


def test_troop_parity() -> None:
    state = RULES.new_game(options(troop_parity="rear_acegi"))
    assert "a2-a4" in notations(state) and "b3-b5" in notations(state)


def test_north_layout() -> None:
    state = RULES.new_game(options(north_layout="rotate_180"))
    assert state.rules.citadels[1] == 94  # e10


def test_initial_position() -> None:
    custom = "10/10/10/10/4k5/10/10/10/10/5K4 S FF:ff"
    state = RULES.new_game(options(initial_position=custom))
    assert RULES.setup_text(state) == custom
    assert state.rules.citadels == (5, 54)


def test_first_player() -> None:
    assert RULES.to_act(RULES.new_game(options(first_player="north"))) == ("north",)


def test_flying_machine_capturable() -> None:
    text = "Gd5 fe5 Fd6 Ka1 ka10"
    assert "Gd5xe5" not in notations(position(text))
    legal = notations(position(text, opts=options(flying_machine_capturable="true")))
    assert "Gd5xe5" in legal
    assert "Gd5xd6" not in legal  # never one's own machine


def test_horse_leaps_flying_machine() -> None:
    text = "Hb1 Fb2 Ka5 ka10"  # b2 lies under the leaps b1-c3 and b1-a3
    assert {"Hb1-c3", "Hb1-a3", "Hb1-d2"} <= notations(position(text))
    legal = notations(position(text, opts=options(horse_leaps_flying_machine="false")))
    assert "Hb1-c3" not in legal and "Hb1-a3" not in legal
    assert "Hb1-d2" in legal  # b2 is not under that leap


def test_flying_machine_blocks_sliders() -> None:
    text = "Ma1 fa3 Tc2 fc3 Kj1 ka10"
    legal = notations(position(text))
    assert "Ma1-a4" not in legal and "c2-c4" not in legal
    legal = notations(position(text, opts=options(flying_machine_blocks_sliders="false")))
    assert {"Ma1-a4", "Ma1-a9", "Ma1xa10"} <= legal and "Ma1-a3" not in legal
    assert "c2-c4" in legal  # the double step passes the machine too


def test_placement_uses_turn() -> None:
    opts = options(placement_uses_turn="false")
    state = position("Ka1 ka10", reserves="F:-", opts=opts)
    legal = notations(state)
    assert "F@e5 Ka1-a2" in legal
    assert "F@e5" not in legal  # a move must follow while there is one
    after = act(state, "F@e5 Ka1-b2")
    assert RULES.to_act(after) == ("north",) and after.reserves == (0, 0)
    # With nothing left to move, the placement is the whole turn.
    stuck = position("Ta5 Fa6 ka10", reserves="F:-", opts=opts)
    assert "F@e5" in notations(stuck)


def test_placement_first_turn() -> None:
    opts = options(placement_first_turn="false")
    state = RULES.new_game(opts)
    assert not any(n.startswith("F@") for n in notations(state))
    with pytest.raises(RuleError) as error:
        RULES.apply(state, read_text("F@e5").action())
    assert error.value.reason == "PLACEMENT_FORBIDDEN"
    state = act(state, "e3-e4")
    assert not any(n.startswith("F@") for n in notations(state))  # North's first turn
    state = act(state, "e8-e7")
    assert "F@e5" in notations(state)  # South's second turn


def test_compulsion_huff() -> None:
    opts = options(compulsion="huff")
    state = position("Tc5 td6 Md1 ka10 Kj1", reserves="F:-", opts=opts)
    legal = notations(state)
    assert {"c5-c6", "Md1-d2", "F@e5", "c5xd6"} <= legal  # nothing is illegal
    after = act(state, "Md1-d2")  # fails to capture d6
    assert after.huffable == (42,)  # the Troop on c5 may be huffed
    legal = notations(after)
    assert "huff c5 d6-d5" in legal and "d6-d5" in legal
    action = RULES.parse_action(after, "huff c5 Ka10-b10")
    huffed, events = RULES.apply(after, action)
    assert any(e.kind is EventKind.HUFFED for e in events)
    assert not any(v.cell == "c5" for v in RULES.pieces(huffed))
    assert huffed.huffable == ()
    # A capture of the exposed Troop leaves nothing to huff.
    assert act(state, "Md1xd6").huffable == ()


def test_compulsion_huff_follows_a_troop_that_moved_away() -> None:
    opts = options(compulsion="huff")
    state = position("Tc5 td6 ka10 Kj1", opts=opts)
    after = act(state, "c5-c6")
    assert after.huffable == (52,)  # c6


def test_citadel_defence_overrides_compulsion() -> None:
    text = "Tc5 td6 hf1 Kg2 ka10"
    assert "Kg2xf1" not in notations(position(text))
    legal = notations(position(text, opts=options(citadel_defence_overrides_compulsion="true")))
    # Taking d6 is still legal, but leaves the Horse on f1: #C, North has won.
    assert {"Kg2xf1", "c5xd6#C", "c5:e7#C"} <= legal
    assert "Kg2-h2#C" not in legal


def test_longest_jump_required() -> None:
    text = "Te3 td4 tf4 th6 Kj1"
    chains = {n for n in notations(position(text)) if ":" in n}
    assert chains == {"e3:c5", "e3:g5:i7"}
    legal = notations(position(text, opts=options(longest_jump_required="true")))
    assert {n for n in legal if ":" in n} == {"e3:g5:i7"}
    assert {"e3xd4", "e3xf4"} <= legal  # displacement of a member of J still satisfies 7.1


def test_backward_jumps() -> None:
    text = "Td5 tc4 Kj1"
    assert notations(position(text)) == {"d5-d6"} | {
        n for n in notations(position(text)) if n.startswith("K")
    }
    legal = notations(position(text, opts=options(backward_jumps="true")))
    assert "d5:b3" in legal
    assert "d5-d6" not in legal  # the jump is now compulsory


def test_jump_over_non_troops() -> None:
    text = "Td5 he6 Kj1"
    assert "d5:f7" not in notations(position(text))
    legal = notations(position(text, opts=options(jump_over_non_troops="true")))
    assert {"d5:f7", "d5xe6"} <= legal and "d5-d6" not in legal


def test_double_step() -> None:
    text = "Tb2 Tc3 Kj1"
    opts = options(double_step="rear_troops_only")
    legal = notations(position(text, opts=opts))
    assert "b2-b4" in legal and "c3-c5" not in legal


def test_en_passant() -> None:
    text = "Te7 td9 Kj1 ka10"
    plain = act(position(text, side="N"), "d9-d7")
    assert "e7xd8" not in notations(plain)
    opts = options(en_passant="displacement_only")
    passing = act(position(text, side="N", opts=opts), "d9-d7")
    assert "e7xd8" in notations(passing)
    later = act(act(passing, "Kj1-j2"), "Ka10-a9")
    assert "e7xd8" not in notations(later)  # only on the very next turn


def test_own_men_on_own_citadel() -> None:
    text = "Gf3 Ke2 ka10"
    assert "Gf3-f1" in notations(position(text))
    legal = notations(position(text, opts=options(own_men_on_own_citadel="false")))
    assert "Gf3-f1" not in legal and "Ke2-f1" in legal
    assert "Gf3-f2" in legal


def test_passing_allowed() -> None:
    text = "Ka1 ka10"
    assert "pass" not in notations(position(text))
    opts = options(passing_allowed="true")
    state = position(text, opts=opts)
    assert "pass" in notations(state)
    assert RULES.to_act(act(state, "pass")) == ("north",)
    assert "pass" not in notations(position("Tc5 td6 Ka1 ka10", opts=opts))  # 7.1


def test_no_legal_move() -> None:
    text = "Ta5 Fa6 ka10"
    assert RULES.outcome(position(text)).winner == "north"  # type: ignore[union-attr]
    drawn = RULES.outcome(position(text, opts=options(no_legal_move="draw")))
    assert drawn is not None and drawn.winner is None


def _shuffle(state: object, plies: int) -> object:
    for text in ("Ka1-a2", "Ka10-a9", "Ka2-a1", "Ka9-a10")[:plies]:
        state = act(state, text)  # type: ignore[arg-type]
    return state


def test_repetition_draw() -> None:
    state = _shuffle(position("Ka1 ka10", opts=options(repetition_draw="2")), 4)
    assert RULES.outcome(state).reason == "REPETITION"  # type: ignore[arg-type, union-attr]
    off = position("Ka1 ka10", opts=options(repetition_draw="off"))
    for _ in range(5):
        off = _shuffle(off, 4)  # type: ignore[assignment]
    assert RULES.outcome(off) is None


def test_no_progress_limit() -> None:
    state = _shuffle(position("Ka1 ka10 Tb5", opts=options(no_progress_limit="1")), 2)
    assert RULES.outcome(state).reason == "NO_PROGRESS"  # type: ignore[arg-type, union-attr]


def test_draw_by_agreement() -> None:
    game = Game(RULES, RULES.new_game(options(draw_by_agreement="false")))
    with pytest.raises(RuleError) as error:
        game.apply("south", OfferDraw("south"))
    assert error.value.reason == "DRAW_BY_AGREEMENT_DISABLED"
    Game(RULES, RULES.new_game(options())).apply("south", OfferDraw("south"))
