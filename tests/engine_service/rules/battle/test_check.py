"""One move checked by its own tests (`legal.move_is_legal`, `can_move`) against the analysis.

The full analysis (`legal.analyse`) stays the reference: on every position the conformance
vectors reach (tests/conformance/battle) and along random games from random set-ups under
the option sets of `test_reference`, the one-move check must accept every legal move and
refuse every other move of any piece to any square exactly as the analysis does, "has a
legal move" must agree, and `apply` must refuse a sample of the illegal moves with the
reason and message of the reference path (the analysis, then `explain`). `make test` checks
a rotating sample of the positions and one random game per option set (`tests/seeds.py`);
`-m slow` every position of the vectors and the fixed games.
"""

from __future__ import annotations

import random

import pytest

from engine_service.rules.battle import BattleState, Move
from engine_service.rules.battle.actions import move_of
from engine_service.rules.battle.board import SQUARES
from engine_service.rules.battle.explain import explain
from engine_service.rules.battle.legal import analyse, can_move, move_is_legal
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game
from engine_service.rules.position import read_position, write_position
from tests import seeds

from ..vectors import SAMPLED, compared_over, readable_positions
from .helpers import RULES
from .test_reference import NON_DEFAULT, random_setup

REFUSALS_PER_POSITION = 12


def vector_texts() -> list[str]:
    """Every readable Game of Battle position text of the conformance vectors."""
    return readable_positions(RULES)


def fresh(text: str) -> BattleState:
    """The state of a position text, nothing about its moves worked out yet."""
    return read_position(RULES, text).state


def check_position(text: str, rng: random.Random) -> int:
    """Compare the one-move check with the analysis at one position; moves compared."""
    state = fresh(text)
    reference = analyse(state.board, state.side, state.rules)
    legal = reference.legal_set
    assert can_move(fresh(text)) == bool(reference.legal), text
    candidates = [
        move_of(origin, destination)
        for origin in range(SQUARES)
        if state.board[origin]
        for destination in range(SQUARES)
    ]
    candidates += [Move(-1, 0), Move(SQUARES, 0), Move(0, SQUARES)]
    checked = fresh(text)
    for move in candidates:
        assert move_is_legal(checked, move) == (move in legal), (text, move)
    if RULES.outcome(state) is None:
        illegal = [m for m in candidates if m not in legal]
        for move in rng.sample(illegal, min(REFUSALS_PER_POSITION, len(illegal))):
            with pytest.raises(RuleError) as refused:
                RULES.apply(fresh(text), move)
            expected = explain(state.board, state.side, state.rules, move, reference)
            assert (refused.value.reason, refused.value.message, refused.value.alternatives) == (
                expected.reason,
                expected.message,
                expected.alternatives,
            ), (text, move)
        for move in rng.sample(reference.legal, min(REFUSALS_PER_POSITION, len(legal))):
            after, _events = RULES.apply(fresh(text), move)
            assert after == RULES.play(state, move)
    return len(candidates)


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.usefixtures("playout_seed")
def test_the_check_agrees_with_the_analysis_on_every_position_of_the_vectors(
    in_depth: bool,
) -> None:
    texts = vector_texts()
    assert len(texts) >= 300
    compared = compared_over(texts, check_position, in_depth)
    assert compared >= (500_000 if in_depth else 500_000 // (2 * SAMPLED))


@pytest.mark.parametrize("in_depth", seeds.DEPTHS)
@pytest.mark.parametrize("options", [{}, *NON_DEFAULT], ids=lambda o: ",".join(o) or "defaults")
@pytest.mark.usefixtures("playout_seed")
def test_the_check_agrees_with_the_analysis_in_random_games(
    options: dict[str, str], in_depth: bool
) -> None:
    name = sorted(options.items())
    rng = random.Random(f"check-{name}" if in_depth else f"check-{name}-{seeds.sampled(1)[0]}")
    positions = 0
    for _seed in range(4 if in_depth else 1):
        state = RULES.new_game(RULES.resolve_options(options), random_setup(rng))
        for _ in range(8):
            check_position(write_position(Game(RULES, state)), rng)
            positions += 1
            moves = RULES.legal_actions(state)
            if not moves:
                break
            state = RULES.play(state, rng.choice(moves))
    assert positions >= (20 if in_depth else 1)
