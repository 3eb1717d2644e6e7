"""What the `Ruleset` base class gives every game: turn checks and their messages, side
look-ups, perft, random actions, validation, the game-over check and option presets.

Most of it is checked on a small game written here (a race to a total of three, in which
both sides may act at once while `together` is set), so that every path of the base class
is reached; the option presets on The Game of War, which uses the base class's own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar

import pytest

from engine_service.rules import rulesets
from engine_service.rules.base import (
    BoardDescription,
    Event,
    Outcome,
    OutcomeReason,
    PieceView,
    Ruleset,
    SideInfo,
)
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.options import Options, OptionSpec

WAR = rulesets(bytes(range(32)))["war"]


@dataclass(frozen=True)
class Race:
    """The running total; `together`: both sides act now; `players`: who plays."""

    total: int = 0
    together: bool = False
    players: tuple[str, ...] = ("red", "blue")


@dataclass(frozen=True)
class Add:
    side: str
    amount: int


class RaceRules(Ruleset[Race, Add]):
    """Red acts on an even total, blue on an odd one (both while `together`), adding 1 or 2;
    the total reaching 3 ends the game, won by the side whose parity is not to act."""

    id = "race"
    title = "Race to three"
    sides = (SideInfo("red", "Red", "red"), SideInfo("blue", "Blue", "blue"))
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()

    def new_game(self, options: Options, setup: str | None = None, *, checked: bool = True) -> Race:
        return Race()

    def options_of(self, state: Race) -> Options:
        return self.resolve_options({})

    def setup_text(self, state: Race) -> str:
        return str(state.total)

    def _mover(self, state: Race) -> str:
        return ("red", "blue")[state.total % 2]

    def to_act(self, state: Race) -> tuple[str, ...]:
        if state.total >= 3:
            return ()
        return ("red", "blue") if state.together else (self._mover(state),)

    def legal_actions(self, state: Race) -> list[Add]:
        return [Add(side, n) for side in self.to_act(state) for n in (1, 2) if state.total + n <= 3]

    def apply(self, state: Race, action: Add) -> tuple[Race, list[Event]]:
        if action not in self.legal_actions(state):
            raise RuleError(Reason.ILLEGAL_ACTION, f"{action.side} cannot add {action.amount}")
        return self.play(state, action), []

    def play(self, state: Race, action: Add) -> Race:
        return Race(state.total + action.amount, state.together, state.players)

    def actor(self, state: Race, action: Add) -> str:
        return action.side

    def outcome(self, state: Race) -> Outcome | None:
        if state.total < 3:
            return None
        winner = ("blue", "red")[state.total % 2]
        return Outcome(winner, OutcomeReason.NO_LEGAL_MOVE, f"{winner} reached three")

    def format_action(self, state: Race, action: Add) -> str:
        return f"{action.side}+{action.amount}"

    def parse_action(self, state: Race, text: str, side: str | None = None) -> Add:
        who, amount = text.split("+")
        return Add(who, int(amount))

    def check_state(self, state: Race) -> list[str]:
        return []

    def pieces(self, state: Race) -> list[PieceView]:
        return []

    def describe(self, options: Options) -> BoardDescription:
        raise NotImplementedError

    def players_of(self, state: Race) -> tuple[str, ...]:
        return state.players


RULES = RaceRules()


# --- turns ------------------------------------------------------------------------------


def test_a_side_not_to_act_is_told_whose_turn_it_is() -> None:
    with pytest.raises(RuleError) as refusal:
        RULES.check_turn(Race(1), "red", Add("red", 1))
    assert refusal.value.reason is Reason.NOT_YOUR_TURN
    assert refusal.value.message == "it is not red's turn: blue to act"


def test_when_several_sides_act_the_refusal_names_them_all() -> None:
    with pytest.raises(RuleError) as refusal:
        RULES.check_turn(Race(1, together=True), "green", Add("green", 1))
    assert refusal.value.reason is Reason.NOT_YOUR_TURN
    assert refusal.value.message == "it is not green's turn: red and blue to act"


def test_a_side_to_act_cannot_act_for_another() -> None:
    with pytest.raises(RuleError) as refusal:
        RULES.check_turn(Race(0, together=True), "red", Add("blue", 1))
    assert refusal.value.reason is Reason.NOT_YOUR_TURN
    assert refusal.value.message == "red cannot act for blue"


def test_a_side_to_act_may_send_its_own_action() -> None:
    RULES.check_turn(Race(0), "red", Add("red", 2))
    RULES.check_turn(Race(0, together=True), "blue", Add("blue", 1))


# --- sides ------------------------------------------------------------------------------


def test_a_side_s_index_is_its_place_among_the_sides() -> None:
    assert RULES.side_index("red") == 0
    assert RULES.side_index("blue") == 1


def test_an_unknown_side_has_no_index_and_the_refusal_names_the_sides() -> None:
    with pytest.raises(RuleError) as refusal:
        RULES.side_index("green")
    assert refusal.value.reason is Reason.ILLEGAL_ACTION
    assert refusal.value.message == "unknown side 'green'; sides: red, blue"


def test_the_sides_remaining_are_the_players_of_that_game() -> None:
    assert RULES.remaining(Race(players=("red", "blue", "green"))) == ("red", "blue", "green")
    assert RULES.remaining(Race()) == ("red", "blue")


# --- play -------------------------------------------------------------------------------


def test_perft_of_depth_zero_counts_the_one_empty_sequence() -> None:
    assert RULES.perft(Race(), 0) == 1
    assert RULES.perft(Race(3), 0) == 1


def test_perft_counts_every_sequence_of_actions() -> None:
    # From 0: 1,1 / 1,2 / 2,1 reach three in two actions; 1,1,1 in three.
    assert RULES.perft(Race(), 1) == 2
    assert RULES.perft(Race(), 2) == 3
    assert RULES.perft(Race(), 3) == 1


def test_a_random_action_is_a_legal_one_and_none_once_the_game_is_over() -> None:
    rng = random.Random(7)
    for _ in range(10):
        assert RULES.random_action(Race(1), rng) in (Add("blue", 1), Add("blue", 2))
    assert RULES.random_action(Race(3), rng) is None


def test_validation_refuses_an_illegal_action_and_passes_a_legal_one() -> None:
    RULES.validate(Race(1), Add("blue", 2))
    with pytest.raises(RuleError) as refusal:
        RULES.validate(Race(2), Add("red", 2))
    assert refusal.value.reason is Reason.ILLEGAL_ACTION
    assert refusal.value.message == "red cannot add 2"


def test_an_ended_game_refuses_further_play_saying_how_it_ended() -> None:
    RULES.require_ongoing(Race(2))
    with pytest.raises(RuleError) as refusal:
        RULES.require_ongoing(Race(3))
    assert refusal.value.reason is Reason.GAME_OVER
    assert refusal.value.message == "the game is over: red reached three"


# --- options ----------------------------------------------------------------------------


def test_a_preset_s_values_are_read_into_the_options() -> None:
    assert WAR.read_options({}, None)["compulsion"] != "huff"
    assert WAR.read_options({}, "checkers_huff")["compulsion"] == "huff"
    assert WAR.resolve_options({}, "checkers_huff")["compulsion"] == "huff"


def test_an_unknown_preset_is_refused_naming_the_game_s_presets() -> None:
    with pytest.raises(RuleError) as refusal:
        WAR.read_options({}, "blitz")
    assert refusal.value.reason is Reason.UNKNOWN_PRESET
    assert refusal.value.message == (
        "unknown preset 'blitz'; presets: checkers_huff, rotated_north, savard_en_passant"
    )
