"""Helpers for the Game of War tests: positions from piece lists, notation sets, playouts."""

from __future__ import annotations

import random
from collections.abc import Iterator

from engine_service.rules.base import Outcome
from engine_service.rules.options import Options
from engine_service.rules.war import Action, WarRuleset, WarState
from engine_service.rules.war.actions import split_action
from engine_service.rules.war.board import NAMES

from .reference import Man, RefAction, Reference, RefPosition

RULES = WarRuleset()
START = "mhc1gk1chm/1t1t1t1t1t/t1t1t1t1t1/10/10/10/10/T1T1T1T1T1/1T1T1T1T1T/MHC1GK1CHM S FF:ff"


def options(**changes: str) -> Options:
    """Options from text values (defaults for the rest)."""
    return RULES.resolve_options(changes)


def board_field(men: dict[str, str]) -> str:
    """The board field of a setup string from {"c5": "T", "d6": "t", ...}."""
    grid = [["" for _ in range(10)] for _ in range(10)]
    for square, letter in men.items():
        grid[int(square[1:]) - 1]["abcdefghij".index(square[0])] = letter
    rows = []
    for rank in range(9, -1, -1):
        out, run = "", 0
        for cell in grid[rank]:
            if not cell:
                run += 1
                continue
            out += (str(run) if run else "") + cell
            run = 0
        rows.append(out + (str(run) if run else ""))
    return "/".join(rows)


def position(
    men: str,
    *,
    side: str = "S",
    reserves: str = "-:-",
    extra: str = "",
    opts: Options | None = None,
) -> WarState:
    """A position from "Tc5 Md1 td6" (upper case South, lower case North)."""
    return RULES.new_game(
        opts or options(), setup_text(men, side=side, reserves=reserves, extra=extra)
    )


def setup_text(men: str, *, side: str = "S", reserves: str = "-:-", extra: str = "") -> str:
    """The set-up text of "Tc5 Md1 td6" (upper case South, lower case North) with the side
    to move, the reserves and any further fields."""
    placed = {}
    for word in men.split():
        placed[word[1:]] = word[0]
    return f"{board_field(placed)} {side} {reserves} {extra}".strip()


def notations(state: WarState) -> set[str]:
    """The notation of every legal action."""
    return {RULES.format_action(state, a) for a in RULES.legal_actions(state)}


def act(state: WarState, text: str) -> WarState:
    """Parse and apply an action of the side to move."""
    action = RULES.parse_action(state, text)
    after, _ = RULES.apply(state, action)
    return after


def neutral(action: Action) -> RefAction:
    """An engine action in the reference's neutral form."""
    parts = split_action(action)
    out: list[tuple[object, ...]] = []
    if parts.huff is not None:
        out.append(("huff", NAMES[parts.huff]))
    if parts.place is not None:
        out.append(("place", NAMES[parts.place]))
    if parts.passes:
        out.append(("pass",))
    elif parts.origin is not None:
        out.append(("move", NAMES[parts.origin], tuple(NAMES[c] for c in parts.path)))
    return tuple(out)


def ref_position(state: WarState) -> RefPosition:
    """The reference's view of an engine position (through the public piece list)."""
    men = {
        view.cell: Man(
            "S" if view.side == "south" else "N",
            {"flying_machine": "F", "horse": "H"}.get(view.kind, view.kind[0].upper()),
            view.moved,
        )
        for view in RULES.pieces(state)
    }
    south, north = (NAMES[c] for c in state.rules.citadels)
    pos = RefPosition(
        men=men,
        to_move="SN"[state.side],
        reserve={"S": state.reserves[0], "N": state.reserves[1]},
        citadel={"S": south, "N": north},
        ep=NAMES[state.ep] if state.ep >= 0 else None,
        huffable=frozenset(NAMES[c] for c in state.huffable),
        quiet=state.quiet,
        move_number=state.move,
    )
    pos.history = [pos.signature()]
    return pos


def same_position(ref: RefPosition, engine: RefPosition) -> bool:
    """Whether two reference positions hold the same position (history aside)."""
    fields = ("men", "to_move", "reserve", "citadel", "ep", "huffable", "quiet", "move_number")
    return all(getattr(ref, f) == getattr(engine, f) for f in fields)


def outcome_pair(outcome: Outcome | None) -> tuple[str | None, str] | None:
    """An engine outcome as the reference writes it."""
    if outcome is None:
        return None
    winner = {"south": "S", "north": "N", None: None}[outcome.winner]
    return winner, outcome.reason.value


def playout(
    state: WarState, rng: random.Random, max_plies: int = 400
) -> Iterator[tuple[WarState, Action | None]]:
    """Yield (state, action chosen) along a random game; the last action is None."""
    for _ in range(max_plies):
        actions = RULES.legal_actions(state)
        if not actions:
            break
        action = rng.choice(actions)
        yield state, action
        state = RULES.play(state, action)
    yield state, None


def reference_for(state: WarState) -> Reference:
    """A reference generator under the state's options."""
    return Reference(RULES.options_of(state).as_text())
