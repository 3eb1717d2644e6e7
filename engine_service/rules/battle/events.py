"""What happened when a move was made, in full sentences for the players.

A move, and the capture it makes (5); figures lost under `forced_reply = lose_figure`
(ruling 3); figures newly exposed to enemy Artillery (6); the Citadel newly commanded (7);
the end of the game.
"""

from __future__ import annotations

from engine_service.rules.base import Event, EventKind, Outcome
from engine_service.rules.battle.actions import Move
from engine_service.rules.battle.artillery import commanders, exposed
from engine_service.rules.battle.board import NAMES, SQUARES
from engine_service.rules.battle.pieces import (
    ATTACKER,
    CITADEL_BYTE,
    DEFENDER,
    KIND_IDS,
    KIND_NAMES,
    SIDE_IDS,
    describe_piece,
    kind_of,
    side_of,
)
from engine_service.rules.battle.state import BattleState


def action_events(
    before: BattleState, move: Move, after: BattleState, ended: Outcome | None
) -> list[Event]:
    """The events of a legal `move` taking `before` to `after`; `ended` is after's outcome."""
    board, now = before.board, after.board
    origin, destination = move
    side = SIDE_IDS[before.side]
    piece, target = board[origin], board[destination]
    mover = describe_piece(piece)
    mover = mover[0].upper() + mover[1:]
    cells = (NAMES[origin], NAMES[destination])
    events = []
    if target:
        events.append(
            Event(
                EventKind.CAPTURED,
                f"{mover} {NAMES[origin]}x{NAMES[destination]} takes "
                f"{describe_piece(target, 'the')} on {NAMES[destination]}.",
                side=side,
                cells=cells,
                piece=KIND_IDS[kind_of(target)],
            )
        )
    else:
        events.append(
            Event(
                EventKind.MOVED,
                f"{mover} moves from {NAMES[origin]} to {NAMES[destination]}.",
                side=side,
                cells=cells,
                piece=KIND_IDS[kind_of(piece)],
            )
        )
    for cell in range(SQUARES):
        if board[cell] and not now[cell] and cell != origin:
            lost = board[cell]
            events.append(
                Event(
                    EventKind.CAPTURED,
                    f"The {SIDE_IDS[side_of(lost)]}'s {KIND_NAMES[kind_of(lost)]} on "
                    f"{NAMES[cell]}, left exposed to enemy Artillery, is lost "
                    f"(forced_reply=lose_figure).",
                    side=side,
                    cells=(NAMES[cell],),
                    piece=KIND_IDS[kind_of(lost)],
                )
            )
    rules = before.rules
    for owner in (ATTACKER, DEFENDER):
        was = exposed(board, owner, rules)
        if owner == before.side and origin in was:
            was = (was - {origin}) | {destination}
        for cell in sorted(exposed(now, owner, rules) - was):
            guns = commanders(now, cell, 1 - owner, rules)
            events.append(
                Event(
                    EventKind.EXPOSED,
                    f"The {SIDE_IDS[owner]}'s {KIND_NAMES[kind_of(now[cell])]} on "
                    f"{NAMES[cell]} is exposed to the {SIDE_IDS[1 - owner]}'s Artillery on "
                    f"{', '.join(NAMES[g] for g in guns)}.",
                    side=SIDE_IDS[owner],
                    cells=(NAMES[cell], *(NAMES[g] for g in guns)),
                    piece=KIND_IDS[kind_of(now[cell])],
                )
            )
    citadel = now.find(CITADEL_BYTE)
    if citadel >= 0:
        guns = commanders(now, citadel, ATTACKER, rules)
        if guns and not commanders(board, citadel, ATTACKER, rules):
            events.append(
                Event(
                    EventKind.CITADEL_COMMANDED,
                    f"Attacking Artillery on {', '.join(NAMES[g] for g in guns)} commands the "
                    f"Citadel on {NAMES[citadel]}: the defender must take or drive it off "
                    f"before moving otherwise.",
                    side="attacker",
                    cells=(NAMES[citadel], *(NAMES[g] for g in guns)),
                    piece="citadel",
                )
            )
    if ended is not None:
        events.append(Event(EventKind.GAME_OVER, ended.message, side=ended.winner))
    return events
