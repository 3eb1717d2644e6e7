"""The Game of War: the AI takes and holds Citadels and defends its own (section 9)."""

from __future__ import annotations

from engine_service.ai import suggest
from engine_service.ai.evaluation import WIN
from engine_service.ai.war import reach, static_value
from engine_service.rules.game import Game
from tests.engine_service.ai.helpers import RULES, new_state

RULESET = RULES["war"]


def best(setup: str, seconds: float = 1.0) -> tuple[str, float]:
    state = new_state("war", setup)
    found = suggest(Game(RULESET, state), side=None, seconds=seconds, seed=1)
    return RULESET.format_action(state, found.action), found.evaluation


def test_it_takes_the_king_on_the_enemy_citadel_when_nothing_can_retake() -> None:
    # North's King on his Citadel f10, nothing of North's reaches f10; a South Mortar on f5.
    notation, value = best("5k4/10/t9/10/10/5M4/10/10/10/4K5 S -:-")
    assert notation == "Mf5xf10"
    assert value >= WIN / 2


def test_it_takes_an_enemy_man_standing_on_its_own_citadel() -> None:
    # A North Horse on South's Citadel f1: South must take it at once (9), or lose.
    notation, value = best("5k4/10/10/10/10/10/10/9K/10/M4h4 S -:-")
    assert notation == "Ma1xf1"
    assert value > -WIN / 2


def test_it_parries_a_threat_to_enter_its_citadel() -> None:
    # North's General on f5 would enter the empty Citadel f1 and hold it.
    state = new_state("war", "5k4/10/10/10/10/5g4/10/K9/9M/10 S -:-")
    found = suggest(Game(RULESET, state), side=None, seconds=1.0, seed=1)
    after = RULESET.play(state, found.action)
    citadel = after.rules.citadels[0]
    for reply in RULESET.legal_actions(after):
        following = RULESET.play(after, reply)
        if following.board[citadel] and (following.board[citadel] - 1) >> 3 == 1:
            retakes = [a for a in RULESET.legal_actions(following) if a[-1] == citadel]
            assert retakes, f"after {RULESET.format_action(state, found.action)} North holds f1"


def test_reach_counts_the_men_that_could_enter_a_square() -> None:
    state = new_state("war", "5k4/10/10/10/10/5M4/10/10/10/4K5 S -:-")
    north_citadel = state.rules.citadels[1]
    assert reach(state.board, north_citadel, 0) == 1  # the Mortar up the f-file
    assert reach(state.board, north_citadel, 1) == 0  # the King on it cannot move onto it


def test_the_evaluation_is_symmetric_at_the_start() -> None:
    state = new_state("war")
    assert abs(static_value(state, 0) + static_value(state, 1)) < 1e-9
    assert abs(static_value(state, 0)) < 1.0
