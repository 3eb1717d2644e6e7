"""Deployments (spec 10.1, 10.2): Attack at Dawn in both modes, and Marching Orders."""

from __future__ import annotations

import base64
import hashlib
import random

import pytest

from engine_service.rules.base import EventKind, OutcomeReason
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.actions import Commit, Place, Reveal
from engine_service.rules.napoleonic.deployment import commitment
from engine_service.rules.napoleonic.setup import canonical_array_text
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET, play_text

RED = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
RED_SHUFFLED = "h3=I a3=I b2=C c2=C e2=G f2=C g2=C h2=A a2=A b3=I c3=I d3=I e3=I f3=I g3=I"
RED_OTHER = "a3=A b3=C c3=C e3=G f3=C g3=C h3=A a2=I b2=I c2=I d2=I e2=I f2=I g2=I h2=I"
BLACK = "a7=A b7=C c7=C e7=G f7=C g7=C h7=A a6=I b6=I c6=I d6=I e6=I f6=I g6=I h6=I"
SALT = bytes(range(32))
SALT2 = bytes(range(100, 132))


def dawn(ruleset: NapoleonicRuleset = RULESET, /, **options: str) -> NapoleonicState:
    return ruleset.new_game(ruleset.resolve_options({"scenario": "attack_at_dawn", **options}))


# --- the canonical text and the commitment ---------------------------------------------------


def test_canonical_array_text_is_sorted_by_rank_then_file_without_ids() -> None:
    state = dawn()
    commit = RULESET.parse_action(state, f"commit {RED_SHUFFLED} salt {SALT.hex()}", "red")
    expected_text = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
    expected = hashlib.sha256(expected_text.encode("ascii") + SALT).digest()
    assert commit == Commit("red", expected)
    with_ids = RULESET.parse_action(state, f"commit a2=A#X1 {RED[5:]} salt {SALT.hex()}", "red")
    assert with_ids == commit
    assert canonical_array_text(
        (("b10", "infantry"), ("a2", "artillery"), ("c2", "horse_artillery"))
    ) == ("a2=A c2=H b10=I")


def test_the_engine_refuses_to_commit_an_illegal_array() -> None:
    with pytest.raises(RuleError) as error:
        RULESET.parse_action(dawn(), f"commit {BLACK} salt {SALT.hex()}", "red")
    assert error.value.reason == "DEPLOYMENT_INVALID"
    assert "a7 is not on red's deployment rows" in error.value.message


# --- commit_reveal -----------------------------------------------------------------------------


def committed(**options: str) -> NapoleonicState:
    state, _ = play_text(
        RULESET,
        dawn(**options),
        [f"black commit {BLACK} salt {SALT2.hex()}", f"red commit {RED} salt {SALT.hex()}"],
    )
    return state


def test_commit_then_reveal_lays_out_both_arrays() -> None:
    state = dawn()
    assert state.phase is Phase.DEPLOY_COMMIT and state.units == ()
    assert RULESET.to_act(state) == ("red", "black")
    assert RULESET.legal_actions(state) == []
    state, events = play_text(RULESET, state, [f"black commit {BLACK} salt {SALT2.hex()}"])
    assert RULESET.to_act(state) == ("red",) and events[0].kind is EventKind.DEPLOYMENT_COMMITTED
    state, events = play_text(RULESET, state, [f"red commit {RED} salt {SALT.hex()}"])
    assert state.phase is Phase.DEPLOY_REVEAL and RULESET.to_act(state) == ("red", "black")
    state, _ = play_text(RULESET, state, [f"red reveal {RED_SHUFFLED} salt {SALT.hex()}"])
    assert RULESET.to_act(state) == ("black",) and state.units == ()
    state, events = play_text(RULESET, state, [f"black reveal {BLACK} salt {SALT2.hex()}"])
    assert state.phase is Phase.MOVEMENT and state.active == "red" and state.deployment is None
    standard = RULESET.new_game(RULESET.resolve_options({}))
    assert state.units == standard.units  # the engine's ids match the standard set-up's
    assert EventKind.DEPLOYMENT_REVEALED in [e.kind for e in events]


