"""The machinery shared by the three games, checked directly: boards as cell graphs, perft,
the meta actions of a `Game` (resign, draw offers), option texts, the `Game` part of a
position text, the repetition history written as steps back, and record tags.

Boards and `Reversal`s are built here inside the tests (the games build theirs when their
modules load), so what these tests check is the construction itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules import rulesets
from engine_service.rules.base import OutcomeReason
from engine_service.rules.board import KNIGHT_OFFSETS, file_letters, offset_table, square_grid
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import AcceptDraw, DeclineDraw, Game, OfferDraw, Resign
from engine_service.rules.position import (
    PositionError,
    Reversal,
    b64,
    history_from_steps,
    read_position,
    steps_back,
    unb64,
    write_position,
)
from engine_service.rules.record import parse_record, write_record

RULESETS = rulesets(bytes(range(32)))
EMPTY_WAR = "k9/10/10/10/10/10/10/10/10/K9 S -:- citadels=a1,a10"


# --- boards -----------------------------------------------------------------------------


def test_a_grid_knows_its_rays_and_knight_leaps() -> None:
    grid = square_grid(3, 3)
    a1, b1, c1, b2, c2, a3, b3, c3 = (
        grid.cell(n) for n in ("a1", "b1", "c1", "b2", "c2", "a3", "b3", "c3")
    )
    assert grid.ray(a1, "E") == (b1, c1)
    assert grid.ray(a1, "NE") == (b2, c3)
    assert grid.ray(a1, "NE", 1) == (b2,)
    assert grid.ray(c3, "N") == ()
    leaps = offset_table(grid, KNIGHT_OFFSETS)
    assert sorted(leaps[a1]) == sorted((c2, b3))
    assert sorted(grid.neighbours(a1)) == sorted((b1, grid.cell("a2"), b2))
    assert grid.neighbours(b2, ("N", "W")) == [b3, grid.cell("a2")]
    assert leaps[b2] == ()  # the centre of 3x3 leaps nowhere
    assert a3 in leaps[c2]


def test_an_unknown_cell_is_refused_naming_the_board_from_first_to_last() -> None:
    with pytest.raises(RuleError) as refusal:
        square_grid(4, 3).cell("z9")
    assert refusal.value.reason == Reason.UNKNOWN_CELL
    assert refusal.value.message == "'z9' is not a cell of this board (a1..d3)"


# --- perft ------------------------------------------------------------------------------


def test_perft_two_counts_every_reply_to_every_first_action() -> None:
    battle = RULESETS["battle"]  # War counts with its own faster perft
    state = battle.new_game(battle.resolve_options({}))
    firsts = battle.legal_actions(state)
    by_hand = sum(len(battle.legal_actions(battle.play(state, action))) for action in firsts)
    assert by_hand > 0
    assert battle.perft(state, 2) == by_hand
    split = battle.divide(state, 2)
    assert [text for text, _count in split] == [
        battle.format_action(state, action) for action in firsts
    ]
    assert sum(count for _text, count in split) == by_hand


# --- the meta actions of a game -----------------------------------------------------------


def test_a_draw_offer_is_told_as_the_offering_side_s_event() -> None:
    war = RULESETS["war"]
    game: Game[Any] = Game(war, war.new_game(war.resolve_options({})))
    offering = game.to_act()[0]
    game, events = game.apply(offering, OfferDraw(offering))
    assert game.draw_offer == offering
    assert [(e.kind, e.side) for e in events] == [("DRAW_OFFERED", offering)]


def _new_war() -> Game[Any]:
    war = RULESETS["war"]
    return Game(war, war.new_game(war.resolve_options({})))


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (OutcomeReason.RESIGNATION, "north resigns; south wins"),
        (OutcomeReason.TIME, "north loses on time; south wins"),
        (OutcomeReason.ABANDONED, "north abandoned the game; south wins"),
    ],
)
def test_a_forfeit_ends_the_game_for_the_other_side(reason: OutcomeReason, message: str) -> None:
    game, _ = _new_war().apply("south", OfferDraw("south"))
    game, events = game.apply("north", Resign("north", reason))
    assert game.outcome is not None
    assert (game.outcome.winner, game.outcome.reason, game.outcome.message) == (
        "south",
        reason,
        message,
    )
    assert game.to_act() == () and game.draw_offer is None
    assert [(e.kind, e.text, e.side) for e in events] == [("GAME_OVER", message, "south")]


def test_after_a_forfeit_no_move_is_read() -> None:
    game, _ = _new_war().apply("north", Resign("north"))
    with pytest.raises(RuleError) as refusal:
        game.parse("a1-a2")
    assert refusal.value.reason == Reason.GAME_OVER
    assert refusal.value.message == "the game is over: north resigns; south wins"


def test_a_resignation_for_an_unknown_side_is_refused_naming_the_sides() -> None:
    with pytest.raises(RuleError) as refusal:
        _new_war().parse("resign", "east")
    assert refusal.value.reason == Reason.ILLEGAL_ACTION
    assert refusal.value.message == "unknown side 'east'; sides: south, north"


def test_a_side_cannot_resign_for_another() -> None:
    with pytest.raises(RuleError) as refusal:
        _new_war().apply("south", Resign("north"))
    assert refusal.value.reason == Reason.NOT_YOUR_TURN
    assert refusal.value.message == "south cannot act for north"


def test_a_move_keeps_the_mover_s_own_offer_and_ends_the_other_s() -> None:
    game = _new_war()
    mover = game.to_act()[0]
    other = next(side for side in ("south", "north") if side != mover)
    move = game.legal_actions()[0]
    assert game.actor(move) == mover
    offered, _ = game.apply(mover, OfferDraw(mover))
    kept, _ = offered.apply(mover, move)
    assert kept.draw_offer == mover and kept.ply == 2
    answered, _ = game.apply(other, OfferDraw(other))
    moved, _ = answered.apply(mover, move)
    assert moved.draw_offer is None


def test_a_draw_offer_accepted_ends_the_game_drawn() -> None:
    game, _ = _new_war().apply("south", OfferDraw("south"))
    with pytest.raises(RuleError) as refusal:
        game.apply("south", AcceptDraw("south"))
    assert refusal.value.reason == Reason.DRAW_NOT_OFFERED
    game, events = game.apply("north", AcceptDraw("north"))
    assert game.outcome is not None and game.outcome.winner is None
    assert game.outcome.reason is OutcomeReason.AGREEMENT
    assert [(e.kind, e.text) for e in events] == [("GAME_OVER", "drawn by agreement")]


def test_a_draw_offer_declined_is_withdrawn() -> None:
    game, _ = _new_war().apply("south", OfferDraw("south"))
    game, events = game.apply("north", DeclineDraw("north"))
    assert game.draw_offer is None and game.outcome is None
    assert [(e.kind, e.text, e.side) for e in events] == [
        ("DRAW_DECLINED", "north declines the draw", "north")
    ]
    with pytest.raises(RuleError) as refusal:
        game.apply("north", DeclineDraw("north"))
    assert refusal.value.reason == Reason.DRAW_NOT_OFFERED


def test_resigning_without_a_side_when_several_sides_act_is_refused() -> None:
    napoleonic = RULESETS["napoleonic"]
    options = napoleonic.resolve_options(
        {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    )
    game: Game[Any] = Game(napoleonic, napoleonic.new_game(options))
    assert len(game.to_act()) > 1
    with pytest.raises(RuleError) as refusal:
        game.parse("resign")
    assert refusal.value.reason == Reason.ILLEGAL_ACTION
    assert refusal.value.message == "say which side acts: several sides may act now"


# --- options ------------------------------------------------------------------------------


def test_a_switched_off_option_is_written_false() -> None:
    war = RULESETS["war"]
    options = war.resolve_options({"horse_leaps_flying_machine": "false"})
    assert options.as_text()["horse_leaps_flying_machine"] == "false"
    assert options.non_default() == {"horse_leaps_flying_machine": "false"}


# --- the Game part of a position text -----------------------------------------------------


def test_a_standing_draw_offer_is_read_from_a_position() -> None:
    war = RULESETS["war"]
    game = read_position(war, f"{EMPTY_WAR} offer=north")
    assert game.draw_offer == "north"
    assert write_position(game).endswith("offer=north")


def test_a_resignation_read_from_a_position_is_a_resignation() -> None:
    war = RULESETS["war"]
    game = read_position(war, f"{EMPTY_WAR} end=resign:north")
    assert game.outcome is not None
    assert game.outcome.reason is OutcomeReason.RESIGNATION
    assert game.outcome.winner == "south"
    assert game.outcome.message == "north resigns; south wins"


def test_an_ended_game_is_written_with_its_ending_and_ply() -> None:
    war = RULESETS["war"]
    text = f"{EMPTY_WAR} ply=7 end=resign:north"
    game = read_position(war, text)
    assert game.ply == 7
    assert write_position(game) == text
    with pytest.raises(RuleError) as refusal:
        read_position(war, f"{EMPTY_WAR} ply=x")
    assert refusal.value.message == "ply: 'x' is not a whole number 0..2147483647"


def test_an_agreed_ending_reads_as_a_draw_and_unknown_endings_are_refused() -> None:
    war = RULESETS["war"]
    game = read_position(war, f"{EMPTY_WAR} end=agreed")
    assert game.outcome is not None and game.outcome.winner is None
    assert game.outcome.reason is OutcomeReason.AGREEMENT
    for ending in ("resign:east", "surrender:north", "resign"):
        with pytest.raises(RuleError) as refusal:
            read_position(war, f"{EMPTY_WAR} end={ending}")
        assert refusal.value.message == (
            f"end='{ending}' is none of resign:<side>, timeout:<side>, abandon:<side>, agreed"
        )


def test_an_acceptance_without_an_offer_is_refused_with_the_rule() -> None:
    with pytest.raises(RuleError) as refusal:
        read_position(RULESETS["war"], f"{EMPTY_WAR} accepted=north")
    assert refusal.value.reason == Reason.INVALID_STATE
    assert refusal.value.message == (
        "accepted= names who accepted a standing draw offer, and there is none from another side"
    )


def test_base64url_keeps_every_letter_and_drops_only_padding() -> None:
    assert b64(b"\x00\x00\x17") == "AAAX"
    assert b64(b"\xff") == "_w"
    assert unb64("_w", "hist") == b"\xff"


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("hist=A", "hist: 'A' is not base64url"),
        ("histkeys=AAAA", "histkeys: 3 bytes is not a whole number of 8-byte keys"),
    ],
)
def test_a_history_that_is_no_whole_data_is_refused_in_words(words: str, message: str) -> None:
    with pytest.raises(RuleError) as refusal:
        read_position(RULESETS["war"], f"{EMPTY_WAR} {words}")
    assert refusal.value.message == message


def test_a_step_back_landing_off_the_board_is_refused() -> None:
    # One step, 3 bytes: origin a1 (0), landing 100, one past the last of War's 100 cells.
    with pytest.raises(RuleError) as refusal:
        read_position(RULESETS["war"], f"{EMPTY_WAR} hist=AABk")
    assert refusal.value.reason == Reason.INVALID_STATE
    assert "step 1 takes back no move" in refusal.value.message


# --- the repetition history as steps back ---------------------------------------------------


def _one_man_line() -> Reversal:
    """Three cells; code 1 is side 0's man, its key part 1, 2, 4 on cells 0, 1, 2."""
    return Reversal(
        piece_keys=((0, 0, 0), (1, 2, 4)),
        cells_by_key=({}, {1: 0, 2: 1, 4: 2}),
        turn_key=8,
        mover=lambda code: 0 if code == 1 else -1,
    )


