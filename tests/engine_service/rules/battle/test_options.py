"""Section 15: every option, its default, and a position where each other value changes
what is legal or how the game ends."""

from __future__ import annotations

import pytest

from engine_service.rules.base import OutcomeReason
from engine_service.rules.battle.options import OPTION_NAMES
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.game import Game, OfferDraw
from tests.engine_service.rules.battle import reference
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    exposed_squares,
    is_legal,
    mv,
    play,
    position,
)

# Section 15's defaults as the reference model reads them, and the Game's own option:
# draws by agreement are no rule of the book (the reference never offers one).
SPEC_DEFAULTS = {**reference.DEFAULTS, "draw_by_agreement": "true"}


def test_all_eighteen_options_with_the_documented_defaults() -> None:
    assert set(OPTION_NAMES) == set(SPEC_DEFAULTS) and len(OPTION_NAMES) == 18
    assert RULES.resolve_options({}).as_text() == SPEC_DEFAULTS


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("forced_reply", "lose_everything", ["relieve_one", "lose_figure"]),
        ("duty_lapses_when_impossible", "maybe", ["true", "false"]),
        ("repetition_draw", "1", ["off"]),
        ("no_capture_limit", "many", ["off"]),
        ("first_player", "white", ["attacker", "defender"]),
    ],
)
def test_bad_option_values_are_refused_naming_option_and_values(
    name: str, value: str, allowed: list[str]
) -> None:
    with pytest.raises(RuleError) as error:
        RULES.resolve_options({name: value})
    assert error.value.reason is Reason.INVALID_OPTION_VALUE
    assert name in error.value.message and all(word in error.value.message for word in allowed)
    assert error.value.field == f"options.{name}"


def test_unknown_option_is_refused() -> None:
    with pytest.raises(RuleError) as error:
        RULES.resolve_options({"fog_of_war": "true"})
    assert error.value.reason is Reason.UNKNOWN_OPTION and "fog_of_war" in error.value.message


def test_book_literal_preset() -> None:
    options = RULES.resolve_options({}, "book_literal")
    assert options["uncovering_rule"] == "artillery_moves_only"
    assert options["citadel_duty"] == "take_or_block"


def test_first_player_defender() -> None:
    assert RULES.to_act(RULES.new_game(RULES.resolve_options({}))) == ("attacker",)
    start = RULES.new_game(RULES.resolve_options({"first_player": "defender"}))
    assert RULES.to_act(start) == ("defender",)
    assert all(RULES.actor(start, m) == "defender" for m in RULES.legal_actions(start))


# Plate 2 fig. 3 after 54-40, made live: D 16 and 26 are exposed.
CHECKED = "defender to move; attacker: A60 A40 I127 W134; defender: I16 I26 A1 T19 L45"


def test_forced_reply_lose_figure() -> None:
    default = position(CHECKED)
    assert exposed_squares(default, "defender") == {16, 26}
    assert not is_legal(default, "1-9")
    with pytest.raises(RuleError) as error:
        RULES.apply(default, mv("1-9"))
    assert error.value.reason is Reason.FORCED_REPLY
    strict = position(CHECKED, forced_reply="lose_figure")
    assert is_legal(strict, "1-9")
    after, events = RULES.apply(strict, mv("1-9"))
    assert {p.cell for p in RULES.pieces(after)} >= {"9", "45"}
    assert "16" not in {p.cell for p in RULES.pieces(after)}
    assert "26" not in {p.cell for p in RULES.pieces(after)}
    assert sum(1 for e in events if e.kind.value == "CAPTURED") == 2
    assert after.quiet == 0
    # relieving one of them saves it; the other is lost
    after = play(strict, "16-8")
    assert {p.cell for p in RULES.pieces(after) if p.side == "defender"} == {"8", "1", "19", "45"}


# Constructed: moving LI 10 would uncover LI 2 (A.2), and nothing can relieve LI 10.
NO_RELIEF = "defender to move; attacker: A5 A27 I9 W134; defender: T45 L10 L2"


def test_duty_lapses_when_impossible_false() -> None:
    lapsing = position(NO_RELIEF)
    found = analysis(lapsing)
    assert exposed_squares(lapsing, "defender") == {10}
    assert found.lapsed and {m.origin + 1 for m in found.legal} == {2}
    strict = position(NO_RELIEF, duty_lapses_when_impossible="false")
    assert RULES.legal_actions(strict) == []
    outcome = RULES.outcome(strict)
    assert outcome is not None and outcome.reason is OutcomeReason.NO_LEGAL_MOVE
    assert outcome.winner is None


