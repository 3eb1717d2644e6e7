"""Victory and game end (spec 8): surrender, draws by agreement and the termination options,
with the casual and ranked presets of section 14."""

from __future__ import annotations

import pytest

from engine_service.rules.base import OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, OfferDraw, Resign
from engine_service.rules.napoleonic.state import NapoleonicState
from tests.engine_service.rules.napoleonic.helpers import RULESET, play_text

QUIET = "board 8x8; red: d2=I#R_I h1=G#R_G; black: d7=I#B_I a8=G#B_G"


def start(setup: str = QUIET, **options: str) -> NapoleonicState:
    return RULESET.new_game(RULESET.resolve_options(options), setup)


def pass_turns(state: NapoleonicState, count: int) -> NapoleonicState:
    for _ in range(count):
        side = state.active
        state, _ = play_text(RULESET, state, [f"{side} end", f"{side} end"])
    return state


def test_presets_follow_section_14() -> None:
    casual = RULESET.resolve_options({}, "casual")
    assert casual["draw_by_agreement"] is True
    assert (casual["turn_limit"], casual["no_elimination_limit"], casual["repetition_draw"]) == (
        0,
        0,
        0,
    )
    assert casual["insufficient_force_draw"] is False and casual["adjudicate_by_material"] is False
    ranked = RULESET.resolve_options({}, "ranked")
    assert ranked["draw_by_agreement"] is True and ranked["no_elimination_limit"] == 60
    assert ranked["repetition_draw"] == 3 and ranked["insufficient_force_draw"] is True
    assert ranked["turn_limit"] == 0
    # A preset never loses to the scenario, an explicit option wins over both.
    assert (
        RULESET.resolve_options({"no_elimination_limit": "10"}, "ranked")["no_elimination_limit"]
        == 10
    )


def test_surrender_is_the_shared_resignation() -> None:
    game = Game(RULESET, start())
    action = game.parse("surrender", "black")
    assert action == Resign("black")
    over, _ = game.apply("black", action)
    assert over.outcome is not None and over.outcome.winner == "red"
    assert over.outcome.reason is OutcomeReason.RESIGNATION


@pytest.mark.parametrize("allowed", ["true", "false"])
def test_draw_by_agreement(allowed: str) -> None:
    game = Game(RULESET, start(draw_by_agreement=allowed))
    if allowed == "false":
        with pytest.raises(RuleError) as error:
            game.apply("red", OfferDraw("red"))
        assert error.value.reason == "DRAW_BY_AGREEMENT_DISABLED"
        return
    game, _ = game.apply("red", OfferDraw("red"))
    game, _ = game.apply("black", game.parse("accept draw", "black"))
    assert game.outcome is not None and game.outcome.reason is OutcomeReason.AGREEMENT


def test_turn_limit_draws() -> None:
    state = pass_turns(start(turn_limit="4"), 3)
    assert RULESET.outcome(state) is None
    state = pass_turns(state, 1)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.TURN_LIMIT
    assert outcome.winner is None and state.turn_number == 4


@pytest.mark.parametrize(
    ("setup", "winner"),
    [
        ("board 8x8; red: d2=A#R_A h1=G#R_G; black: d7=I#B_I a8=G#B_G", "red"),
        ("board 8x8; red: d2=I#R_I h1=G#R_G; black: d7=C#B_C a8=G#B_G", None),
    ],
)
def test_adjudicate_by_material(setup: str, winner: str | None) -> None:
    state = pass_turns(start(setup, turn_limit="2", adjudicate_by_material="true"), 2)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.TURN_LIMIT
    assert outcome.winner == winner and "material" in outcome.message


def test_no_elimination_limit() -> None:
    state = pass_turns(start(no_elimination_limit="3"), 2)
    assert RULESET.outcome(state) is None and state.turns_since_elimination == 2
    state = pass_turns(state, 1)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.NO_PROGRESS


def test_an_elimination_resets_the_count() -> None:
    setup = "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G b8=I#B_I2"
    state = pass_turns(start(setup, no_elimination_limit="3", auto_skip_defence="true"), 2)
    assert state.turns_since_elimination == 2
    state, _ = play_text(RULESET, state, ["red attack d4>d5", "red end", "red end"])
    assert state.turns_since_elimination == 0
    state = pass_turns(state, 2)
    assert RULESET.outcome(state) is None
    state = pass_turns(state, 1)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.NO_PROGRESS


def test_repetition_draw() -> None:
    state = start(repetition_draw="3")
    moves = [
        "red move d2-d3",
        "red end",
        "red end",
        "black move d7-d6",
        "black end",
        "black end",
        "red move d3-d2",
        "red end",
        "red end",
        "black move d6-d7",
        "black end",
        "black end",
    ]
    state, _ = play_text(RULESET, state, moves)
    assert RULESET.outcome(state) is None  # the start position has occurred twice
    state, _ = play_text(RULESET, state, moves)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.REPETITION
    off = start()
    off, _ = play_text(RULESET, off, moves * 3)
    assert RULESET.outcome(off) is None and off.position_history == ()


@pytest.mark.parametrize(
    ("setup", "drawn"),
    [
        # Guards + 1 infantry each: total attack 2 cannot beat a defence of 2.
        ("board 8x8; red: d2=I#R_I h1=G#R_G; black: d7=I#B_I a8=G#B_G", True),
        # Artillery 2 + Guards 1 = 3 can.
        ("board 8x8; red: d2=A#R_A h1=G#R_G; black: d7=I#B_I a8=G#B_G", False),
    ],
)
def test_insufficient_force_draw(setup: str, drawn: bool) -> None:
    state = pass_turns(start(setup, insufficient_force_draw="true"), 1)
    outcome = RULESET.outcome(state)
    assert (outcome is not None and outcome.reason is OutcomeReason.INSUFFICIENT_FORCE) is drawn
    assert RULESET.outcome(pass_turns(start(setup), 1)) is None


def test_the_first_position_after_a_deployment_counts_for_repetition() -> None:
    options = RULESET.resolve_options({"scenario": "marching_orders", "repetition_draw": "3"})
    state = RULESET.new_game(options, "board 8x8; army red: 1G; army black: 1G")
    assert state.position_history == ()
    state, _ = play_text(RULESET, state, ["red place e2=G", "black place e7=G"])
    fixed = RULESET.new_game(
        RULESET.resolve_options({"repetition_draw": "3"}),
        "board 8x8; red: e2=G#R_G; black: e7=G#B_G",
    )
    assert state.position_history == fixed.position_history and len(fixed.position_history) == 1
