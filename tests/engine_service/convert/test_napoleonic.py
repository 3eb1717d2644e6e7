"""Napoleonic Chess states and actions through the contract's messages and back.

Round trips on positions of random games in every phase (deployments included), and
malformed states from the wire refused with INVALID_STATE naming the field at fault.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from engine_service.convert.base import Conversions
from engine_service.convert.napoleonic import NapoleonicConverter
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, Resign
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    Commit,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Reveal,
    Seal,
    Support,
)
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from wargame.v1 import game_pb2, napoleonic_pb2

RULESET = NapoleonicRuleset(seal_key=b"converter tests key")
CONVERSIONS = Conversions({"napoleonic": NapoleonicConverter(RULESET)})


def _structured(game: Game[Any]) -> game_pb2.GameState:
    """The state in its structured form alone (as clients before positions send it)."""
    message = CONVERSIONS.game_to_proto(game)
    message.ClearField("position")
    return message


CONFIGS = {
    "standard": {"auto_skip_defence": "false", "turn_limit": "20"},
    "terrain": {
        "scenario": "hill_and_stream",
        "turn_limit": "30",
        "split_two_square_moves": "true",
    },
    "commit_reveal": {"scenario": "attack_at_dawn", "turn_limit": "4"},
    "sealed": {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed", "turn_limit": "4"},
    "marching": {"scenario": "marching_orders", "turn_limit": "4", "placements_per_turn": "2"},
    "repetition": {"preset": "ranked", "turn_limit": "12"},
    "grand": {"scenario": "grand_battle", "turn_limit": "6"},
}


@cache
def playout(config: str, seed: int = 0) -> list[Game[NapoleonicState]]:
    """Every game of a random playout (games are immutable, so shared)."""
    given = dict(CONFIGS[config])
    preset = given.pop("preset", None)
    game: Game[NapoleonicState] = Game(
        RULESET, RULESET.new_game(RULESET.resolve_options(given, preset))
    )
    rng = random.Random(f"{config}-{seed}")
    games = [game]
    while game.outcome is None:
        action = RULESET.random_action(game.state, rng)
        assert action is not None
        game, _ = game.apply(action.side, action)
        games.append(game)
    return games


def round_trip(game: Game[NapoleonicState], ply: int = 3) -> Game[NapoleonicState]:
    message = CONVERSIONS.game_to_proto(replace(game, ply=ply))
    message.ClearField("position")  # the structured form, as clients before positions
    wire = game_pb2.GameState.FromString(message.SerializeToString())
    back = CONVERSIONS.game_from_proto(wire)
    assert back.ply == ply
    return back


@pytest.mark.parametrize("config", list(CONFIGS))
def test_states_round_trip_in_every_phase(config: str) -> None:
    phases: set[Phase] = set()
    for game in playout(config):
        back = round_trip(game)
        assert back.state == game.state and back.outcome == game.outcome
        assert back.to_act() == game.to_act()
        phases.add(game.state.phase)
    expected = {
        "commit_reveal": {Phase.DEPLOY_COMMIT, Phase.DEPLOY_REVEAL},
        "sealed": {Phase.DEPLOY_SEALED},
        "marching": {Phase.PLACEMENT},
    }.get(config, {Phase.MOVEMENT, Phase.ATTACK_DECLARATION, Phase.DEFENCE, Phase.ADVANCE})
    assert expected <= phases


def test_a_resigned_game_round_trips() -> None:
    game = playout("standard")[5]
    over, _ = game.apply("black", Resign("black"))
    back = round_trip(over)
    assert back.outcome == over.outcome and back.state == over.state


def test_every_action_round_trips() -> None:
    placements = (("a2", "artillery"), ("b3", "infantry"))
    actions: list[NapoleonicAction] = [
        Move("red", "R_C1", "d4"),
        EndPhase("black"),
        Attack("red", "R_A", "B_I"),
        Support("black", "B_I2", "B_I"),
        Advance("red", "R_A", "d5"),
        BeginRedoubt("red", "d4"),
        Commit("red", bytes(range(32))),
        Reveal("black", placements, bytes(range(32, 64))),
        Seal("red", placements),
        Place("black", "cuirassiers", "c6"),
    ]
    game: Game[NapoleonicState] = Game(RULESET, RULESET.new_game(RULESET.resolve_options({})))
    for action in actions:
        message = CONVERSIONS.action_to_proto(game, action)
        assert message.side == action.side
        wire = game_pb2.Action.FromString(message.SerializeToString())
        assert CONVERSIONS.action_from_proto(game, wire) == action


def test_malformed_actions_are_refused() -> None:
    game: Game[NapoleonicState] = Game(RULESET, RULESET.new_game(RULESET.resolve_options({})))
    empty = game_pb2.Action(side="red", napoleonic=napoleonic_pb2.NapoleonicAction())
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, empty)
    assert error.value.field == "action.napoleonic.kind"
    bad = game_pb2.Action(side="red")
    bad.napoleonic.seal.placements.add(unit_type="tanks", cell="a2")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.action_from_proto(game, bad)
    assert error.value.field == "action.napoleonic.seal.placements[0].unit_type"


# --- malformed states ----------------------------------------------------------------------------


def message_of(config: str, phase: Phase) -> game_pb2.GameState:
    for game in playout(config):
        if game.state.phase is phase:
            return _structured(game)
    raise AssertionError(f"no {phase} position in {config}")


def _second_piece_on_first(m: game_pb2.GameState) -> None:
    m.pieces[1].cell = m.pieces[0].cell


def _add_extra_guards(m: game_pb2.GameState) -> None:
    m.pieces.add(kind="guards", side="red", cell="d4", id="R_G2")


def _add_reveal(m: game_pb2.GameState) -> None:
    item = m.napoleonic.deployment.reveals.add(player="red")
    item.placements.add(unit_type="infantry", cell="a3")


def _add_sealed(m: game_pb2.GameState) -> None:
    m.napoleonic.deployment.sealed.add(player="red", ciphertext=b"x" * 40)


def _add_commitment(m: game_pb2.GameState) -> None:
    m.napoleonic.deployment.commitments.add(player="black", hash=b"y" * 32)


Mutation = Callable[[game_pb2.GameState], Any]
MALFORMED: list[tuple[str, str, Phase, Mutation, str]] = [
    (
        "unknown cell",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.pieces[0], "cell", "z9"),
        "state.pieces[0].cell",
    ),
    (
        "unknown unit type",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.pieces[0], "kind", "tank"),
        "state.pieces[0].kind",
    ),
    (
        "unknown side",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.pieces[0], "side", "green"),
        "state.pieces[0].side",
    ),
    (
        "two units on a square",
        "standard",
        Phase.MOVEMENT,
        _second_piece_on_first,
        "state.pieces[1].cell",
    ),
    (
        "duplicate ids",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.pieces[1], "id", m.pieces[0].id),
        "state.pieces[1].id",
    ),
    (
        "a count beyond the army",
        "standard",
        Phase.MOVEMENT,
        _add_extra_guards,
        "state.pieces[30].kind",
    ),
    (
        "no phase",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "phase", 0),
        "state.napoleonic.phase",
    ),
    (
        "an unknown phase",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "phase", 42),
        "state.napoleonic.phase",
    ),
    (
        "a phase the game does not have",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "phase", napoleonic_pb2.NAPOLEONIC_PHASE_PLACEMENT),
        "state.napoleonic.phase",
    ),
    (
        "a commit phase in sealed mode",
        "sealed",
        Phase.DEPLOY_SEALED,
        lambda m: setattr(m.napoleonic, "phase", napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT),
        "state.napoleonic.phase",
    ),
    (
        "plaintext arrays in sealed mode",
        "sealed",
        Phase.DEPLOY_SEALED,
        _add_reveal,
        "state.napoleonic.deployment.reveals",
    ),
    (
        "commitments in sealed mode",
        "sealed",
        Phase.DEPLOY_SEALED,
        _add_commitment,
        "state.napoleonic.deployment.commitments",
    ),
    (
        "reveals during the commit phase",
        "commit_reveal",
        Phase.DEPLOY_COMMIT,
        _add_reveal,
        "state.napoleonic.deployment.reveals",
    ),
    (
        "sealed data in commit_reveal mode",
        "commit_reveal",
        Phase.DEPLOY_REVEAL,
        _add_sealed,
        "state.napoleonic.deployment.sealed",
    ),
    (
        "sealed data in Marching Orders",
        "marching",
        Phase.PLACEMENT,
        _add_sealed,
        "state.napoleonic.deployment.sealed",
    ),
    (
        "deployment data in play",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic.deployment, "mode", "sealed"),
        "state.napoleonic.deployment",
    ),
    (
        "no deployment data in a deployment phase",
        "marching",
        Phase.PLACEMENT,
        lambda m: m.napoleonic.ClearField("deployment"),
        "state.napoleonic.deployment",
    ),
    (
        "a wrong deployment mode",
        "marching",
        Phase.PLACEMENT,
        lambda m: setattr(m.napoleonic.deployment, "mode", "commit_reveal"),
        "state.napoleonic.deployment.mode",
    ),
    (
        "an unknown player",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic.players[1], "id", "green"),
        "state.napoleonic.players[1]",
    ),
    (
        "an unknown active player",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "active_player", "green"),
        "state.napoleonic.active_player",
    ),
    (
        "a board too large",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "width", 40),
        "state.napoleonic.width",
    ),
    (
        "another scenario",
        "standard",
        Phase.MOVEMENT,
        lambda m: setattr(m.napoleonic, "scenario", "grand_battle"),
        "state.napoleonic.scenario",
    ),
    (
        "an unknown army type",
        "standard",
        Phase.MOVEMENT,
        lambda m: m.napoleonic.armies[0].unit_types.append("tank"),
        "state.napoleonic.armies[0].unit_types[15]",
    ),
    (
        "an obstacle off an edge",
        "terrain",
        Phase.MOVEMENT,
        lambda m: m.napoleonic.terrain.obstacles.add(a="a1", b="c3"),
        "state.napoleonic.terrain.obstacles[4]",
    ),
    (
        "a hill off the board",
        "terrain",
        Phase.MOVEMENT,
        lambda m: m.napoleonic.terrain.hills.append("q3"),
        "state.napoleonic.terrain.hills[2]",
    ),
    (
        "a split move from nowhere",
        "terrain",
        Phase.MOVEMENT,
        lambda m: m.napoleonic.turn.split_moves.add(unit="R_C1", origin="z1"),
        "state.napoleonic.turn.split_moves[0].origin",
    ),
]


@pytest.mark.parametrize(
    ("config", "phase", "mutate", "field"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_states_are_refused_naming_the_field(
    config: str, phase: Phase, mutate: Mutation, field: str
) -> None:
    message = message_of(config, phase)
    mutate(message)
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(message)
    assert error.value.reason == "INVALID_STATE"
    assert error.value.field == field, error.value.message


def test_game_over_needs_its_outcome() -> None:
    games = playout("standard")
    final = games[-1]
    assert final.state.phase is Phase.GAME_OVER
    message = _structured(final)
    message.ClearField("outcome")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(message)
    assert error.value.reason == "INVALID_STATE" and error.value.field == "state.outcome"


def test_rule_level_problems_are_all_reported() -> None:
    message = message_of("standard", Phase.MOVEMENT)
    message.napoleonic.turn.attacks.add(attacker="R_A1", target="B_I1")
    message.napoleonic.turn.supports.add(supporter="B_I2", supported="B_I1")
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(message)
    assert error.value.reason == "INVALID_STATE" and error.value.field == "state"
    assert "attacks, supports or vacancies during movement" in error.value.message
    assert "supports before the defence phase" in error.value.message


def test_a_forged_sealed_array_is_refused() -> None:
    message = message_of("sealed", Phase.DEPLOY_SEALED)
    if not message.napoleonic.deployment.sealed:
        _add_sealed(message)
    else:
        message.napoleonic.deployment.sealed[0].ciphertext = b"forged" * 10
    with pytest.raises(RuleError) as error:
        CONVERSIONS.game_from_proto(message)
    assert error.value.reason == "INVALID_STATE" and "does not open" in error.value.message