UNCOVER = "defender to move; attacker: A40 I127 W134; defender: T23 I26 A18 C19"


def test_uncovering_rule_artillery_moves_only() -> None:
    board = position(UNCOVER)
    assert exposed_squares(board, "defender") == set()
    assert not is_legal(board, "26-27")  # the Cav on 19 would stand in range of 40
    with pytest.raises(RuleError) as error:
        RULES.apply(board, mv("26-27"))
    assert error.value.reason is Reason.UNCOVERS_FIGURE and "19" in error.value.message
    literal = position(UNCOVER, uncovering_rule="artillery_moves_only")
    assert is_legal(literal, "26-27")
    assert not is_legal(literal, "18-9")  # an Artillery move still may not uncover 26


SUPPORTED = "attacker to move; attacker: I88 C89 I86 A82; defender: A139 A122 I115"


def test_capture_onto_commanded_square_allowed() -> None:
    assert not is_legal(position(SUPPORTED), "89x139")
    allowed = position(SUPPORTED, capture_onto_commanded_square="allowed")
    assert is_legal(allowed, "89x139")
    assert exposed_squares(play(allowed, "89x139"), "attacker") == {139}
    assert not is_legal(allowed, "88-109")  # ending a plain move there is still forbidden


COVERED_WAGON = "defender to move; attacker: W127 A110 I101; defender: I129 A135 T19"


def test_wagon_capture_cover_ordinary_exposure_test() -> None:
    board = position(COVERED_WAGON)
    with pytest.raises(RuleError) as error:
        RULES.apply(board, mv("129x127"))
    assert error.value.reason is Reason.WAGON_UNDER_COVER
    ordinary = position(COVERED_WAGON, wagon_capture_cover="ordinary_exposure_test")
    assert is_legal(ordinary, "129x127")  # the capturer is protected by its battery on 135
    unprotected = position(
        COVERED_WAGON.replace("A135", "A92"), wagon_capture_cover="ordinary_exposure_test"
    )
    assert not is_legal(unprotected, "129x127")


def test_wagon_occupancy_literal_text() -> None:
    text = "attacker to move; attacker: W129 I127; defender: A104 I4 T19"
    assert not is_legal(position(text), "129-112")
    literal = position(text, wagon_occupancy="literal_text")
    assert is_legal(literal, "129-112")  # in range of 104, but not on its own battery's line
    assert exposed_squares(play(literal, "129-112"), "attacker") == {112}
    own_line = "attacker to move; attacker: W128 A135 I127; defender: A107 I4 T19"
    assert not is_legal(position(own_line, wagon_occupancy="literal_text"), "128-120")


WAGON_CHECKED = "attacker to move; attacker: W129 C110 I133; defender: A112 I4 T19"


def test_wagon_forced_reply_capture_battery_first() -> None:
    board = position(WAGON_CHECKED)
    assert exposed_squares(board, "attacker") == {129}
    assert is_legal(board, "110x112") and is_legal(board, "129-136")
    first = position(WAGON_CHECKED, wagon_forced_reply="capture_battery_first")
    assert {RULES.format_action(first, m) for m in analysis(first).legal} == {"110x112"}
    with pytest.raises(RuleError) as error:
        RULES.apply(first, mv("129-136"))
    assert error.value.reason is Reason.FORCED_REPLY
    # no capture possible: the Wagon must move out of range
    flee = position(
        WAGON_CHECKED.replace("C110", "C101"), wagon_forced_reply="capture_battery_first"
    )
    assert {m.origin + 1 for m in analysis(flee).legal} == {129}


COMMANDED = "defender to move; attacker: A33 I125 W134; defender: T19 C38 I7"


def test_citadel_duty_take_or_block() -> None:
    board = position(COMMANDED)
    assert is_legal(board, "38-35") and not is_legal(board, "7-16")
    narrow = position(COMMANDED, citadel_duty="take_or_block")
    found = analysis(narrow)
    assert found.lapsed  # nothing can take 33 or block its line to 19
    assert is_legal(narrow, "7-16") and is_legal(narrow, "38-35")
    stuck = position(COMMANDED, citadel_duty="take_or_block", duty_lapses_when_impossible="false")
    assert RULES.legal_actions(stuck) == []


def test_protection_adjacency_oblique_and_corner() -> None:
    text = "defender to move; attacker: A38 I127 W134; defender: I13 A14 T19"
    assert exposed_squares(position(text), "defender") == {13}
    corner = position(text, protection_adjacency="oblique_and_corner")
    assert exposed_squares(corner, "defender") == set()
    assert analysis(position(text)).duty.value == "relieve"
    assert not analysis(corner).exposed and analysis(corner).duty.value == "none"