def test_a_reveal_that_does_not_match_forfeits() -> None:
    state = committed()
    state, events = play_text(RULESET, state, [f"red reveal {RED_OTHER} salt {SALT.hex()}"])
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.winner == "black"
    assert outcome.reason is OutcomeReason.DEPLOYMENT_FORFEIT
    assert state.phase is Phase.GAME_OVER and events[-1].kind is EventKind.GAME_OVER
    assert RULESET.legal_actions(state) == [] and RULESET.to_act(state) == ()


def test_a_wrong_salt_forfeits_too() -> None:
    state, _ = play_text(RULESET, committed(), [f"black reveal {BLACK} salt {SALT.hex()}"])
    outcome = RULESET.outcome(state)
    assert outcome is not None and outcome.winner == "red"


ILLEGAL = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I a4=I"


@pytest.mark.parametrize(
    ("rule", "phase"), [("forfeit", Phase.GAME_OVER), ("redeploy", Phase.DEPLOY_COMMIT)]
)
def test_an_honest_but_illegal_reveal(rule: str, phase: Phase) -> None:
    state = dawn(illegal_reveal=rule)
    placements = tuple(
        (
            item.split("=")[0],
            {"A": "artillery", "C": "cavalry", "G": "guards", "I": "infantry"}[item[-1]],
        )
        for item in ILLEGAL.split()
    )
    digest = hashlib.sha256(canonical_array_text(placements).encode() + SALT).digest()
    state, _ = play_text(
        RULESET,
        state,
        [f"red commit {digest.hex()}", f"black commit {BLACK} salt {SALT2.hex()}"],
    )
    state, events = play_text(RULESET, state, [f"red reveal {ILLEGAL} salt {SALT.hex()}"])
    assert state.phase is phase
    assert "a4 is not on red's deployment rows" in events[0].text
    if rule == "redeploy":
        assert state.deployment is not None and state.deployment.commitments == ()
        assert RULESET.outcome(state) is None
    else:
        outcome = RULESET.outcome(state)
        assert outcome is not None and outcome.winner == "black"


def test_a_side_deploys_once() -> None:
    state, _ = play_text(RULESET, dawn(), [f"red commit {RED} salt {SALT.hex()}"])
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, Commit("red", commitment((), SALT)))
    assert error.value.reason == "ALREADY_DEPLOYED"
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, Reveal("black", (), SALT))
    assert error.value.reason == "WRONG_PHASE"


def test_random_players_reveal_what_they_committed() -> None:
    rng = random.Random(7)
    state = dawn()
    while state.phase is not Phase.MOVEMENT:
        action = RULESET.random_action(state, rng)
        assert action is not None
        state, _ = RULESET.apply(state, action)
        assert RULESET.outcome(state) is None
    assert len(state.units) == 30


# --- sealed ------------------------------------------------------------------------------------


def test_sealed_mode_needs_the_engine_key() -> None:
    options = RULESET.resolve_options(
        {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    )
    with pytest.raises(RuleError) as error:
        RULESET.new_game(options)
    assert error.value.reason == "SEAL_KEY_UNAVAILABLE"
    assert error.value.field == "options.attack_at_dawn_mode"
    state = SEALED_RULESET.new_game(options)
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, RULESET.parse_action(state, f"seal {RED}", "red"))
    assert error.value.reason == "SEAL_KEY_UNAVAILABLE"


