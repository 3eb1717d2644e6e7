"""Section 3: the initial position as data, setup strings and their extensions."""

from __future__ import annotations

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.war.setup import SetupError, derived_setup_text, parse_setup

from .helpers import RULES, START, act, options, position


def _rank(text: str, rank: int) -> str:
    """The board row of a setup string for a rank (1..10), expanded with '.'."""
    row = text.split(maxsplit=1)[0].split("/")[10 - rank]
    out = ""
    for ch in row.replace("10", "." * 10):
        out += "." * int(ch) if ch.isdigit() else ch
    return out


def test_default_setup_is_the_string_of_section_3_2() -> None:
    state = RULES.new_game(options())
    assert RULES.setup_text(state) == START
    assert RULES.new_game(options(), START) == state


def test_default_men_stand_where_section_3_2_lists_them() -> None:
    text = derived_setup_text(options())
    assert _rank(text, 1) == "MHC.GK.CHM"
    assert _rank(text, 2) == ".T.T.T.T.T"  # Rear b d f h j
    assert _rank(text, 3) == "T.T.T.T.T."  # Van a c e g i
    assert _rank(text, 8) == "t.t.t.t.t."
    assert _rank(text, 9) == ".t.t.t.t.t"
    assert _rank(text, 10) == "mhc.gk.chm"
    assert RULES.new_game(options()).rules.citadels == (5, 95)  # f1, f10


@pytest.mark.parametrize("back_rank", [".MHCGKCHM.", "M.HCGKCH.M", "MH.CGKC.HM", "MHC.KG.CHM"])
def test_back_rank_alternatives_of_section_3_3(back_rank: str) -> None:
    state = RULES.new_game(options(back_rank=back_rank))
    text = RULES.setup_text(state)
    assert _rank(text, 1) == back_rank
    assert _rank(text, 10) == back_rank.lower()
    king = back_rank.index("K")
    assert state.rules.citadels == (king, 90 + king)  # the Kings' squares


def test_troop_parity_swapped() -> None:
    text = RULES.setup_text(RULES.new_game(options(troop_parity="rear_acegi")))
    assert _rank(text, 2) == "T.T.T.T.T."
    assert _rank(text, 3) == ".T.T.T.T.T"
    assert _rank(text, 9) == "t.t.t.t.t."


def test_north_rotated_puts_kings_and_citadel_on_e10() -> None:
    state = RULES.new_game(options(north_layout="rotate_180"))
    text = RULES.setup_text(state)
    assert _rank(text, 10) == "mhc.kg.chm"
    assert _rank(text, 9) == "t.t.t.t.t."
    assert _rank(text, 8) == ".t.t.t.t.t"
    assert state.rules.citadels == (5, 94)  # f1 and e10


def test_initial_position_overrides_the_layout_options() -> None:
    custom = "mhcgk2chm/t1t1t1t1t1/1t1t1t1t1t/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHCGK2CHM S FF:ff"
    state = RULES.new_game(options(initial_position=custom, back_rank=".MHCGKCHM."))
    assert RULES.setup_text(state) == custom
    assert state.rules.citadels == (4, 94)  # e1 and e10, where the Kings stand


def test_initial_position_must_agree_with_first_player() -> None:
    custom = START.replace(" S ", " N ")
    with pytest.raises(RuleError) as error:
        RULES.new_game(options(initial_position=custom))
    assert error.value.reason == "INVALID_SETUP"
    assert "first_player" in error.value.message
    state = RULES.new_game(options(initial_position=custom, first_player="north"))
    assert RULES.to_act(state) == ("north",)


def test_first_player_north_moves_first() -> None:
    state = RULES.new_game(options(first_player="north"))
    assert RULES.to_act(state) == ("north",)
    assert RULES.setup_text(state).split()[1] == "N"


def test_setup_round_trips_through_a_middlegame() -> None:
    state = RULES.new_game(options())
    for text in ("e3-e5", "f9-f7", "F@d5", "e8-e7", "Hi1-j3"):
        state = act(state, text)
    setup = RULES.setup_text(state)
    again = RULES.new_game(options(), setup)
    assert RULES.setup_text(again) == setup
    assert again.board == state.board and again.move == state.move
    assert "move=3" in setup and "quiet=1" in setup


def test_moved_troops_on_their_starting_ranks_are_written_out() -> None:
    # A Rear Troop that captures onto rank 3 stays on its starting ranks but has moved.
    state = position("Tb2 tc3 Kj1 kj10")
    after = act(state, "b2xc3")
    text = RULES.setup_text(after)
    assert "moved=c3" in text
    again = RULES.new_game(options(), text)
    assert RULES.pieces(again) == RULES.pieces(after)
    assert "c3-c5" not in {RULES.format_action(again, a) for a in RULES.legal_actions(again)}