def test_river_cuts_protection_false() -> None:
    text = "defender to move; attacker: A69 I127 W134; defender: I55 A48 T19"
    assert exposed_squares(position(text), "defender") == {55}
    across = position(text, river_cuts_protection="false")
    assert exposed_squares(across, "defender") == set()


def test_artillery_blockers_figures_only() -> None:
    text = "attacker to move; attacker: W129 I137 I133; defender: A112 I4 T19"
    assert exposed_squares(position(text), "attacker") == {129}
    through = position(text, artillery_blockers="figures_only")
    assert exposed_squares(through, "attacker") == {129, 137}


NO_MOVE = "defender to move; attacker: A17 A24 L11 W134; defender: T52 I16 L7"


def test_no_legal_move_loss() -> None:
    board = position(NO_MOVE)
    assert RULES.legal_actions(board) == []
    drawn = RULES.outcome(board)
    assert drawn is not None and drawn.winner is None
    assert drawn.reason is OutcomeReason.NO_LEGAL_MOVE
    lost = RULES.outcome(position(NO_MOVE, no_legal_move="loss"))
    assert lost is not None and lost.winner == "attacker"


def test_draw_by_agreement_false() -> None:
    for value, allowed in (("true", True), ("false", False)):
        options = RULES.resolve_options({"draw_by_agreement": value})
        game = Game(RULES, RULES.new_game(options))
        if allowed:
            offered, _ = game.apply("attacker", OfferDraw("attacker"))
            assert offered.draw_offer == "attacker"
        else:
            with pytest.raises(RuleError) as error:
                game.apply("attacker", OfferDraw("attacker"))
            assert error.value.reason is Reason.DRAW_BY_AGREEMENT_DISABLED


SHUFFLE = ["125-117", "15-23", "117-125", "23-15"]


def _shuffle(options: dict[str, str], rounds: int) -> Game:  # type: ignore[type-arg]
    game = Game(RULES, RULES.new_game(RULES.resolve_options(options)))
    for _ in range(rounds):
        for text in SHUFFLE:
            if game.outcome is not None:
                return game
            side = game.to_act()[0]
            game, _ = game.apply(side, game.parse(text, side))
    return game


def test_repetition_draw_values() -> None:
    third = _shuffle({}, 2)  # the start position occurs for the 3rd time
    assert third.outcome is not None and third.outcome.reason is OutcomeReason.REPETITION
    assert _shuffle({}, 1).outcome is None
    second = _shuffle({"repetition_draw": "2"}, 1)
    assert second.outcome is not None and second.outcome.reason is OutcomeReason.REPETITION
    assert _shuffle({"repetition_draw": "off", "no_capture_limit": "off"}, 10).outcome is None


def test_no_capture_limit_values() -> None:
    short = _shuffle({"no_capture_limit": "2", "repetition_draw": "off"}, 1)
    assert short.outcome is not None and short.outcome.reason is OutcomeReason.NO_PROGRESS
    three = _shuffle({"no_capture_limit": "3", "repetition_draw": "off"}, 1)
    assert three.outcome is None and three.state.quiet == 4
    longer = _shuffle({"no_capture_limit": "3", "repetition_draw": "off"}, 2)
    assert longer.outcome is not None and longer.state.quiet == 6


def test_multiple_duties_citadel_first() -> None:
    text = "defender to move; attacker: A33 I125 W134; defender: T19 C38 I41"
    board = position(text)
    assert exposed_squares(board, "defender") == {41}
    assert is_legal(board, "41-42")  # relieves the figure; the Citadel stays commanded
    first = position(text, multiple_duties="citadel_first")
    assert not is_legal(first, "41-42")
    with pytest.raises(RuleError) as error:
        RULES.apply(first, mv("41-42"))
    assert error.value.reason is Reason.CITADEL_DUTY
    assert is_legal(first, "38-35") and is_legal(first, "41x33")


def test_citadel_capture_ignores_uncovering_false() -> None:
    text = "attacker to move; attacker: I20 C11 A12 W134; defender: T19 A36 L45"
    board = position(text)
    assert is_legal(board, "20x19")
    after, _ = RULES.apply(board, mv("20x19"))
    outcome = RULES.outcome(after)
    assert outcome is not None and outcome.reason is OutcomeReason.CITADEL_CAPTURED
    strict = position(text, citadel_capture_ignores_uncovering="false")
    assert not is_legal(strict, "20x19")  # the Cav on 11 would stand in range of 36
