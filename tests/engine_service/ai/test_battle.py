"""The Game of Battle: the AI takes the Citadel or the Wagon and defends its own (9)."""

from __future__ import annotations

from engine_service.ai import suggest
from engine_service.ai.battle import DISTANCE, static_value
from engine_service.ai.evaluation import WIN
from engine_service.rules.battle.board import cell_of
from engine_service.rules.game import Game
from tests.engine_service.ai.helpers import RULES, new_state

RULESET = RULES["battle"]


def best(setup: str) -> tuple[str, float]:
    state = new_state("battle", setup)
    found = suggest(Game(RULESET, state), side=None, seconds=1.0, seed=1)
    return RULESET.format_action(state, found.action), found.evaluation


def test_the_attacker_takes_the_citadel() -> None:
    notation, value = best("attacker to move; attacker: W129 C35 L101; defender: T19 I7 L45")
    assert notation == "35x19"
    assert value >= WIN / 2


def test_the_defender_takes_the_wagon() -> None:
    notation, value = best("defender to move; attacker: W129 L101 I90; defender: T19 C113")
    assert notation == "113x129"
    assert value >= WIN / 2


def test_the_defender_parries_a_threat_to_the_citadel() -> None:
    state = new_state("battle", "defender to move; attacker: W129 C35 L101; defender: T19 I4")
    found = suggest(Game(RULESET, state), side=None, seconds=1.0, seed=1)
    after = RULESET.play(state, found.action)
    takes = [
        m for m in RULESET.legal_actions(after) if RULESET.format_action(after, m).endswith("x19")
    ]
    assert not takes, f"after {RULESET.format_action(state, found.action)}: {takes}"


def test_distances_cross_the_river_only_at_the_fords_and_the_bridge() -> None:
    # 39 and 54 touch across the river (2.3): the way round goes through ford 47.
    assert DISTANCE[cell_of("39")][cell_of("54")] == 2
    assert DISTANCE[cell_of("19")][cell_of("19")] == 0


def test_the_evaluation_is_symmetric() -> None:
    state = new_state("battle")
    assert abs(static_value(state, 0) + static_value(state, 1)) < 1e-9