def test_a_move_taken_back_explains_the_previous_position() -> None:
    how = _one_man_line()
    board = bytes((0, 1, 0))  # the man has stepped from cell 0 to cell 1; side 1 moves
    earlier, now = 1, 2 ^ 8  # man on 0, side 0 to move; man on 1, side 1 to move
    steps, older = steps_back(how, board, 1, [earlier, now])
    assert (steps, older) == ([(0, 1)], [])
    assert history_from_steps(how, board, 1, now, steps=steps, older=older) == (earlier, now)


def test_a_step_landing_past_the_last_cell_is_refused() -> None:
    with pytest.raises(PositionError, match="step 1 takes back no move"):
        history_from_steps(_one_man_line(), bytes((0, 1, 0)), 1, 10, steps=[(0, 3)], older=[])


# --- records --------------------------------------------------------------------------------


def test_an_option_tag_without_a_value_is_an_invalid_record() -> None:
    with pytest.raises(RuleError) as refusal:
        parse_record('[Game "war"]\n[Option "passing_allowed"]\n')
    assert refusal.value.reason == Reason.INVALID_RECORD
    assert refusal.value.message == "line 2: Option needs name=value"


def test_a_record_without_a_result_has_no_result_tag() -> None:
    text = write_record("war", {}, EMPTY_WAR, [("south", "a1-a2")])
    assert "[Result" not in text
    assert parse_record(text).result == ""


# --- options and boards at their edges -------------------------------------------------------


def test_a_zero_switches_an_option_off_and_a_one_file_board_has_file_a() -> None:
    war = RULESETS["war"]
    assert war.resolve_options({"passing_allowed": "0"})["passing_allowed"] is False
    assert file_letters(1) == "a"
    assert square_grid(1, 2).names == ("a1", "a2")


def test_an_unknown_option_is_refused_naming_the_game_s_options() -> None:
    war = RULESETS["war"]
    with pytest.raises(RuleError) as refusal:
        war.resolve_options({"nope": "1"})
    assert refusal.value.reason == Reason.UNKNOWN_OPTION
    assert refusal.value.message.startswith("unknown option 'nope'; options: back_rank, ")
