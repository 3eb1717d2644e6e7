"""Napoleonic Chess: the turn planner wins combats against the best defence (spec 7)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from engine_service.ai import evaluate, suggest
from engine_service.ai.budget import Budget
from engine_service.ai.napoleonic import (
    Fight,
    best_allocation,
    clear_plans,
    judge,
)
from engine_service.ai.napoleonic.allocation import fights
from engine_service.ai.napoleonic.planner import Planner
from engine_service.rules.game import Game
from engine_service.rules.napoleonic.actions import Attack, EndPhase, Support
from engine_service.rules.napoleonic.combat import legal_supports, tally
from engine_service.rules.napoleonic.state import Phase, Unit
from tests.engine_service.ai.helpers import RULES, new_state, random_action, random_position

RULESET = RULES["napoleonic"]
# Black's Guards on e5, supported from e6; Red can bring 4 against 3, or cut the support.
GUARDS_EXPOSED = (
    "board 8x8; red: a1=G#R_G e3=A#R_A d4=I#R_I f3=C#R_C; black: e5=G#B_G e6=I#B_I h8=I#B_J"
)


def follow(state: Any, sides: tuple[str, ...], until_turn: int) -> Any:
    """Play the AI's suggestions for every side in `sides` until the turn number changes."""
    for _ in range(100):
        if RULESET.outcome(state) is not None or state.turn_number != until_turn:
            return state
        side = RULESET.to_act(state)[0]
        assert side in sides
        action = suggest(Game(RULESET, state), side=side, seconds=1.0, seed=3).action
        state = RULESET.play(state, action)
    raise AssertionError("the turn did not end")


def test_a_planned_attack_eliminates_the_guards_against_the_best_defence() -> None:
    state = new_state("napoleonic", GUARDS_EXPOSED)
    first = suggest(Game(RULESET, state), side="red", seconds=1.0, seed=3)
    assert first.evaluation >= 500  # the Guards' fall is in the plan
    assert any(text.startswith("attack") and text.endswith(">e5") for text in first.line)
    after = follow(state, ("red", "black"), state.turn_number)
    outcome = RULESET.outcome(after)
    assert outcome is not None and outcome.winner == "red"


def test_the_defender_supports_its_guards() -> None:
    setup = "board 8x8; red: a1=G#R_G e4=A#R_A d5=I#R_I; black: e5=G#B_G e6=I#B_I f8=I#B_J"
    state = new_state("napoleonic", setup, auto_skip_defence="false")
    for action in (Attack("red", "R_A", "B_G"), Attack("red", "R_I", "B_G"), EndPhase("red")):
        state = RULESET.play(state, action)
    assert state.phase is Phase.DEFENCE
    found = suggest(Game(RULESET, state), side="black", seconds=1.0, seed=1)
    assert found.action == Support("black", "B_I", "B_G")
    assert found.line == ["support e6>e5", "end"]


def test_the_plan_goes_on_where_it_left_off() -> None:
    clear_plans()
    state = new_state("napoleonic")
    first = suggest(Game(RULESET, state), side="red", seconds=0.05, seed=5)
    assert len(first.line) >= 2
    state = RULESET.play(state, first.action)
    second = suggest(Game(RULESET, state), side="red", seconds=0.05, seed=5)
    assert second.line == first.line[1:]
    clear_plans()  # a fresh process plans the same turn again
    again = suggest(Game(RULESET, new_state("napoleonic")), side="red", seconds=0.05, seed=5)
    assert again.line == first.line


def test_the_best_allocation_saves_the_guards_first() -> None:
    def unit(uid: str, cell: int) -> Unit:
        return Unit(uid, "black", "infantry", cell)

    helper = unit("S", 1)
    guards = Fight(unit("G", 2), attack=3, defence=2, supporters=[(helper, 1)], value=1000.0)
    other = Fight(unit("I", 3), attack=2, defence=1, supporters=[(helper, 1)], value=1.0)
    verdict = best_allocation([other, guards])
    assert [u.id for u in verdict.eliminated] == ["I"]
    assert [(s.id, t.id) for s, t in verdict.allocation] == [("S", "G")]
    assert verdict.lost == 1.0


