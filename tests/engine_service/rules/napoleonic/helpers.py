"""Shared helpers of the Napoleonic Chess tests: the spec's JSON cases as engine inputs.

`napoleonic_chess_scenarios.json` (copied verbatim under `data/`) states positions and
list-valued protocol actions (declare_attacks, allocate_supports, advance). Here they
become set-up texts and sequences of small actions, applied atomically per JSON action the
way `Game.apply_all` does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from engine_service.rules.base import Event
from engine_service.rules.errors import RuleError
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.actions import (
    Advance,
    Attack,
    EndPhase,
    Move,
    NapoleonicAction,
    Support,
)
from engine_service.rules.napoleonic.pieces import UNIT_TYPES
from engine_service.rules.napoleonic.state import NapoleonicState, Phase

DATA = Path(__file__).parent / "data" / "napoleonic_chess_scenarios.json"
RULESET = NapoleonicRuleset()
SEAL_KEY = bytes(range(32))  # a test key; the service's real key comes from its config
SEALED_RULESET = NapoleonicRuleset(seal_key=SEAL_KEY)

# Black infantry on d5 attacked by red artillery from d4 and infantry from c5 and e5: a
# set-up to finish with the terrain of d5, and those three attacks.
STORMING_D5 = "board 8x8; red: d4=A#R_A c5=I#R_I e5=I#R_I2 h1=G#R_G; black: d5=I#B_I a8=G#B_G; "
STORM_D5 = [("R_A", "B_I"), ("R_I", "B_I"), ("R_I2", "B_I")]


@cache
def spec_data() -> dict[str, Any]:
    """The spec's scenarios JSON."""
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def all_cases() -> list[dict[str, Any]]:
    """The worked example and the 47 further tests, in file order."""
    data = spec_data()
    return [data["complex_attack_example"], *data["tests"]]


def case_options(case: Mapping[str, Any]) -> dict[str, str]:
    """`engine_options_for_tests` plus the case's own options, as option text."""
    merged = {**spec_data()["engine_options_for_tests"], **case.get("options", {})}
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in merged.items()}


def setup_text_of(position: Mapping[str, Any]) -> str:
    """The engine's set-up text of a JSON position (board, units with ids, terrain)."""
    board = position["board"]
    sections = [f"board {board['width']}x{board['height']}"]
    for side in ("red", "black"):
        items = [
            f"{u['square']}={UNIT_TYPES[u['type']].letter}#{u['id']}"
            for u in position["units"]
            if u["side"] == side
        ]
        if items:
            sections.append(f"{side}: " + " ".join(items))
    terrain = position.get("terrain", {})
    if terrain.get("hills"):
        sections.append("hills: " + " ".join(terrain["hills"]))
    if terrain.get("redoubts"):
        sections.append(
            "redoubts: " + " ".join(f"{r['square']}={r['builder']}" for r in terrain["redoubts"])
        )
    if terrain.get("obstacles"):
        sections.append("obstacles: " + " ".join(f"{a}|{b}" for a, b in terrain["obstacles"]))
    return "; ".join(sections)


def case_state(case: Mapping[str, Any], ruleset: NapoleonicRuleset = RULESET) -> NapoleonicState:
    """The initial state of a JSON case."""
    position = case["position"]
    options = ruleset.resolve_options(case_options(case))
    state = ruleset.new_game(options, setup_text_of(position))
    assert state.active == position["to_move"] and state.phase is Phase(position["phase"])
    return state


def small_actions(state: NapoleonicState, entry: Mapping[str, Any]) -> list[NapoleonicAction]:
    """The small actions of one JSON protocol action (the brief's mapping, spec 6)."""
    side = entry["player"]
    kind = entry["action"]
    if kind == "move":
        return [Move(side, m["unit"], m["to"]) for m in entry["moves"]]
    if kind == "declare_attacks":
        attacks: list[NapoleonicAction] = [
            Attack(side, a["attacker"], a["target"]) for a in entry["attacks"]
        ]
        # An attack ends movement by itself; an empty declaration ends movement explicitly.
        lead: list[NapoleonicAction] = (
            [EndPhase(side)] if not attacks and state.phase is Phase.MOVEMENT else []
        )
        return [*lead, *attacks, EndPhase(side)]
    if kind == "allocate_supports":
        supports: list[NapoleonicAction] = [
            Support(side, s["supporter"], s["supported"]) for s in entry["supports"]
        ]
        return [*supports, EndPhase(side)]
    if kind == "advance":
        advances: list[NapoleonicAction] = [
            Advance(side, a["unit"], a["to"]) for a in entry["advances"]
        ]
        return [*advances, EndPhase(side)]
    raise ValueError(f"no small actions for {kind}")


def apply_batch(
    ruleset: NapoleonicRuleset, state: NapoleonicState, actions: Sequence[NapoleonicAction]
) -> tuple[NapoleonicState, list[Event]]:
    """Apply actions in order, all or nothing; a RuleError carries the failing index."""
    events: list[Event] = []
    current = state
    for index, action in enumerate(actions):
        try:
            current, more = ruleset.apply(current, action)
        except RuleError as error:
            raise error.at(index) from None
        events.extend(more)
    return current, events


def play_text(
    ruleset: NapoleonicRuleset, state: NapoleonicState, lines: Sequence[str]
) -> tuple[NapoleonicState, list[Event]]:
    """Apply notation lines ('red move c2-d4', or 'move c2-d4' for the one to act)."""
    events: list[Event] = []
    for line in lines:
        side, _sep, text = line.partition(" ")
        if side not in ("red", "black"):
            side, text = "", line
        action = ruleset.parse_action(state, text, side or None)
        state, more = ruleset.apply(state, action)
        events.extend(more)
    return state, events


def squares(state: NapoleonicState) -> dict[str, str]:
    """Unit id -> square name."""
    return {u.id: state.geo.names[u.cell] for u in state.units}


def cited(error: RuleError) -> str:
    """A refusal's message with the section it cites, as a reader of the rules sees both."""
    return f"{error.message} ({error.rule})" if error.rule else error.message