def test_sealed_arrays_stay_secret_until_both_are_in() -> None:
    state = dawn(SEALED_RULESET, attack_at_dawn_mode="sealed")
    assert state.phase is Phase.DEPLOY_SEALED
    seal = SEALED_RULESET.parse_action(state, f"seal {RED}", "red")
    assert SEALED_RULESET.format_action(state, seal) == f"seal {RED}"
    state, events = SEALED_RULESET.apply(state, seal)
    (event,) = events
    assert event.kind is EventKind.DEPLOYMENT_SEALED and event.cells == ()
    assert "=" not in event.text and "a2" not in event.text
    assert state.units == () and state.deployment is not None
    ((player, data),) = state.deployment.sealed
    assert player == "red" and b"a2=A" not in data
    # The state as printed, less the ciphertext itself (random bytes may spell anything).
    written = base64.urlsafe_b64encode(data).decode().rstrip("=")
    shown = SEALED_RULESET.setup_text(state)
    assert repr(data) in repr(state) and written in shown
    printed = repr(state).replace(repr(data), "") + shown.replace(written, "")
    assert "a2=A" not in printed and "b2" not in printed
    # Every legal array of an army seals to the same length: nothing leaks by size.
    other = SEALED_RULESET.apply(
        dawn(SEALED_RULESET, attack_at_dawn_mode="sealed"),
        SEALED_RULESET.parse_action(state, f"seal {RED_OTHER}", "red"),
    )[0]
    assert other.deployment is not None and len(other.deployment.sealed[0][1]) == len(data)
    state, events = SEALED_RULESET.apply(
        state, SEALED_RULESET.parse_action(state, f"seal {BLACK}", "black")
    )
    assert state.phase is Phase.MOVEMENT and len(state.units) == 30
    assert state.deployment is None
    assert EventKind.DEPLOYMENT_REVEALED in [e.kind for e in events]


def test_sealing_refuses_an_illegal_array_at_once() -> None:
    state = dawn(SEALED_RULESET, attack_at_dawn_mode="sealed")
    with pytest.raises(RuleError) as error:
        SEALED_RULESET.apply(state, SEALED_RULESET.parse_action(state, f"seal {BLACK}", "red"))
    assert error.value.reason == "DEPLOYMENT_INVALID"


def test_a_tampered_ciphertext_is_detected() -> None:
    state = dawn(SEALED_RULESET, attack_at_dawn_mode="sealed")
    state, _ = SEALED_RULESET.apply(state, SEALED_RULESET.parse_action(state, f"seal {RED}", "red"))
    assert state.deployment is not None
    ((player, data),) = state.deployment.sealed
    forged = state.evolve(
        deployment=type(state.deployment)(
            "sealed", sealed=((player, data[:-1] + bytes([data[-1] ^ 1])),)
        )
    )
    assert any("does not open" in p for p in SEALED_RULESET.check_state(forged))
    other_key = NapoleonicRuleset(seal_key=b"another key")
    assert any("does not open" in p for p in other_key.check_state(state))
    with pytest.raises(RuleError) as error:
        SEALED_RULESET.apply(forged, SEALED_RULESET.parse_action(forged, f"seal {BLACK}", "black"))
    assert error.value.reason == "INVALID_STATE"


# --- Marching Orders ----------------------------------------------------------------------------


def marching(setup: str | None = None, **options: str) -> NapoleonicState:
    return RULESET.new_game(
        RULESET.resolve_options({"scenario": "marching_orders", **options}), setup
    )


def test_players_place_alternately() -> None:
    state = marching()
    assert state.phase is Phase.PLACEMENT and RULESET.to_act(state) == ("red",)
    places = RULESET.legal_actions(state)
    assert len(places) == 4 * 16 and all(isinstance(a, Place) for a in places)
    state, events = play_text(RULESET, state, ["red place e2=G"])
    assert state.by_id()["R_G"].cell == state.geo.index["e2"]
    assert events[0].kind is EventKind.PLACED and RULESET.to_act(state) == ("black",)
    state, _ = play_text(RULESET, state, ["black place d7=I", "red place a3=I"])
    assert {u.id for u in state.units} == {"R_G", "B_I1", "R_I1"}


