"""The shared parts of position texts (docs/positions.md, "Parts every game shares"), pinned
piece by piece: words and sections split outside quotes, `key=value` words, base64url,
whole numbers, the part the players add (`ply=`, `offer=`, `accepted=`, `end=`), the
repetition history written as steps back, and the reasons a text is refused.

Where a concrete game is needed it is one of the three real games; the steps-back
machinery is also checked on a small `Reversal` built here, where every key is known.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import AcceptDraw, Game, OfferDraw
from engine_service.rules.position import (
    PositionError,
    Reversal,
    history_from_steps,
    keys_of,
    keys_text,
    pair_of,
    read_position,
    sections,
    steps_back,
    steps_of,
    steps_text,
    unb64,
    unquote,
    words,
    write_position,
)
from engine_service.rules.war.actions import PASS_ACTION

RULESETS = rulesets(bytes(range(32)))
EMPTY_WAR = "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10"
BATTLE_START = (
    "W129A126A131C125C130I113I127I128I132I133L85L87L101L103"
    "t19a9a14c10c15i7i8i11i12i13l39l41l43l45 a"
)
LARGEST = 2**31 - 1  # a count's largest value (the ply of a protobuf int32)


def _refusal(game_id: str, text: str) -> RuleError:
    """The refusal of reading `text` as a position of `game_id` (the field is always
    `position` and the reason INVALID_STATE)."""
    with pytest.raises(RuleError) as refusal:
        read_position(RULESETS[game_id], text)
    assert refusal.value.reason == Reason.INVALID_STATE
    assert refusal.value.field == "position"
    return refusal.value


def _new(game_id: str, **options: str) -> Game[Any]:
    ruleset = RULESETS[game_id]
    return Game(ruleset, ruleset.new_game(ruleset.resolve_options(options)))


def _played(game: Game[Any], *moves: tuple[str, str]) -> Game[Any]:
    for side, text in moves:
        game, _ = game.apply(side, game.parse(text, side))
    return game


# --- words and sections ---------------------------------------------------------------------


def test_words_split_at_any_whitespace_outside_quotes() -> None:
    text = 'a="x y"\tb=1\nc="p\tq"  d=2'
    assert words(text) == ['a="x y"', "b=1", 'c="p\tq"', "d=2"]


@pytest.mark.parametrize("space", ["\x0b", "\x0c", "\u00a0"])
def test_words_split_alike_whether_or_not_a_value_is_quoted(space: str) -> None:
    # Unquoted texts split at any whitespace (str.split); a quote elsewhere in the text
    # must not turn the same separator into "a quoted value is not closed".
    assert words(f"a=1{space}b=2") == ["a=1", "b=2"]
    assert words(f'a="1 2"{space}b=2') == ['a="1 2"', "b=2"]


def test_a_quote_left_open_in_words_or_sections_is_refused_in_words() -> None:
    for split, text in ((words, 'a="x y b=1'), (sections, 'a: k="x; b: 1')):
        with pytest.raises(PositionError) as refusal:
            split(text)
        assert str(refusal.value) == "a quoted value is not closed"


def test_sections_are_stripped_and_empty_ones_dropped() -> None:
    assert sections(" a: 1 ;; b: 2 ; ") == ["a: 1", "b: 2"]
    assert sections(' a: k="x;y" ;; b: 2 ; ') == ['a: k="x;y"', "b: 2"]


def test_an_open_quote_is_named_by_its_first_24_characters() -> None:
    value = '"' + "abcdefghijklmnopqrstuvwxyz"
    with pytest.raises(PositionError) as refusal:
        unquote(value)
    assert str(refusal.value) == "'\"abcdefghijklmnopqrstuvw': the quoted value is not closed"


def test_a_word_splits_at_its_first_equals_sign() -> None:
    assert pair_of('k="a=b"') == ("k", "a=b")
    assert pair_of("k=") == ("k", "")


@pytest.mark.parametrize("word", ["=x", "plain"])
def test_a_word_without_a_key_is_refused_naming_it(word: str) -> None:
    with pytest.raises(PositionError) as refusal:
        pair_of(word)
    assert str(refusal.value) == f"'{word}' is not a word key=value"


# --- base64url and whole numbers --------------------------------------------------------------


def test_position_keys_are_eight_bytes_each_big_endian() -> None:
    # 00..01 then ff..ff: "AAAA" "AAAA" "AAH_" "____" "____" "_w" in 6-bit groups.
    text = keys_text([1, 2**64 - 1])
    assert text == "AAAAAAAAAAH" + "_" * 10 + "w"
    assert keys_of(text, "histkeys") == (1, 2**64 - 1)
    assert keys_of("", "histkeys") == ()


def test_steps_back_are_three_bytes_each_origin_then_landing() -> None:
    # (1, 2) is 0x001002, (4095, 4095) is 0xffffff.
    assert steps_text([(1, 2), (4095, 4095)]) == "ABAC____"
    assert steps_of("ABAC____") == [(1, 2), (4095, 4095)]
    assert steps_of("") == []


@pytest.mark.parametrize(
    ("read", "text", "message"),
    [
        (steps_of, "AAAAAA", "hist: 4 bytes is not a whole number of 3-byte steps"),
        (lambda text: keys_of(text, "histkeys"), "A", "histkeys: 'A' is not base64url"),
        (steps_of, "A" * 29, "hist: 'AAAAAAAAAAAAAAAAAAAAAAAA' is not base64url"),
    ],
)
def test_binary_parts_that_are_no_whole_data_are_refused_naming_the_part(
    read: Any, text: str, message: str
) -> None:
    with pytest.raises(PositionError) as refusal:
        read(text)
    assert str(refusal.value) == message


def test_a_long_text_outside_the_alphabet_is_named_by_its_first_24_characters() -> None:
    with pytest.raises(PositionError) as refusal:
        unb64("!" * 30, "hist")
    assert str(refusal.value) == f"hist: {'!' * 24!r} is not base64url"


def test_base64url_padding_is_optional() -> None:
    assert unb64("AAA", "x") == unb64("AAA=", "x") == b"\x00\x00"
    assert unb64("AA", "x") == unb64("AA==", "x") == b"\x00"
    assert unb64("A" * 10, "x") == bytes(7)  # two 4-letter groups and 2 letters for 1 byte
    assert unb64("-_8", "x") == b"\xfb\xff"


@pytest.mark.parametrize("text", ["AAAA!", "+/8", "AA AA", "AA\nA", "A=AA"])
def test_a_text_outside_the_base64url_alphabet_is_refused(text: str) -> None:
    # RFC 4648 base64url: letters, digits, "-" and "_", padding only at the end; "+" and
    # "/" belong to the other alphabet.
    with pytest.raises(PositionError) as refusal:
        unb64(text, "hist")
    assert str(refusal.value) == f"hist: {text!r} is not base64url"


@pytest.mark.parametrize(("written", "ply"), [(str(LARGEST), LARGEST), ("0000000007", 7)])
def test_a_count_is_a_whole_number_of_at_most_ten_digits(written: str, ply: int) -> None:
    game = read_position(RULESETS["war"], f"{EMPTY_WAR} ply={written}")
    assert game.ply == ply
    assert write_position(game) == f"{EMPTY_WAR} ply={ply}"


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (str(LARGEST + 1), str(LARGEST + 1)),
        ("00000000007", "00000000007"),
        ("-1", "-1"),
        ("x" * 30, "x" * 24),
    ],
)
def test_a_count_past_the_largest_or_of_more_than_ten_digits_is_refused(
    written: str, shown: str
) -> None:
    refusal = _refusal("war", f"{EMPTY_WAR} ply={written}")
    assert refusal.message == f"ply: {shown!r} is not a whole number 0..{LARGEST}"


# --- the part the players add and the options -------------------------------------------------


def test_who_accepted_a_draw_is_written_and_read_with_more_than_two_players() -> None:
    game = _new("napoleonic", scenario="grand_battle_2v2")
    game, _ = game.apply("red", OfferDraw("red"))
    game, _ = game.apply("blue", AcceptDraw("blue"))
    game, _ = game.apply("green", AcceptDraw("green"))
    text = write_position(game)
    assert text.endswith(
        "; options: scenario=grand_battle_2v2; game: ply=3 offer=red accepted=blue,green"
    )
    again = read_position(RULESETS["napoleonic"], text)
    assert again.draw_offer == "red" and again.draw_accepted == ("blue", "green")
    assert again == game


def test_a_draw_agreed_is_written_end_agreed() -> None:
    game = _new("war")
    game, _ = game.apply("south", OfferDraw("south"))
    game, _ = game.apply("north", AcceptDraw("north"))
    text = write_position(game)
    assert text.endswith(" ply=2 end=agreed")
    assert read_position(RULESETS["war"], text) == game


NAPOLEONIC_2V2 = (
    "board 16x10; red: h1=G; black: a10=G; blue: p1=G; green: p10=G; turn: red movement 3; "
    "options: scenario=grand_battle_2v2"
)


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ("offer=red accepted=blue,blue", "accepted='blue,blue' names a side twice"),
        (
            "offer=red accepted=red",
            "accepted= names who accepted a standing draw offer, and there is none from "
            "another side",
        ),
        ("offer=purple", "unknown side 'purple'; sides: red, black, blue, green"),
        ("offer=red accepted=blue,purple", "unknown side 'purple'; sides: red, black, blue, green"),
        ("ply=1 ply=2", "ply= is given twice"),
    ],
)
def test_the_players_part_is_refused_when_it_could_not_arise(part: str, message: str) -> None:
    assert _refusal("napoleonic", f"{NAPOLEONIC_2V2}; game: {part}").message == message


def test_an_offer_accepted_by_another_side_reads() -> None:
    game = read_position(RULESETS["napoleonic"], f"{NAPOLEONIC_2V2}; game: offer=red accepted=blue")
    assert game.draw_offer == "red" and game.draw_accepted == ("blue",)


def test_a_napoleonic_resignation_is_read_from_its_game_section() -> None:
    game = _played(_new("napoleonic"), ("black", "resign"))
    text = write_position(game)
    assert text.endswith("; game: ply=1 end=resign:black")
    again = read_position(RULESETS["napoleonic"], text)
    assert again.outcome is not None and again.outcome.winner == "red"
    assert again == game


def test_an_option_given_twice_is_refused() -> None:
    text = f"{EMPTY_WAR} passing_allowed=true passing_allowed=false"
    assert _refusal("war", text).message == "an option is given twice"


def test_a_players_word_is_told_by_its_key_before_the_first_equals_sign() -> None:
    # `ply="1=2"` is the word ply= (a bad count), not a word of the board's own part.
    refusal = _refusal("war", f'{EMPTY_WAR} ply="1=2"')
    assert refusal.message == f"ply: '1=2' is not a whole number 0..{LARGEST}"


def test_a_game_over_by_the_rules_cannot_also_end_by_the_players() -> None:
    # The attacker's Wagon is gone: the defender has won by the rules (Battle 9.1).
    refusal = _refusal("battle", "t19i7 a end=resign:attacker")
    assert refusal.message == (
        "the game ended by the rules (The defender has taken the Wagon and wins.), so it "
        "cannot also end by resignation"
    )


def test_a_set_up_refusal_is_told_without_its_set_up_prefix() -> None:
    refusal = _refusal("napoleonic", "board 8x8; red: z9=G; black: h8=G")
    assert refusal.message == "z9 is not a square of the 8x8 board"


# --- the repetition history as steps back -----------------------------------------------------

# A line of four cells. Code 1 is side 0's man, code 2 side 1's, code 3 a piece that never
# moves back (mover -1, as a Troop in War); each (code, cell) has a key bit of its own.
LINE_KEYS = ((0, 0, 0, 0), (1, 2, 4, 8), (16, 32, 64, 128), (256, 512, 1024, 2048))
TURN = 4096


def _line(passes: bool = False) -> Reversal:
    return Reversal(
        piece_keys=LINE_KEYS,
        cells_by_key=tuple(
            {key: cell for cell, key in enumerate(keys) if key} for keys in LINE_KEYS
        ),
        turn_key=TURN,
        mover=lambda code: {1: 0, 2: 1}.get(code, -1),
        passes=passes,
    )


def _key(board: tuple[int, ...], side: int) -> int:
    key = TURN if side else 0
    for cell, code in enumerate(board):
        key ^= LINE_KEYS[code][cell]
    return key


def test_moves_back_and_forth_are_taken_back_in_turn_oldest_last() -> None:
    # Side 0's man steps 0->1, side 1's 3->2, then each steps back: side 0 to move again.
    boards = [(1, 0, 0, 2), (0, 1, 0, 2), (0, 1, 2, 0), (1, 0, 2, 0), (1, 0, 0, 2)]
    history = [_key(board, ply % 2) for ply, board in enumerate(boards)]
    board = bytes(boards[-1])
    steps, older = steps_back(_line(), board, 0, history)
    assert steps == [(2, 3), (1, 0), (3, 2), (0, 1)]
    assert older == []
    assert history_from_steps(_line(), board, 0, history[-1], steps=steps, older=older) == tuple(
        history
    )


def test_a_key_no_move_explains_ends_the_steps_and_is_kept_with_every_older_one() -> None:
    # The last ply moved the piece that never moves back (code 3, 0 -> 1): no step explains
    # it, so both earlier keys stay keys.
    history = [99, _key((3, 0, 0, 2), 1), _key((0, 3, 0, 2), 0)]
    steps, older = steps_back(_line(), bytes((0, 3, 0, 2)), 0, history)
    assert (steps, older) == ([], [history[1], 99])
    board = bytes((0, 3, 0, 2))
    assert history_from_steps(_line(), board, 0, history[-1], steps=[], older=older) == tuple(
        history
    )


def test_a_pass_is_a_step_back_from_nowhere_to_nowhere_where_the_game_has_passes() -> None:
    board = bytes((1, 0, 0, 2))
    history = [_key(tuple(board), 1), _key(tuple(board), 0)]
    steps, older = steps_back(_line(passes=True), board, 0, history)
    assert (steps, older) == ([(0, 0)], [])
    assert history_from_steps(
        _line(passes=True), board, 0, history[-1], steps=steps, older=[]
    ) == tuple(history)
    # Without passes the same keys are no step at all, and a pass step is refused.
    assert steps_back(_line(), board, 0, history) == ([], [history[0]])
    with pytest.raises(PositionError) as refusal:
        history_from_steps(_line(), board, 0, history[-1], steps=[(2, 2)], older=[])
    assert str(refusal.value) == "hist: step 1 is a pass, which this game has not"


@pytest.mark.parametrize(
    ("board", "step"),
    [
        ((0, 1, 0, 2), (2, 3)),  # the other side's man: side 0 made the last ply
        ((3, 1, 0, 2), (0, 1)),  # its origin is occupied
        ((0, 3, 0, 2), (0, 1)),  # a piece that never moves back
        ((1, 0, 0, 2), (0, 1)),  # nobody on the landing
        ((0, 1, 0, 2), (4, 1)),  # the origin is one past the last cell
    ],
)
def test_a_step_that_takes_back_no_move_of_the_side_that_made_it_is_refused(
    board: tuple[int, ...], step: tuple[int, int]
) -> None:
    # Side 1 to move: the first step back takes back a move of side 0.
    with pytest.raises(PositionError) as refusal:
        history_from_steps(_line(), bytes(board), 1, _key(board, 1), steps=[step], older=[])
    assert str(refusal.value) == "hist: step 1 takes back no move of the side that made it"


def test_war_writes_men_moving_back_and_forth_as_steps_back() -> None:
    # Cells count from a1 = 0 along the ranks: i1 = 8, h3 = 27, i10 = 98, h8 = 77.
    game = _played(
        _new("war"),
        ("south", "Hi1-h3"),
        ("north", "Hi10-h8"),
        ("south", "Hh3-i1"),
        ("north", "Hh8-i10"),
    )
    text = write_position(game)
    assert f" hist={steps_text([(77, 98), (27, 8), (98, 77), (8, 27)])} " in text
    again = read_position(RULESETS["war"], text)
    assert again.state.history == game.state.history and len(again.state.history) == 5
    assert again == game


def test_war_writes_passes_as_steps_from_a1_to_a1() -> None:
    pass_word = _new("war").format(PASS_ACTION)
    game = _played(_new("war", passing_allowed="true"), ("south", pass_word), ("north", pass_word))
    text = write_position(game)
    assert f" hist={steps_text([(0, 0), (0, 0)])} " in text
    assert read_position(RULESETS["war"], text) == game


def test_a_pass_step_in_a_game_without_passes_is_refused() -> None:
    refusal = _refusal("battle", f"{BATTLE_START} hist={steps_text([(0, 0)])}")
    assert refusal.message.startswith("hist: step 1 is a pass, which this game has not;")
