"""The set-up text: any position, the plates' included, written and read back."""

from __future__ import annotations

import pytest

from engine_service.rules.battle.board import plate_figures
from engine_service.rules.errors import Reason, RuleError
from tests.engine_service.rules.battle.helpers import RULES, position

START = (
    "W129A126A131C125C130I113I127I128I132I133L85L87L101L103"
    "t19a9a14c10c15i7i8i11i12i13l39l41l43l45 a"
)
# The same position in the set-up text of earlier versions, which still reads.
START_SECTIONS = (
    "attacker to move; "
    "attacker: W129 A126 A131 C125 C130 I113 I127 I128 I132 I133 L85 L87 L101 L103; "
    "defender: T19 A9 A14 C10 C15 I7 I8 I11 I12 I13 L39 L41 L43 L45"
)
LETTERS = {
    "artillery": "A",
    "cavalry": "C",
    "infantry_of_the_line": "I",
    "light_infantry": "L",
    "wagon": "W",
    "citadel": "T",
}


def test_initial_position_as_setup_text() -> None:
    start = RULES.new_game(RULES.resolve_options({}))
    assert RULES.setup_text(start) == START
    assert RULES.new_game(RULES.resolve_options({}), START) == start
    assert RULES.new_game(RULES.resolve_options({}), START_SECTIONS) == start


def test_side_to_move_defaults_to_first_player() -> None:
    text = START_SECTIONS.removeprefix("attacker to move; ")
    options = RULES.resolve_options({"first_player": "defender"})
    assert RULES.to_act(RULES.new_game(options, text)) == ("defender",)


def test_quiet_count_round_trips() -> None:
    text = "W129I127t19l45 d quiet=7"
    state = position(text)
    assert state.quiet == 7 and RULES.setup_text(state) == text
    assert position("defender to move; attacker: W129 I127; defender: T19 L45; quiet: 7") == state


def _plate_setup(name: str) -> str:
    figure = plate_figures()[name]
    armies: dict[str, list[str]] = {"attacker": [], "defender": []}
    for piece in figure["pieces"]:
        kind = next((k for k in LETTERS if piece["piece"].startswith(k)), "infantry_of_the_line")
        side = "attacker" if piece.get("colour") == "white" else "defender"
        armies[side].append(f"{LETTERS[kind]}{piece['square']}")
    return "; ".join(f"{side}: {' '.join(p) or '-'}" for side, p in armies.items())


@pytest.mark.parametrize(
    "name",
    [
        "plate2_fig1",
        "plate2_fig2",
        "plate2_fig3",
        "plate2_fig4",
        "plate3_fig1",
        "plate3_fig2",
        "plate4_fig1",
    ],
)
def test_every_plate_position_can_be_given(name: str) -> None:
    text = _plate_setup(name)
    state = position(text)
    again = position(RULES.setup_text(state))
    assert again == state
    assert len(RULES.pieces(state)) == len(plate_figures()[name]["pieces"])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("attacker: W129 X5; defender: T19", "unknown kind letter"),
        ("attacker: W129 C140; defender: T19", "no square 140"),
        ("attacker: W129 C12; defender: T19 I12", "square 12 holds two pieces"),
        ("attacker: W129 C1 C2 C3; defender: T19", "at most 2 Cavalry"),
        ("attacker: W129 T5; defender: T19", "the attacker has no Citadel"),
        ("attacker: W129; defender: T19 W5", "the defender has no Wagon"),
        ("attacker: W129", "the defender's pieces are missing"),
        ("attacker: W129; defender: T19; quiet: many", "quiet needs a number"),
        ("attacker: W129; defender: T19; north to move", "cannot read"),
        ("attacker: W129; defender: T19; attacker: C5", "given twice"),
    ],
)
def test_bad_setups_are_refused_with_the_format(text: str, words: str) -> None:
    with pytest.raises(RuleError) as error:
        position(text)
    assert error.value.reason is Reason.INVALID_SETUP
    assert words in error.value.message and "kind letter" in error.value.message
