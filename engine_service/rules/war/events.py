"""What happened when an action was applied, in full sentences for the players."""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind, Outcome
from engine_service.rules.war.actions import Action, split_action
from engine_service.rules.war.board import FORWARD, JUMPED, NAMES
from engine_service.rules.war.compulsion import victim_of
from engine_service.rules.war.flying_machines import with_machine
from engine_service.rules.war.pieces import (
    KIND_IDS,
    SIDE_IDS,
    SIDE_NAMES,
    describe_man,
    kind_of,
    side_of,
)
from engine_service.rules.war.state import WarState


def _at(kind: EventKind, text: str, side_id: str, cell: int, piece: str) -> Event:
    """An event of one man on one square (`piece`: its kind id)."""
    return Event(kind, text, side=side_id, cells=(NAMES[cell],), piece=piece)


def action_events(
    state: WarState, action: Action, after: WarState, ended: Outcome | None
) -> list[Event]:
    """The events of a legal `action` taking `state` to `after`; `ended` is after's outcome."""
    side = state.side
    me, foe = SIDE_NAMES[side], SIDE_NAMES[1 - side]
    side_id = SIDE_IDS[side]
    parts = split_action(action)
    board = state.board
    events: list[Event] = []
    if parts.huff is not None:
        cell = parts.huff
        events.append(
            _at(
                EventKind.HUFFED,
                f"{me} huffs the {foe} Troop on {NAMES[cell]}, which failed to make a "
                "compulsory capture (7.1, compulsion = huff).",
                side_id,
                cell,
                "troop",
            )
        )
        board = board[:cell] + b"\x00" + board[cell + 1 :]
    if parts.place is not None:
        cell = parts.place
        left = after.reserves[side]
        events.append(
            _at(
                EventKind.PLACED,
                f"{me} places a Flying Machine on {NAMES[cell]}, blocking it for good "
                f"({left} left in reserve).",
                side_id,
                cell,
                "flying_machine",
            )
        )
        board = with_machine(board, side, cell)
    if parts.passes:
        events.append(Event(EventKind.TURN_ENDED, f"{me} passes.", side=side_id))
    elif parts.origin is not None:
        events += _move_events(state, board, (parts.origin, *parts.path), after)
    if after.huffable:
        cells = ", ".join(NAMES[c] for c in after.huffable)
        events.append(
            Event(
                EventKind.TURN_ENDED,
                f"{me} did not make the compulsory capture: {foe} may huff the Troop on "
                f"{cells} with the next action.",
                side=side_id,
                cells=tuple(NAMES[c] for c in after.huffable),
            )
        )
    if ended is not None:
        events.append(Event(EventKind.GAME_OVER, ended.message, side=ended.winner))
    return events


def _move_events(state: WarState, board: bytes, move: Action, after: WarState) -> list[Event]:
    side = state.side
    me, foe = SIDE_NAMES[side], SIDE_NAMES[1 - side]
    side_id = SIDE_IDS[side]
    origin = move[0]
    piece = board[origin]
    kind_id = KIND_IDS[kind_of(piece)]
    name = describe_man(piece)
    names = tuple(NAMES[c] for c in move)
    events: list[Event] = []
    is_jump = kind_id == "troop" and JUMPED[origin * 100 + move[1]] >= 0
    if is_jump:
        text = f"{name} jumps from {' to '.join(names)}."
    else:
        text = f"{name} moves from {names[0]} to {names[1]}."
    last = move[-1]
    if kind_id == "troop" and FORWARD[side][last] < 0:
        text += " It has reached its final rank and stays there for good."
    events.append(Event(EventKind.MOVED, text, side=side_id, cells=names, piece=kind_id))
    if is_jump:
        at = origin
        for land in move[1:]:
            over = JUMPED[at * 100 + land]
            events.append(
                _at(
                    EventKind.CAPTURED,
                    f"The {describe_man(board[over])} on {NAMES[over]} is jumped and removed.",
                    side_id,
                    over,
                    KIND_IDS[kind_of(board[over])],
                )
            )
            at = land
    else:
        victim = victim_of(board, side, state.ep, move)
        if victim >= 0:
            passing = " in passing" if victim != move[1] else ""
            events.append(
                _at(
                    EventKind.CAPTURED,
                    f"{name} captures the {describe_man(board[victim])} on "
                    f"{NAMES[victim]}{passing}.",
                    side_id,
                    victim,
                    KIND_IDS[kind_of(board[victim])],
                )
            )
    citadel = state.rules.citadels[1 - side]
    if last == citadel and after.board[citadel] and side_of(after.board[citadel]) == side:
        events.append(
            _at(
                EventKind.CITADEL_ENTERED,
                f"{name} enters {foe}'s Citadel {NAMES[citadel]}: {foe} must capture it with "
                f"the next move, or {me} wins (9).",
                side_id,
                citadel,
                kind_id,
            )
        )
    return events
