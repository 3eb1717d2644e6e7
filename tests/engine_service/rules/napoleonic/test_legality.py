"""`legal_actions` is exactly the set of actions `apply` accepts, in positions met in play.

For sampled positions of random games, every conceivable action of the phase (every unit
to every square, every unit against every unit, every square for a redoubt or a
placement) is tried with the checking `apply`; those accepted must be the listed ones.
"""

from __future__ import annotations

import random

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    BeginRedoubt,
    EndPhase,
    Move,
    NapoleonicAction,
    Place,
    Support,
)
from engine_service.rules.napoleonic.pieces import UNIT_TYPES
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET

CONFIGS = {
    "standard": {"auto_skip_defence": "false"},
    "terrain": {
        "scenario": "hill_and_stream",
        "obstacles_block_movement": "true",
        "obstacles_block_support": "true",
        "hill_to_hill_moves": "false",
        "max_sites_per_side": "2",
    },
    "variants": {
        "scenario": "variant_corps",
        "split_two_square_moves": "true",
        "variant_two_square_move": "exactly_two",
        "pass_through_friendly": "true",
        "advance_requires_unmoved": "true",
    },
    "straight": {"scenario": "other_epochs", "multi_step_mode": "straight_line"},
    "marching": {"scenario": "marching_orders", "placements_per_turn": "2"},
    "rugged": {
        "obstacles_block_movement": "true",
        "obstacles_block_support": "true",
        "redoubt_build_turns": "2",
        "multi_step_mode": "straight_line",
    },
    "rugged_both": {
        "obstacles_block_movement": "true",
        "obstacles_block_support": "true",
        "diagonal_obstacle_rule": "both",
        "split_two_square_moves": "true",
        "hill_to_hill_moves": "false",
    },
}
SAMPLES = 12
FILES = "abcdefgh"
# The standard armies on rugged ground: hills, a redoubt each, and obstacles on most edges
# of the middle of the board, so the terrain rules are met often.
RUGGED = (
    RULESET.setup_text(RULESET.new_game(RULESET.resolve_options({})))
    + "; hills: c4 d5 e4 f5; redoubts: b5=black g4=red; obstacles: "
    + " ".join(
        f"{FILES[x]}{y}|{FILES[x + 1]}{y}" for y in range(3, 7) for x in range(7) if (x + y) % 2
    )
    + " "
    + " ".join(f"{f}4|{f}5" for f in "bcdefg")
)
SETUPS = {"rugged": RUGGED, "rugged_both": RUGGED}


def candidates(state: NapoleonicState) -> list[NapoleonicAction]:
    names = state.geo.names
    units = [u.id for u in state.units]
    phase = state.phase
    result: list[NapoleonicAction] = []
    for side in RULESET.to_act(state):
        result.append(EndPhase(side))
        if phase is Phase.MOVEMENT:
            result += [Move(side, u, sq) for u in units for sq in names]
        if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION):
            result += [Attack(side, a, t) for a in units for t in units]
        if phase is Phase.DEFENCE:
            result += [Support(side, a, t) for a in units for t in units]
        if phase is Phase.ADVANCE:
            result += [Advance(side, u, sq) for u in units for sq in names]
        if phase in (Phase.MOVEMENT, Phase.ATTACK_DECLARATION, Phase.ADVANCE):
            result += [BeginRedoubt(side, sq) for sq in names]
        if phase is Phase.PLACEMENT:
            result = [Place(side, kind, sq) for kind in UNIT_TYPES for sq in names]
    return result


def accepted(state: NapoleonicState, action: NapoleonicAction) -> bool:
    try:
        RULESET.apply(state, action)
    except RuleError:
        return False
    return True


@pytest.mark.parametrize("config", list(CONFIGS))
def test_legal_actions_are_exactly_the_accepted_ones(config: str) -> None:
    rng = random.Random(f"legality-{config}")
    options = RULESET.resolve_options({**CONFIGS[config], "turn_limit": "40"})
    positions: list[NapoleonicState] = []
    wanted = {Phase.MOVEMENT, Phase.ATTACK_DECLARATION, Phase.DEFENCE, Phase.ADVANCE}
    for _game in range(6):  # play until every phase of the turn has been met
        state = RULESET.new_game(options, SETUPS.get(config))
        while RULESET.outcome(state) is None:
            positions.append(state)
            action = RULESET.random_action(state, rng)
            assert action is not None
            state = RULESET.play(state, action)
        if wanted <= {p.phase for p in positions}:
            break
    assert wanted <= {p.phase for p in positions}
    # Sample every phase met, not only the (many) movement positions.
    by_phase: dict[Phase, list[NapoleonicState]] = {}
    for position in positions:
        by_phase.setdefault(position.phase, []).append(position)
    for phase, group in by_phase.items():
        for position in rng.sample(group, min(len(group), SAMPLES)):
            legal = RULESET.legal_actions(position)
            assert len(set(legal)) == len(legal)
            found = {a for a in candidates(position) if accepted(position, a)}
            assert set(legal) == found, (phase, set(legal) ^ found)
