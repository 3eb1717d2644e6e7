"""One action checked by its own rule path (`check.py`) against the full generator.

The generator (`legal_in`) stays the reference: on every position the conformance vectors
reach (tests/conformance/war: the random, options, presets, book and example playouts),
and on random playouts under the option sets of `test_reference`, the fast check must
accept every listed action and answer exactly as the list does for many illegal ones
made by perturbing legal ones; `apply` must refuse each of those with the reason and
message of the reference path (the list, then `explain`). `make test` checks a rotating
sample of the positions and one playout per option set (`tests/seeds.py`); `-m slow` every
position of the vectors and the fixed playouts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine_service.rules.errors import RuleError
from engine_service.rules.position import read_position
from engine_service.rules.war import Action, WarState
from engine_service.rules.war.actions import HUFF, PASS, PLACE
from engine_service.rules.war.check import is_legal
from engine_service.rules.war.explain import explain
from engine_service.rules.war.legal import legal_in, piece_moves
from engine_service.rules.war.ruleset import clear_caches
from engine_service.rules.war.state import Turn
from tests import seeds

from ..vectors import SAMPLED, compared_over, readable_positions
from .helpers import RULES, options
from .test_reference import OPTION_SETS

REFUSALS_PER_POSITION = 12  # illegal actions taken through `apply` (each explained twice)


def vector_states() -> list[WarState]:
    """Every readable War position of the conformance vectors (requests and answers)."""
    return [read_position(RULES, text).state for text in readable_positions(RULES)]


def playout_states(opts: dict[str, str], seed: int | str, plies: int) -> Iterator[WarState]:
    """The positions of one seeded random playout under `opts`."""
    rng = random.Random(f"check-{seed}")
    state = RULES.new_game(options(**opts))
    for _ in range(plies):
        yield state
        actions = RULES.legal_actions(state)
        if not actions:
            return
        state = RULES.play(state, rng.choice(actions))


def perturbed(state: WarState, legal: tuple[Action, ...], rng: random.Random) -> set[Action]:
    """Actions near the legal ones and beside them: every move and jump chain of the side
    before the compulsory capture (7.1) and the longest chain (A14) choose, other landings,
    cut and extended jump chains, other origins, placements, passes and huffs anywhere,
    markers out of place."""
    near: set[Action] = {(PASS,), (PASS, 0), (PLACE,), (HUFF, 0), (-1, 0), (0, -11), (99, 100)}
    moves, chains = piece_moves(Turn(state.rules, state.board, state.side, state.ep))
    near.update(moves, chains)
    cells = list(range(100))
    for action in legal:
        for step in (-11, -10, -9, -1, 1, 9, 10, 11, 20, -20, 22, -22):
            near.add((*action[:-1], action[-1] + step))
        near.add(action[:-1])
        near.add((*action, action[-1]))
        near.add((*action, rng.choice(cells)))
        near.add((rng.choice(cells), *action[1:]))
        near.add((PLACE, rng.choice(cells), *action))
        near.add((HUFF, rng.choice(cells), *action))
        for cell in state.huffable:
            near.add((HUFF, cell, *action))
    for _ in range(60):
        near.add((rng.choice(cells), rng.choice(cells)))
        near.add((PLACE, rng.choice(cells)))
    near.discard(())
    return near


def reference_refusal(state: WarState, action: Action) -> RuleError:
    """The refusal of the reference path: the action is not in the list, `explain` says why."""
    assert action not in legal_in(state)[1]
    return explain(state, action)


def check_position(state: WarState, rng: random.Random) -> int:
    """Compare the fast check with the list at one position; the number of actions compared."""
    legal, legal_set = legal_in(state)
    for action in legal:
        assert is_legal(state, action), (RULES.setup_text(state), action)
    near = sorted(perturbed(state, legal, rng))
    for action in near:
        assert is_legal(state, action) == (action in legal_set), (RULES.setup_text(state), action)
    if RULES.outcome(state) is None:
        illegal = [a for a in near if a not in legal_set]
        for action in rng.sample(illegal, min(REFUSALS_PER_POSITION, len(illegal))):
            with pytest.raises(RuleError) as refused:
                RULES.apply(state, action)
            expected = reference_refusal(state, action)
            assert (refused.value.reason, refused.value.message, refused.value.alternatives) == (
                expected.reason,
                expected.message,
                expected.alternatives,
            ), (RULES.setup_text(state), action)
        for action in rng.sample(legal, min(REFUSALS_PER_POSITION, len(legal))):
            after, _events = RULES.apply(state, action)
            assert after == RULES.play(state, action)
    return len(legal) + len(near)


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.usefixtures("playout_seed")
def test_the_check_agrees_with_the_list_on_every_position_of_the_vectors(in_depth: bool) -> None:
    states = vector_states()
    assert len(states) >= 500
    compared = compared_over(states, check_position, in_depth)
    assert compared >= (100_000 if in_depth else 100_000 // (2 * SAMPLED))


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("name", list(OPTION_SETS))
@pytest.mark.usefixtures("playout_seed")
def test_the_check_agrees_with_the_list_in_playouts(name: str, in_depth: bool) -> None:
    rng = random.Random(f"check-{name}")
    positions = 0
    games: list[int | str] = [0, 1] if in_depth else list(seeds.sampled(1))
    for seed in games:
        for state in playout_states(OPTION_SETS[name], seed, 80):
            check_position(state, rng)
            positions += 1
    assert positions >= 30 * len(games)


def test_the_check_agrees_with_the_list_with_placement_then_move() -> None:
    # Each position has thousands of actions (every placement with every move after it).
    opts = {"placement_uses_turn": "false", "compulsion": "huff"}
    rng = random.Random("check-placement-then-move")
    positions = 0
    for state in playout_states(opts, 0, 12):
        check_position(state, rng)
        positions += 1
    assert positions == 12


def test_applying_a_legal_action_lists_no_actions() -> None:
    clear_caches()
    rng = random.Random("check-no-list")
    for state in playout_states({}, 0, 40):
        action = rng.choice(RULES.legal_actions(state))
        clear_caches()
        RULES.apply(state, action)
        RULES.format_action(state, action)
        assert legal_in.cache_info().misses == 0, RULES.setup_text(state)