def test_placements_per_turn_and_first_placer() -> None:
    state = marching(placements_per_turn="2", first_placer="black")
    assert RULESET.to_act(state) == ("black",)
    state, _ = play_text(RULESET, state, ["black place a7=A"])
    assert RULESET.to_act(state) == ("black",)
    state, _ = play_text(RULESET, state, ["black place b7=A"])
    assert RULESET.to_act(state) == ("red",)


def test_the_other_side_places_the_rest_then_play_begins() -> None:
    setup = "board 8x8; army red: 1G; army black: 1G 2I"
    state = marching(setup)
    state, _ = play_text(RULESET, state, ["red place e2=G", "black place e7=G"])
    assert RULESET.to_act(state) == ("black",)
    state, events = play_text(RULESET, state, ["black place d6=I", "black place e6=I"])
    assert state.phase is Phase.MOVEMENT and state.active == "red" and state.deployment is None
    assert events[-1].kind is EventKind.PHASE_CHANGED


def test_placement_refusals() -> None:
    state = marching("board 8x8; army red: 1G 1I; army black: 1G")
    for text, reason in (
        ("place d4=I", "DEPLOYMENT_INVALID"),
        ("place d2=C", "DEPLOYMENT_INVALID"),
        ("place d9=I", "DESTINATION_OFF_BOARD"),
    ):
        with pytest.raises(RuleError) as error:
            RULESET.apply(state, RULESET.parse_action(state, text, "red"))
        assert error.value.reason == reason, text
    state, _ = play_text(RULESET, state, ["red place d2=I", "black place e7=G"])
    with pytest.raises(RuleError) as error:
        RULESET.apply(state, Place("red", "guards", "d2"))
    assert error.value.reason == "DESTINATION_OCCUPIED"


def test_deployment_rows_of_a_larger_battle() -> None:
    state = RULESET.new_game(
        RULESET.resolve_options({"scenario": "grand_battle", "deployment": "marching_orders"})
    )
    cells = {a.cell for a in RULESET.legal_actions(state) if isinstance(a, Place)}
    assert cells == {f"{f}{r}" for f in "abcdefghijkl" for r in (2, 3, 4)}
    game = Game(RULESET, state)
    assert game.to_act() == ("red",)


def test_public_notation_hides_secret_arrays() -> None:
    """The service shows other players this form until the arrays are laid out (10.1)."""
    from engine_service.rules.napoleonic.actions import Reveal, Seal

    state = RULESET.new_game(RULESET.resolve_options({}))
    placements = (("infantry", "a3"),)
    for action in (Seal("red", placements), Reveal("red", placements, bytes(32))):
        public = RULESET.public_notation(state, action)
        assert public is not None and "a3" not in public and "00" * 4 not in public
    move = RULESET.legal_actions(state)[0]
    assert RULESET.public_notation(state, move) is None  # nothing hidden: others see it all


@pytest.mark.parametrize("deployment", ["attack_at_dawn", "marching_orders"])
def test_deployment_rows_that_cannot_hold_an_army_are_refused_when_the_game_is_made(
    deployment: str,
) -> None:
    """Rows 2-2 give each side 8 squares for its 15 units (10.5): nobody could deploy, so
    the game is refused with the option named, never started to stand still."""
    options = {"scenario": "attack_at_dawn", "deployment_rows": "2-2"}
    if deployment == "marching_orders":
        options["deployment"] = "marching_orders"
    with pytest.raises(RuleError) as refused:
        RULESET.new_game(RULESET.resolve_options(options))
    assert refused.value.reason == "INVALID_OPTION_VALUE"
    assert refused.value.field == "options.deployment_rows"
    assert refused.value.message == (
        "option deployment_rows: '2-2' give red 8 squares for an army of 15 units; "
        "allowed: rows that hold every army, e.g. 2-3"
    )
    assert dawn(deployment_rows="2-3").phase is Phase.DEPLOY_COMMIT  # 16 squares hold 15
