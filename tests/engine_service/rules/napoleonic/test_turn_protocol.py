"""The turn as a state machine (spec 6): who may send what, and where each phase leads."""

from __future__ import annotations

import pytest

from engine_service.rules.base import EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    EndPhase,
    Move,
    NapoleonicAction,
    Support,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, apply_batch

# Red artillery d4 faces black infantry d5 (backed by d6); guards far apart.
DUEL = "board 8x8; red: d4=A#R_A h1=G#R_G a2=I#R_I; black: d5=I#B_I d6=I#B_I2 a8=G#B_G"
TEST_OPTIONS = {"auto_skip_defence": "false"}


def start(setup: str = DUEL, **options: str) -> NapoleonicState:
    return RULESET.new_game(RULESET.resolve_options({**TEST_OPTIONS, **options}), setup)


def code_of(state: NapoleonicState, action: NapoleonicAction) -> str:
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, action)
    return str(error.value.reason)


def test_turn_starts_in_movement_with_the_first_player() -> None:
    state = start()
    assert state.phase is Phase.MOVEMENT and RULESET.to_act(state) == ("red",)
    black_first = start(first_player="black")
    assert RULESET.to_act(black_first) == ("black",) and black_first.turn_order == ("black", "red")


def test_end_of_movement_opens_attack_declaration() -> None:
    state, events = RULESET.apply(start(), EndPhase("red"))
    assert state.phase is Phase.ATTACK_DECLARATION
    assert [e.kind for e in events] == [EventKind.PHASE_CHANGED]


def test_an_attack_during_movement_ends_movement_first() -> None:
    state, events = RULESET.apply(start(), Attack("red", "R_A", "B_I"))
    assert state.phase is Phase.ATTACK_DECLARATION
    assert [e.kind for e in events] == [EventKind.PHASE_CHANGED, EventKind.ATTACK_DECLARED]
    assert code_of(state, Move("red", "R_I", "a3")) == "WRONG_PHASE"


def test_an_empty_declaration_passes_the_turn() -> None:
    state, events = apply_batch(RULESET, start(), [EndPhase("red"), EndPhase("red")])
    assert state.phase is Phase.MOVEMENT and state.active == "black" and state.turn_number == 1
    assert events[-1].kind is EventKind.TURN_ENDED


def test_defence_belongs_to_the_defender() -> None:
    state, _ = apply_batch(RULESET, start(), [Attack("red", "R_A", "B_I"), EndPhase("red")])
    assert state.phase is Phase.DEFENCE
    assert RULESET.to_act(state) == ("black",)
    assert {type(a) for a in RULESET.legal_actions(state)} == {Support, EndPhase}
    assert all(a.side == "black" for a in RULESET.legal_actions(state))
    # The attacker may not act in the defence: its own actions are in the wrong phase,
    # a support is not its to give.
    assert code_of(state, Move("red", "R_I", "a3")) == "WRONG_PHASE"
    assert code_of(state, Support("red", "R_A", "R_I")) == "NOT_YOUR_TURN"
    assert code_of(state, EndPhase("red")) == "NOT_YOUR_TURN"


def test_a_declaration_with_attacks_hands_the_defence_to_the_defender() -> None:
    state, _ = RULESET.apply(start(), Attack("red", "R_A", "B_I"))
    state, events = RULESET.apply(state, EndPhase("red"))
    assert [(e.kind, e.text, e.side) for e in events] == [
        (EventKind.PHASE_CHANGED, "1 attack declared: black allocates supports (defence).", "black")
    ]


def test_supports_outside_defence_are_in_the_wrong_phase() -> None:
    assert code_of(start(), Support("black", "B_I2", "B_I")) == "WRONG_PHASE"


def test_the_defenders_end_resolves_and_opens_the_advance() -> None:
    state, events = apply_batch(
        RULESET, start(), [Attack("red", "R_A", "B_I"), EndPhase("red"), EndPhase("black")]
    )
    kinds = [e.kind for e in events]
    assert EventKind.COMBAT_RESOLVED in kinds and EventKind.ELIMINATED in kinds
    assert state.phase is Phase.ADVANCE and RULESET.to_act(state) == ("red",)
    assert RULESET.legal_actions(state) == [Advance("red", "R_A", "d5"), EndPhase("red")]
    after, events = RULESET.apply(state, EndPhase("red"))
    assert after.phase is Phase.MOVEMENT and after.active == "black"
    assert events[-1].kind is EventKind.TURN_ENDED


def test_no_advance_phase_without_an_elimination() -> None:
    state, _ = apply_batch(
        RULESET,
        start(),
        [
            Attack("red", "R_A", "B_I"),
            EndPhase("red"),
            Support("black", "B_I2", "B_I"),
            EndPhase("black"),
        ],
    )
    assert state.phase is Phase.MOVEMENT and state.active == "black"


def test_auto_skip_defence_resolves_when_no_support_is_possible() -> None:
    lonely = "board 8x8; red: d4=A#R_A h1=G#R_G; black: d5=I#B_I a8=G#B_G"
    skipped, _ = apply_batch(
        RULESET,
        start(lonely, auto_skip_defence="true"),
        [Attack("red", "R_A", "B_I"), EndPhase("red")],
    )
    assert skipped.phase is Phase.ADVANCE
    waiting, _ = apply_batch(
        RULESET,
        start(lonely, auto_skip_defence="false"),
        [Attack("red", "R_A", "B_I"), EndPhase("red")],
    )
    assert waiting.phase is Phase.DEFENCE
    # With a possible support the defence is never skipped.
    backed, _ = apply_batch(
        RULESET,
        start(DUEL, auto_skip_defence="true"),
        [Attack("red", "R_A", "B_I"), EndPhase("red")],
    )
    assert backed.phase is Phase.DEFENCE


def test_eliminating_the_guards_ends_the_game_without_advance() -> None:
    setup = "board 8x8; red: d4=A#R_A e5=I#R_I h1=G#R_G; black: d5=G#B_G"
    state, events = apply_batch(
        RULESET,
        start(setup),
        [Attack("red", "R_A", "B_G"), Attack("red", "R_I", "B_G"), EndPhase("red")],
    )
    state, events = RULESET.apply(state, EndPhase("black"))
    assert state.phase is Phase.GAME_OVER
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.winner == "red" and outcome.reason == "GUARDS_ELIMINATED"
    assert events[-1].kind is EventKind.GAME_OVER and "Guards" in events[-1].text
    assert RULESET.legal_actions(state) == [] and RULESET.to_act(state) == ()
    assert code_of(state, EndPhase("black")) == "GAME_OVER"


def test_begin_redoubt_is_an_active_player_action() -> None:
    state = start(redoubt_build_turns="2")
    assert BeginRedoubt("red", "d4") in RULESET.legal_actions(state)
    assert code_of(state, BeginRedoubt("black", "d5")) == "NOT_YOUR_TURN"


def test_an_unknown_player_is_refused() -> None:
    assert code_of(start(), EndPhase("green")) == "NOT_YOUR_TURN"
