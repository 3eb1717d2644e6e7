"""The pieces book.py adds to the plates' figures (so that the book's lines can be played
through the engine) change nothing the book says: along each of the book's lines, and at
its start with either side to move, the same figures are exposed, the same Citadel
commanders found, and the figure's pieces have the same legal moves, with them as without.
"""

from __future__ import annotations

import re

import pytest

from engine_service.rules.battle import BattleState
from tests.engine_service.rules.battle.book import EXAMPLES, PLATES, supplied
from tests.engine_service.rules.battle.helpers import (
    RULES,
    analysis,
    exposed_squares,
    is_legal,
    play,
    position,
)
from tests.engine_service.rules.book import read_line

SIDES = ("attacker", "defender")
SUPPLIED = [name for name, (_, added) in PLATES.items() if added]


def _with_side(figure: str, side: str) -> str:
    rest = re.sub(r"^(attacker|defender) to move;?\s*", "", figure)
    return f"{side} to move; {rest.lstrip('; ')}"


def _occupied(state: BattleState) -> set[int]:
    return {cell + 1 for cell, piece in enumerate(state.board) if piece}


def _seen(state: BattleState, squares: set[int]) -> tuple[object, ...]:
    found = analysis(state)
    moves = sorted(
        (m.origin + 1, m.destination + 1) for m in found.legal if m.origin + 1 in squares
    )
    exposed = tuple(exposed_squares(state, side) for side in SIDES)
    return exposed, sorted(found.citadel_commanders), moves


@pytest.mark.parametrize("name", SUPPLIED)
def test_the_added_pieces_change_nothing_at_the_start(name: str) -> None:
    figure, added = PLATES[name]
    for side in SIDES:
        drawn = position(_with_side(figure, side))
        live = position(supplied(_with_side(figure, side), added))
        assert _seen(live, _occupied(drawn)) == _seen(drawn, _occupied(drawn)), side


@pytest.mark.parametrize("name", [name for name in SUPPLIED if EXAMPLES[name].variations])
def test_the_added_pieces_change_nothing_along_the_lines(name: str) -> None:
    figure, _ = PLATES[name]
    for variation, lines in EXAMPLES[name].variations.items():
        drawn, live = position(figure), position(EXAMPLES[name].setup)
        for raw in lines:
            line = read_line(raw)
            if line.kind == "refuse":
                assert not is_legal(live, line.text) and not is_legal(drawn, line.text), raw
            elif line.kind == "play":
                live = play(live, line.text)
                origin = int(re.split("[-x]", line.text)[0])
                if origin in _occupied(drawn):
                    drawn = play(drawn, line.text)
                else:  # a move of an added piece: in the figure, the turn passes
                    drawn = BattleState(drawn.board, 1 - drawn.side, drawn.options, drawn.quiet)
            squares = {int(line.text)} if line.kind == "list" else _occupied(drawn)
            assert _seen(live, squares) == _seen(drawn, squares), (variation, raw)


def test_every_example_with_a_figure_is_a_game_in_play() -> None:
    for name, (figure, added) in PLATES.items():
        if figure:
            state = position(supplied(figure, added))
            assert RULES.outcome(state) is None and RULES.legal_actions(state), name