def test_troops_off_their_starting_ranks_read_as_moved() -> None:
    state = position("Tc5 Tc3 Kj1 kj10")
    moved = {view.cell: view.moved for view in RULES.pieces(state) if view.kind == "troop"}
    assert moved == {"c5": True, "c3": False}


def test_citadels_default_to_the_options_and_can_be_given() -> None:
    state = position("Ka5 ka6")  # Kings far from home: the Citadels stay f1 and f10
    assert state.rules.citadels == (5, 95)
    assert "citadels" not in RULES.setup_text(state)
    moved = position("Ka5 ka6", extra="citadels=e1,e10")
    assert moved.rules.citadels == (4, 94)
    assert "citadels=e1,e10" in RULES.setup_text(moved)


def test_placed_flying_machines_are_part_of_the_board() -> None:
    state = position("Fe5 fd4 Ka1 ka10", reserves="F:f")
    views = {(v.cell, v.kind, v.side) for v in RULES.pieces(state)}
    assert ("e5", "flying_machine", "south") in views
    assert ("d4", "flying_machine", "north") in views
    assert RULES.setup_text(state).split()[2] == "F:f"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "three fields"),
        ("10/10/10 S FF:ff", "ranks"),
        ("11/10/10/10/10/10/10/10/10/10 S FF:ff", "files"),
        ("X9/10/10/10/10/10/10/10/10/10 S FF:ff", "piece letter"),
        ("10/10/10/10/10/10/10/10/10/10 W FF:ff", "neither S nor N"),
        ("10/10/10/10/10/10/10/10/10/10 S FFF:ff", "Flying Machines"),
        ("10/10/10/10/10/10/10/10/10/10 S FF", "reserves"),
        ("10/10/10/10/10/10/10/10/10/10 S FF:ff colour=blue", "optional tokens"),
        ("10/10/10/10/10/10/10/10/10/10 S FF:ff moved=c5", "no Troop"),
        ("10/10/10/10/10/10/10/10/10/10 S FF:ff citadels=f1", "two different"),
        ("10/10/10/10/10/10/10/10/10/10 S FF:ff quiet=x", "whole number"),
    ],
)
def test_bad_setup_strings_are_refused_with_the_reason(text: str, words: str) -> None:
    with pytest.raises(RuleError) as error:
        RULES.new_game(options(), text)
    assert error.value.reason == "INVALID_SETUP"
    assert words in error.value.message
    assert error.value.field == "setup"