def test_ties_survive() -> None:
    state = new_state("napoleonic", GUARDS_EXPOSED)
    units = state.by_id()
    artillery = Unit("R_A", "red", "artillery", state.geo.index["e4"])
    verdict = judge(state, [(artillery, units["B_G"])])
    assert verdict.eliminated == []  # 2 against 2 (+1 support): no elimination


def test_deployment_phases_are_played_through() -> None:
    for deployment in ("marching_orders", "attack_at_dawn"):
        state = new_state("napoleonic", deployment=deployment)
        rng = random.Random(2)
        for _ in range(80):
            if state.phase is Phase.MOVEMENT:
                break
            to_act = RULESET.to_act(state)
            if "red" in to_act:
                action = suggest(Game(RULESET, state), side="red", seconds=0.05, seed=8).action
                RULESET.validate(state, action)
            else:
                action = random_action(RULESET, state, rng)
            state = RULESET.play(state, action)
        assert state.phase is Phase.MOVEMENT, deployment
        assert RULESET.outcome(state) is None


def test_the_registered_evaluation_is_symmetric_at_the_start() -> None:
    state = new_state("napoleonic")
    red = evaluate(RULESET, state, "red", None)
    black = evaluate(RULESET, state, "black", None)
    assert abs(red + black) < 1e-9


@pytest.mark.parametrize("scenario", ["grand_battle_2v2", "divided_command"])
def test_allies_count_as_one_side_in_the_evaluation(scenario: str) -> None:
    # Rule 10.6: an alliance wins together. At the symmetric start every seat is even, and
    # at any position allies see the same value and the enemies its opposite.
    state = new_state("napoleonic", scenario=scenario)
    for side in ("red", "black", "blue", "green"):
        assert abs(evaluate(RULESET, state, side, None)) < 1e-9, side
    rng = random.Random(scenario)
    for _ in range(60):
        state = RULESET.play(state, random_action(RULESET, state, rng))
        if RULESET.outcome(state) is not None:
            break
        red, blue = (evaluate(RULESET, state, side, None) for side in ("red", "blue"))
        black, green = (evaluate(RULESET, state, side, None) for side in ("black", "green"))
        assert red == pytest.approx(blue) and black == pytest.approx(green)
        assert red == pytest.approx(-black)


# Every enemy of the south is down to its Guards, far off; red's army stands by its own.
STANDOFF = "board 16x10; red: e1=G d1=I f1=I e2=I d2=C; black: h10=G; blue: p1=G; green: a10=G"


def test_a_long_standoff_draws_the_army_away_from_its_own_guards() -> None:
    # Where nothing has fallen for long, an army goes for the enemy Guards instead of
    # standing by its own for good (a four-player game ran to its cap that way).
    state = new_state("napoleonic", STANDOFF, scenario="grand_battle_2v2")
    state = dataclasses.replace(state, turns_since_elimination=40)

    def spread(state: Any) -> int:
        targets = [u.cell for u in state.units if u.side != "red"]
        return sum(
            min(state.geo.distance(u.cell, t) for t in targets)
            for u in state.units
            if u.side == "red" and not state.stats(u).is_commander
        )

    before = spread(state)
    while RULESET.to_act(state) == ("red",) and state.phase is Phase.MOVEMENT:
        action = suggest(Game(RULESET, state), side="red", seconds=1.0, seed=1).action
        state = RULESET.play(state, action)
    assert spread(state) < before


# Red's Heavy Infantry on d4 attacks Black's Foot Guards (defence 2) across the obstacle
# d4|d5, Red's Infantry on c5 from beside; Black's Infantry on d6 may support across d5|d6.
ACROSS_OBSTACLES = (
    "board 8x8; red: a1=G#R_G d4=Y#R_Y c5=I#R_I; black: d5=F#B_F d6=I#B_S h8=G#B_G; "
    "obstacles: d4|d5 d5|d6"
)


