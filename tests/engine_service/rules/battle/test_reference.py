"""The engine against the simple reference generator (`reference.py`) on many positions:
the same legal moves, the same outcome, the same position after each move."""

from __future__ import annotations

import random

import pytest

from engine_service.rules.battle import BattleState
from engine_service.rules.battle.pieces import KIND_LETTERS, kind_of, side_of
from tests.engine_service.rules.battle import reference
from tests.engine_service.rules.battle.helpers import RULES

ARMIES = {
    "attacker": "W" + "L" * 4 + "I" * 5 + "CC" + "AA",
    "defender": "T" + "L" * 4 + "I" * 5 + "CC" + "AA",
}


def as_reference(state: BattleState) -> reference.Position:
    """The engine's board as the reference's {square: (side, kind)}."""
    return {
        cell + 1: ("A" if side_of(piece) == 0 else "D", KIND_LETTERS[kind_of(piece)])
        for cell, piece in enumerate(state.board)
        if piece
    }


def random_setup(rng: random.Random) -> str:
    """A crowded random position: both royal pieces, all four batteries, some figures."""
    squares = rng.sample(range(1, 140), 28)
    parts = [rng.choice(["attacker", "defender"]) + " to move"]
    for side, army in ARMIES.items():
        kept = [k for i, k in enumerate(army) if i == 0 or k == "A" or rng.random() < 0.6]
        parts.append(f"{side}: " + " ".join(f"{k}{squares.pop()}" for k in kept))
    return "; ".join(parts)


def compare(state: BattleState, options: dict[str, str]) -> None:
    """Assert the engine and the reference agree on `state` (legal moves and outcome)."""
    position = as_reference(state)
    side = "A" if state.side == 0 else "D"
    opts = reference.Opts(options)
    expected_outcome = reference.outcome(position, side, opts, list(state.history), state.quiet)
    outcome = RULES.outcome(state)
    got = None if outcome is None else (outcome.winner, outcome.reason.value)
    assert got == expected_outcome, RULES.setup_text(state)
    engine = sorted((m.origin + 1, m.destination + 1) for m in RULES.legal_actions(state))
    expected = [] if expected_outcome else reference.legal_moves(position, side, opts)
    assert engine == expected, RULES.setup_text(state)


def walk(state: BattleState, options: dict[str, str], rng: random.Random, plies: int) -> int:
    """Compare along a random game from `state`; the number of positions compared."""
    count = 0
    for _ in range(plies):
        compare(state, options)
        count += 1
        actions = RULES.legal_actions(state)
        if not actions:
            break
        move = rng.choice(actions)
        position = as_reference(state)
        side = "A" if state.side == 0 else "D"
        step = (move.origin + 1, move.destination + 1)
        expected = reference.after(position, step)
        for lost in reference.lost_after(position, side, step, reference.Opts(options)):
            del expected[lost]
        state = RULES.play(state, move)
        assert as_reference(state) == expected
    return count


# Positions compared in the default run: 3 x 70 + 4 x 110 + 7 x 55 = 1035 at least.
@pytest.mark.parametrize("seed", range(3))
def test_reference_from_the_start(seed: int) -> None:
    rng = random.Random(f"start-{seed}")
    count = walk(RULES.new_game(RULES.resolve_options({})), {}, rng, 70)
    assert count == 70


@pytest.mark.parametrize("chunk", range(4))
def test_reference_on_random_positions_defaults(chunk: int) -> None:
    count = 0
    for seed in range(chunk * 12, chunk * 12 + 12):
        rng = random.Random(f"setup-{seed}")
        state = RULES.new_game(RULES.resolve_options({}), random_setup(rng))
        count += walk(state, {}, rng, 10)
    assert count >= 110


NON_DEFAULT = [
    {"forced_reply": "lose_figure", "wagon_forced_reply": "capture_battery_first"},
    {
        "citadel_duty": "take_or_block",
        "duty_lapses_when_impossible": "false",
        "no_legal_move": "loss",
    },
    {"uncovering_rule": "artillery_moves_only", "capture_onto_commanded_square": "allowed"},
    {"wagon_capture_cover": "ordinary_exposure_test", "wagon_occupancy": "literal_text"},
    {"protection_adjacency": "oblique_and_corner", "river_cuts_protection": "false"},
    {"artillery_blockers": "figures_only", "multiple_duties": "citadel_first"},
    {
        "citadel_capture_ignores_uncovering": "false",
        "repetition_draw": "2",
        "no_capture_limit": "5",
    },
]


@pytest.mark.parametrize("options", NON_DEFAULT, ids=",".join)
def test_reference_on_random_positions_with_options(options: dict[str, str]) -> None:
    count = 0
    for seed in range(8):
        rng = random.Random(f"options-{seed}")
        state = RULES.new_game(RULES.resolve_options(options), random_setup(rng))
        count += walk(state, options, rng, 8)
    assert count >= 55


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(reference.DEFAULTS))
def test_reference_every_option_value_at_length(name: str) -> None:
    spec = next(s for s in RULES.option_specs if s.name == name)
    values = [v for v in spec.allowed if v != spec.default] or (
        ["false"]
        if spec.default == "true"
        else ["2", "off"]
        if name == "repetition_draw"
        else ["4", "off"]
    )
    for value in values:
        options = {name: value}
        for seed in range(40):
            rng = random.Random(f"{name}-{value}-{seed}")
            state = RULES.new_game(RULES.resolve_options(options), random_setup(rng))
            walk(state, options, rng, 20)