EMPTY = "10/10/10/10/10/10/10/10/10/10"
TOKENS = (
    "moved=..., unmoved=..., citadels=..., ep=..., huff=..., quiet=..., move=..., hist=..., "
    "histkeys=..."
)
LETTERS = "(K G M C H T F, upper case South, lower case North) or run of empty squares"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "",
            "a setup string has at least three fields: board, side to move (S or N) and "
            "reserves (FF:ff)",
        ),
        ("10/10/10 S FF:ff", "the board has 3 ranks separated by '/', not 10"),
        ("X9/10/10/10/10/10/10/10/10/10 S FF:ff", f"rank 10: 'X' is no piece letter {LETTERS}"),
        (".9/10/10/10/10/10/10/10/10/10 S FF:ff", f"rank 10: '.' is no piece letter {LETTERS}"),
        ("10/10/10/10/10/10/10/10/10/t9 S FF:ff", None),
        ("11/10/10/10/10/10/10/10/10/10 S FF:ff", "rank 10 ('11') covers 2 files, not 10"),
        ("9K1/10/10/10/10/10/10/10/10/10 S FF:ff", "rank 10 ('9K1') covers 11 files, not 10"),
        ("10K/10/10/10/10/10/10/10/10/10 S FF:ff", "rank 10 ('10K') covers more than 10 files"),
        ("10/10/10/10/10/10/10/10/10/9 S FF:ff", "rank 1 ('9') covers 9 files, not 10"),
        (f"{EMPTY} W FF:ff", "side to move 'W' is neither S nor N"),
        (f"{EMPTY} S FF", "reserves 'FF': expected South's F's, ':', North's f's (FF:ff)"),
        (f"{EMPTY} S FFF:ff", "reserves 'FFF:ff': a side has 2 Flying Machines"),
        (f"{EMPTY} S 2:3", "reserves '2:3': a side has 2 Flying Machines"),
        (f"{EMPTY} S F:x", "reserves 'F:x': 'x' is not a run of 'f' or '-'"),
        (
            f"{EMPTY} S FF:ff colour=blue",
            f"'colour=blue' is not one of the optional tokens {TOKENS}",
        ),
        (f"{EMPTY} S FF:ff quiet", f"'quiet' is not one of the optional tokens {TOKENS}"),
        (f"{EMPTY} S FF:ff quiet=1 QUIET=2", "token quiet= appears twice"),
        (f"{EMPTY} S FF:ff moved=c5", "moved: c5 holds no Troop"),
        (f"{EMPTY} S FF:ff unmoved=c5", "unmoved: c5 holds no Troop"),
        (f"{EMPTY} S FF:ff moved=z5", "moved: 'z5' is not a square a1..j10"),
        (f"{EMPTY} S FF:ff citadels=f1", "citadels= needs two different squares: South's, North's"),
        (
            f"{EMPTY} S FF:ff citadels=f1,f1",
            "citadels= needs two different squares: South's, North's",
        ),
        (f"{EMPTY} S FF:ff ep=c3,c4", "ep= needs one square"),
        (f"{EMPTY} S FF:ff quiet=x", "quiet: 'x' is not a whole number below 10^9"),
        (
            f"{EMPTY} S FF:ff quiet=1234567890",
            "quiet: '1234567890' is not a whole number below 10^9",
        ),
        (f"{EMPTY} S FF:ff move=0", "move= counts from 1"),
        (f"{EMPTY} S FF:ff hist=A", "hist: 'A' is not base64url"),
        (f"{EMPTY} S FF:ff hist=AAAA", None),
        (f"{EMPTY} S FF:ff hist=AA", "hist: 1 bytes is not a whole number of 3-byte steps"),
        (
            f"{EMPTY} S FF:ff histkeys=AAAA",
            "histkeys: 3 bytes is not a whole number of 8-byte keys",
        ),
        (
            "10/10/10/10/10/10/10/2T7/10/10 S FF:ff moved=c3 unmoved=c3",
            "c3 is listed both as moved and as unmoved",
        ),
    ],
)
def test_bad_setup_strings_are_refused_word_for_word(text: str, message: str | None) -> None:
    if message is None:  # the control: the same shape, well formed, is read
        parse_setup(text)
        return
    with pytest.raises(SetupError) as error:
        parse_setup(text)
    assert str(error.value) == message


def test_an_initial_position_has_no_moved_troop() -> None:
    with pytest.raises(SetupError) as error:
        parse_setup("10/10/10/10/10/10/10/10/10/2T7 S FF:ff moved=c1", initial=True)
    assert str(error.value) == "moved=: every Troop of an initial position has not moved (11)"


def test_setups_that_could_not_arise_are_refused_with_every_problem() -> None:
    text = "10/10/10/10/10/10/10/10/10/KK1T4FF S F:- "
    with pytest.raises(RuleError) as error:
        RULES.new_game(options(), text)
    message = error.value.message
    assert "2 kings" in message
    assert "3 Flying Machines" in message
    assert "own back rank" in message


def test_setup_parse_reads_the_extension_tokens() -> None:
    setup = parse_setup(START + " ep=d8 huff=c5,b4 quiet=7 move=12 citadels=e1,e10")
    assert (setup.ep, setup.huffable, setup.quiet, setup.move) == (73, (31, 42), 7, 12)
    assert setup.citadels == (4, 94)


def test_huff_rights_are_written_with_the_history_that_led_to_them() -> None:
    # South declines both captures of d6 under compulsion = huff: North may huff c5 and e5,
    # and the King's step back is written as a step (hist=), not as raw position keys,
    # because the huff rights are part of the position's key.
    huff = options(compulsion="huff")
    after = act(position("Tc5 Te5 td6 Ka1 ka10", opts=huff), "Ka1-a2")
    text = RULES.setup_text(after)
    assert text.split()[3:] == ["huff=c5,e5", "quiet=1", "hist=AAAK"]
    back = RULES.new_game(huff, text)
    assert (back.history, back.huffable) == (after.history, after.huffable)


def test_a_board_read_token_by_token_is_the_board_read_at_once() -> None:
    # A "0" (an empty run of no squares) is no character of the quick reading, so this
    # board field is read token by token; both readings must give the same men.
    zero_runs = START.replace("MHC1GK1CHM", "0MHC1GK1CHM0").replace("mhc1", "mhc01")
    assert zero_runs != START
    assert parse_setup(zero_runs).board == parse_setup(START).board
