"""Every required case of spec section 13, driven from `napoleonic_chess_scenarios.json`.

One test per case id (the complex-attack example and the 47 further tests). Each JSON
protocol action becomes its small actions (helpers.small_actions) applied atomically with
`Game.apply_all`, exactly as the service applies a batch; a surrender is the shared
`Resign`. Checked against the JSON: status, rejection code and index, state unchanged after
a rejection, combat tallies, eliminations, advance options, final squares, winner and the
phase after.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine_service.rules.base import Event, EventKind
from engine_service.rules.errors import RuleError
from engine_service.rules.game import Game, Resign
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import (
    RULESET,
    all_cases,
    case_state,
    small_actions,
    spec_data,
    squares,
)

CASES = all_cases()


def _snapshot(state: NapoleonicState) -> str:
    """A full printed copy of a state (every field), to prove a rejection changed nothing."""
    return repr(state) + RULESET.setup_text(state)


def _phase_after(game: Game[NapoleonicState], start: NapoleonicState) -> str:
    state = game.state
    if game.outcome is not None:
        return "game_over"
    if state.phase is Phase.MOVEMENT and state.turn_number == start.turn_number + 1:
        return "end"
    return str(state.phase)


def test_the_file_holds_the_worked_example_and_47_tests() -> None:
    data = spec_data()
    assert data["complex_attack_example"]["id"] == "complex_attack_example"
    assert len(data["tests"]) == 47
    assert len({case["id"] for case in CASES}) == 48


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_spec_case(case: dict[str, Any]) -> None:
    start = case_state(case)
    game: Game[NapoleonicState] = Game(RULESET, start)
    expect = case["expect"]
    events: list[Event] = []
    advance_options: dict[str, list[str]] | None = None
    for index, entry in enumerate(case["actions"]):
        before = game.state
        snapshot = _snapshot(before)
        try:
            side = entry["player"]
            if entry["action"] == "surrender":
                game, more = game.apply(side, Resign(side))
            else:
                game, more = game.apply_all([(side, a) for a in small_actions(game.state, entry)])
        except RuleError as error:
            assert expect.get("status") == "rejected", f"action {index}: {error!r}"
            assert expect["at_action"] == index
            assert error.reason == expect["error"], error.message
            assert game.state is before and _snapshot(game.state) == snapshot
            assert expect.get("state_unchanged") is True
            return
        events += more
        if game.state.phase is Phase.ADVANCE:
            names = game.state.geo.names
            advance_options = {names[v.cell]: sorted(v.eligible) for v in game.state.turn.vacancies}
    assert expect.get("status", "ok") == "ok", "expected a rejection"
    combats = {
        e.combat.target: (e.combat.attack_total, e.combat.defence_total, e.combat.eliminated)
        for e in events
        if e.kind is EventKind.COMBAT_RESOLVED and e.combat is not None
    }
    if "combat" in expect:
        assert combats == {
            c["target"]: (c["attack"], c["defence"], c["eliminated"]) for c in expect["combat"]
        }
    if "eliminated" in expect:
        gone = sorted(e.unit or "" for e in events if e.kind is EventKind.ELIMINATED)
        assert gone == sorted(expect["eliminated"])
    if "advance_options" in case["expect"]:
        assert advance_options == {k: sorted(v) for k, v in expect["advance_options"].items()}
    final = squares(game.state)
    for unit_id, square in expect.get("final_squares", {}).items():
        assert final.get(unit_id) == square, unit_id
    if "winner" in expect:
        outcome = game.outcome
        assert (outcome.winner if outcome else None) == expect["winner"]
    assert _phase_after(game, start) == expect["phase_after"]
