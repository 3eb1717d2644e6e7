"""What the deployments of 10.1, 10.2 and 10.6 report and refuse: each commitment, reveal,
seal and placement announced (without the secret array), the refusals naming their rule,
and who moves first once the arrays are laid out."""

from __future__ import annotations

import random

import pytest

from engine_service.rules.base import Event, EventKind, OutcomeReason
from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic.actions import Commit, Placements, Reveal, Seal
from engine_service.rules.napoleonic.deployment import (
    array_problems_for,
    commitment,
    random_deployment,
    random_player_array,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET, play_text
from tests.engine_service.rules.napoleonic.test_deployment import (
    BLACK,
    RED,
    SALT,
    SALT2,
    dawn,
    marching,
)


def told(events: list[Event]) -> list[tuple[EventKind, str, str | None]]:
    return [(e.kind, e.text, e.side) for e in events]


def test_10_1_commitments_and_reveals_are_announced_and_the_first_player_moves() -> None:
    state = dawn(first_player="black")
    state, events = play_text(RULESET, state, [f"red commit {RED} salt {SALT.hex()}"])
    assert told(events) == [
        (EventKind.DEPLOYMENT_COMMITTED, "Red commits to a secret deployment.", "red")
    ]
    state, events = play_text(RULESET, state, [f"black commit {BLACK} salt {SALT2.hex()}"])
    assert told(events) == [
        (EventKind.DEPLOYMENT_COMMITTED, "Black commits to a secret deployment.", "black"),
        (EventKind.PHASE_CHANGED, "Every player has committed: reveal the arrays.", None),
    ]
    state, events = play_text(RULESET, state, [f"red reveal {RED} salt {SALT.hex()}"])
    assert told(events) == [
        (
            EventKind.DEPLOYMENT_REVEALED,
            "Red reveals its deployment; it matches the commitment.",
            "red",
        )
    ]
    state, events = play_text(RULESET, state, [f"black reveal {BLACK} salt {SALT2.hex()}"])
    assert told(events)[1:] == [
        (EventKind.DEPLOYMENT_REVEALED, "Every deployment is revealed and laid out.", None),
        (EventKind.PHASE_CHANGED, "Deployment is complete: black moves first (movement).", "black"),
    ]
    assert len(events[1].cells) == 30  # the arrays are shown once both are laid out
    assert state.phase is Phase.MOVEMENT and state.active == "black"


def test_10_2_a_placement_names_the_unit_and_its_square() -> None:
    state = marching("board 8x8; army red: 1G; army black: 1G")
    state, events = play_text(RULESET, state, ["red place e2=G"])
    (event,) = events
    assert (event.kind, event.text, event.side) == (
        EventKind.PLACED,
        "Red places guards on e2.",
        "red",
    )
    assert (event.cells, event.piece, event.unit) == (("e2",), "guards", "R_G")


def test_10_2_a_placement_off_the_own_deployment_rows_is_refused_naming_them() -> None:
    state = marching("board 8x8; army red: 1G; army black: 1G", deployment_rows="2-3")
    state, _events = play_text(RULESET, state, ["red place e2=G"])
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, RULESET.parse_action(state, "place e4=G", "black"))
    assert error.value.reason == Reason.DEPLOYMENT_INVALID
    assert error.value.message == "e4 is not on black's deployment rows 2-3"


def three_way_committed() -> tuple[NapoleonicState, dict[str, tuple[Placements, bytes]]]:
    state = RULESET.new_game(
        RULESET.resolve_options({"scenario": "three_way", "deployment": "attack_at_dawn"})
    )
    arrays = {}
    for side in ("red", "black", "green"):
        placements, salt = random_player_array(state, side, 7)
        arrays[side] = (placements, salt)
        state, _events = RULESET.apply(state, Commit(side, commitment(placements, salt)))
    return state, arrays


def test_10_6_the_first_player_forfeiting_its_reveal_leaves_the_first_move_to_the_next() -> None:
    """A forfeit puts only that player out (10.6); play begins with the first player of the
    turn order still in the game, never with one who is out."""
    state, arrays = three_way_committed()
    state, events = RULESET.apply(state, Reveal("red", arrays["red"][0], bytes(32)))  # wrong salt
    assert told(events)[0] == (
        EventKind.PHASE_CHANGED,
        "red's revealed array and salt do not match its commitment, so red forfeits.",
        "red",
    )
    assert told(events)[1:] == [
        (EventKind.PHASE_CHANGED, "Red's army leaves the field.", "red"),
        (EventKind.PLAYER_OUT, "Red has forfeited its deployment and is out of the game.", "red"),
    ]
    for side in ("black", "green"):
        state, events = RULESET.apply(state, Reveal(side, *arrays[side]))
    assert told(events)[-1] == (
        EventKind.PHASE_CHANGED,
        "Deployment is complete: black moves first (movement).",
        "black",
    )
    assert state.phase is Phase.MOVEMENT and state.active == "black"
    assert RULESET.to_act(state) == ("black",)
    assert RULESET.check_state(state) == []


def test_10_1_a_random_player_who_cannot_open_its_commitment_reveals_a_legal_array() -> None:
    """A random player reveals what it committed to when it can (a small seed); when the
    commitment is not one of its own, it still reveals some legal array, and forfeits."""
    state, _events = play_text(
        RULESET,
        dawn(),
        [f"red commit {RED} salt {SALT.hex()}", f"black commit {BLACK} salt {SALT2.hex()}"],
    )
    action = random_deployment(state, "red", random.Random(3))
    assert isinstance(action, Reveal) and len(action.salt) == 32
    assert array_problems_for(state, "red", action.placements) == []
    state, _events = RULESET.apply(state, action)
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.reason is OutcomeReason.DEPLOYMENT_FORFEIT


def sealed_three_way() -> NapoleonicState:
    options = SEALED_RULESET.resolve_options(
        {
            "scenario": "three_way",
            "deployment": "attack_at_dawn",
            "attack_at_dawn_mode": "sealed",
        }
    )
    state = SEALED_RULESET.new_game(options)
    for side in ("red", "black"):
        placements, _salt = random_player_array(state, side, 7)
        state, _events = SEALED_RULESET.apply(state, Seal(side, placements))
    return state


def test_10_6_the_last_awaited_player_leaving_opens_the_sealed_arrays_with_the_key() -> None:
    state = sealed_three_way()
    with pytest.raises(RuleError) as error:
        RULESET.surrender(state, "green", OutcomeReason.RESIGNATION)
    assert error.value.reason == Reason.SEAL_KEY_UNAVAILABLE
    assert error.value.message == (
        "the sealed arrays cannot be opened here (no seal key, or withheld arrays)"
    )
    after = SEALED_RULESET.surrender(state, "green", OutcomeReason.RESIGNATION)
    assert after is not None and after.phase is Phase.MOVEMENT
    assert {u.side for u in after.units} == {"red", "black"}
