"""Game states as the matchmaker keeps them: the engine's compact form, read as little as it can.

The engine writes every state as its position text (docs/positions.md) plus a summary
(`to_act`, `ply`, `outcome`, `draw_offer`); asked for STATE_VIEW_POSITION it leaves the view
for drawing (`options`, `pieces`, `detail`) out. That compact form is what the matchmaker
stores, sends back to the engine and reads: the summary answers whose turn it is and how
the game ended. The text is read with the grammar both services share
(`wargame.position_text`), and only what it says alike for every game: the `turn:`
section's phase, for whether the rules still hide a secret deployment (`SECRET_PHASES`),
the `revealed <player>:` and `sealed <player>:` sections, the secrets a viewer other than
their player may not see, and the `players:` section, for who is out of a game of many
players. Everything else in the text is opaque here. A state with the view for drawing
answers the same questions from its view, read by the names every game's part of the view
that has them shares (`phase`, `players`, `armies`, `deployment`), whichever game it is:
this is the one module of the matchmaker that reads a game's own part of a state, and it
names no game. What a viewer may see of a state is decided here once (`for_viewer`).
Clients that draw get the view from the engine, as they did (`Engine.drawn`).
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf.message import Message

from wargame import position_text
from wargame.position_text import SECRET_PHASES
from wargame.v1 import game_pb2


def compact(state: game_pb2.GameState) -> game_pb2.GameState:
    """A state without its view for drawing (`options`, `pieces`, `detail`): what the engine
    answers for STATE_VIEW_POSITION. A state without a position is kept whole: it has
    nothing else."""
    if not state.position or not (state.pieces or state.options or state.WhichOneof("detail")):
        return state
    out = game_pb2.GameState()
    out.CopyFrom(state)
    out.ClearField("options")
    out.ClearField("pieces")
    detail = out.WhichOneof("detail")
    if detail:
        out.ClearField(detail)
    return out


def detail(state: game_pb2.GameState) -> Any:
    """The game's own part of a state's view for drawing, whichever game's message it is
    (None for a compact state)."""
    name = state.WhichOneof("detail")
    return getattr(state, name) if name else None


def _has(view: Message | None, field: str) -> bool:
    """True when the view has a field of this name (every game's that has one means the
    same by it)."""
    return view is not None and field in view.DESCRIPTOR.fields_by_name


def phase(state: game_pb2.GameState) -> str:
    """The phase word of the turn in progress: the position text's (`turn:`), else the
    view's `phase` as the text would write it ("" for a game without phases)."""
    if state.position:
        return position_text.turn_phase(state.position)
    view = detail(state)
    if view is None or not _has(view, "phase"):
        return ""
    enum = view.DESCRIPTOR.fields_by_name["phase"].enum_type
    name = enum.values_by_number[view.phase].name  # NAPOLEONIC_PHASE_MOVEMENT
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"  # NAPOLEONIC_PHASE_
    return str(name.removeprefix(prefix).lower())


def players_out(state: game_pb2.GameState) -> set[str]:
    """The players out of a game of N players (Guards lost, or surrendered): those its
    position text marks out (`!out`, `!surrendered` in its `players:` section, written once
    someone is out; docs/positions.md), or its view's players marked out."""
    view = detail(state)
    if _has(view, "players"):
        return {player.id for player in view.players if player.out}
    return position_text.players_out(state.position)


def alliance(state: game_pb2.GameState, side: str) -> str:
    """A side's alliance, as the view for drawing gives it (in a game of two sides each
    side is its own)."""
    view = detail(state)
    if _has(view, "players"):
        for player in view.players:
            if player.id == side:
                return str(player.alliance or side)
    return side


def army(state: game_pb2.GameState, side: str) -> list[str]:
    """The unit kinds `side` deploys, as the view for drawing lists its army (empty for a
    game whose sides deploy nothing)."""
    view = detail(state)
    if _has(view, "armies"):
        for found in view.armies:
            if found.player == side:
                return list(found.unit_types)
    return []


def hidden_pending(state: game_pb2.GameState) -> bool:
    """True while the rules still hide a secret deployment (before the arrays are laid out;
    a game that ends before then keeps them hidden for good)."""
    if state.position:
        return position_text.secret_phase(state.position)
    return phase(state) in SECRET_PHASES


def withheld(position: str, side: str) -> str:
    """A position text as `side` ("" for a spectator) may see it: the bodies of other
    players' revealed and sealed arrays replaced by `withheld`, the sections kept (so the
    text still says who has deployed, and the engine still reads it)."""
    return position_text.withhold(position, side)


def for_viewer(state: game_pb2.GameState, side: str) -> game_pb2.GameState:
    """The state as `side` ("" for a spectator) may see it: while the rules hide the
    deployment, other players' reveals and sealed arrays keep their player and lose their
    content, in the position text (their bodies `withheld`) and in the view for drawing when
    the state has one (the placements, the ciphertext), so the state still says who has
    deployed without saying how. The state itself when it hides nothing from `side`."""
    if not hidden_pending(state):
        return state
    copy = game_pb2.GameState()
    copy.CopyFrom(state)
    if copy.position:
        copy.position = withheld(copy.position, side)
        if copy.position != state.position:
            copy.ClearField("position_tag")  # the engine's tag is of the whole text
    view = detail(copy)
    if _has(view, "deployment"):
        deployment = view.deployment
        for reveal in deployment.reveals:
            if reveal.player != side:
                del reveal.placements[:]
                reveal.withheld = True
        for sealed in deployment.sealed:
            if sealed.player != side:
                sealed.ciphertext = b""
                sealed.withheld = True
    return state if copy == state else copy  # the author's own copy hides nothing