@pytest.mark.parametrize("heavy_is_artillery", ["false", "true"])
@pytest.mark.parametrize("block_support", ["false", "true"])
def test_the_planner_counts_combat_by_the_rulings_in_force(
    heavy_is_artillery: str, block_support: str
) -> None:
    """A ruling that changes an attack value (10.4, 3.2) or who may support (10.4, ruling
    30) changes the planner's numbers with the rules'."""
    state = new_state(
        "napoleonic",
        ACROSS_OBSTACLES,
        heavy_infantry_is_artillery=heavy_is_artillery,
        obstacles_block_support=block_support,
        auto_skip_defence="false",
    )
    units = state.by_id()
    target = units["B_F"]
    attacks = [(units["R_Y"], target), (units["R_I"], target)]
    # The rules: declare both attacks, give every legal support, resolve.
    played = state
    for action in (Attack("red", "R_Y", "B_F"), Attack("red", "R_I", "B_F"), EndPhase("red")):
        played = RULESET.play(played, action)
    supports = legal_supports(played, "black")
    for support in supports:
        played = RULESET.play(played, support)
    played = RULESET.play(played, EndPhase("black"))
    fell = "B_F" not in played.by_id()
    # The planner, asked the same questions.
    (fight,) = fights(state, attacks)
    assert fight.attack == tally(state, target, [a for a, _ in attacks], []).attack_total
    assert {unit.id for unit, _value in fight.supporters} == {s.supporter for s in supports}
    predicted = judge(state, attacks)
    assert ("B_F" in {unit.id for unit in predicted.eliminated}) == fell
    planner = Planner(RULESET, state, "red", Budget(3600.0))
    planner.compute_reach()
    assert bool(planner.offensive([target])) == fell  # a kill is planned only when sure
    # Only the full Heavy Infantry attack without the support takes the Foot Guards.
    assert fell == (heavy_is_artillery == "false" and block_support == "true")


# Two alliances (10.6): red and blue (south) against black and green (north). Black's
# infantry on d5 (defence 1) is next to red's infantry on d4 and blue's on c5 (attack 1
# each), and to green's infantry on e5, which can support it.
ALLIED = (
    "board 8x8; players: red/south black/north blue/south green/north; "
    "red: d4=I h1=G; black: d5=I a8=G; blue: c5=I a1=G; green: e5=I h8=G; "
    "turn: red attack_declaration 0; pending: red blue"
)


def test_the_ai_joins_its_allys_attack_without_moving() -> None:
    # Red's attack alone (1 against 1) is a tie, which the defender survives (7.3); with
    # blue's it is 2 against 1. Blue, not the active player, is asked in red's declaration.
    state = new_state("napoleonic", ALLIED, auto_skip_defence="false")
    assert RULESET.to_act(state) == ("red", "blue")
    found = suggest(Game(RULESET, state), side="blue", seconds=1.0, seed=2)
    assert found.action == Attack("blue", "U_I", "B_I")
    assert found.line == ["attack c5>d5", "end"]


def test_the_ai_supports_an_attacked_ally() -> None:
    # Red and blue attack black's infantry with 2 against its defence 1; green's support
    # makes it 2 against 2, a tie the defender survives (7.3). Black's own infantry is under
    # attack and cannot support (7.2); green is asked to defend its ally.
    state = new_state("napoleonic", ALLIED, auto_skip_defence="false")
    for action in (
        Attack("red", "R_I", "B_I"),
        Attack("blue", "U_I", "B_I"),
        EndPhase("red"),
        EndPhase("blue"),
    ):
        state = RULESET.play(state, action)
    assert state.phase is Phase.DEFENCE and RULESET.to_act(state) == ("black", "green")
    found = suggest(Game(RULESET, state), side="green", seconds=1.0, seed=2)
    assert found.action == Support("green", "G_I", "B_I")
    assert found.line == ["support e5>d5", "end"]


def test_time_to_spare_buys_the_strongest_level_a_look_at_the_enemys_answer() -> None:
    # Below LOOKAHEAD_SECONDS the plan is judged by its own kills and squares; from there
    # on, each candidate is played on against the enemy's planned answer (more work, and
    # the same plan for the same seed every time).
    state = random_position("napoleonic", 8, 3)
    side = RULESET.to_act(state)[0]
    work = {}
    for seconds in (0.05, 0.5):
        clear_plans()
        found = suggest(Game(RULESET, state), side=side, seconds=seconds, seed=5)
        clear_plans()
        again = suggest(Game(RULESET, state), side=side, seconds=seconds, seed=5)
        assert again.line == found.line
        work[seconds] = found.nodes
    assert state.phase is Phase.MOVEMENT and work[0.5] > 10 * work[0.05], work
