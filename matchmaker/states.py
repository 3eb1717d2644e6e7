"""Game states as the matchmaker keeps them: the engine's compact form, read as little as it can.

The engine writes every state as its position text (docs/positions.md) plus a summary
(`to_act`, `ply`, `outcome`, `draw_offer`); asked for STATE_VIEW_POSITION it leaves the view
for drawing (`options`, `pieces`, `detail`) out. That compact form is what the matchmaker
stores, sends back to the engine and reads: the summary answers whose turn it is and how
the game ended. The text is split with the grammar both services share
(`wargame.position_text`), and only three of its sections are read, whatever the game: the
`turn:` section's phase, for whether the rules still hide a secret deployment (Napoleonic
Chess 10.1), the `revealed <player>:` and `sealed <player>:` sections, the secrets a viewer
other than their player may not see, and the `players:` section, for who is out of a game
of many players. Everything else in the text is opaque here. A state with the view for
drawing answers the same questions from its view (`players_out`, `alliance`,
`hidden_pending`): this is the one module of the matchmaker that reads a game's own part
of a state (the bot, which plays the secret deployment, aside). What a viewer may see of a
state is decided here once (`for_viewer`). Clients that draw get the view from the engine,
as they did (`Engine.drawn`).
"""

from __future__ import annotations

import re

from wargame.position_text import WITHHELD, head_and_body, split_sections
from wargame.v1 import game_pb2, napoleonic_pb2

# The phases in which the rules hide a secret deployment (Napoleonic Chess 10.1), as a
# position text's `turn:` section names them and as the structured view of a state stored
# before positions existed numbers them.
HIDDEN_PHASE_WORDS = frozenset({"deploy_commit", "deploy_reveal", "deploy_sealed"})
HIDDEN_PHASES = frozenset(
    {
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
    }
)
# A deployment section whose body is another player's secret: `revealed <p>: ...`,
# `sealed <p>: ...` (commitments are digests: they hide nothing).
_SECRET = re.compile(r"(\s*(?:revealed|sealed) )([^:\s]+)(:\s*)(.*?)(\s*)", re.DOTALL)


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


def section_body(position: str, head: str) -> str:
    """The body of the section with this head ("" if the text has none)."""
    for section in split_sections(position):
        found, body = head_and_body(section)
        if found == head:
            return body
    return ""


def turn_phase(state: game_pb2.GameState) -> str:
    """The phase word of a position text's `turn:` section ("" for texts without one: set-ups,
    and games without phases)."""
    words = section_body(state.position, "turn").split()
    return words[1] if len(words) > 1 else ""


def players_out(state: game_pb2.GameState) -> set[str]:
    """The players out of a game of N players (Guards lost, or surrendered): those its
    position text marks out (`!out`, `!surrendered` in its `players:` section, written once
    someone is out; docs/positions.md), or its view's players marked out."""
    if state.WhichOneof("detail") == "napoleonic":
        return {player.id for player in state.napoleonic.players if player.out}
    if "!" not in state.position:
        return set()
    return {
        word.split("/", 1)[0]
        for word in section_body(state.position, "players").split()
        if word.endswith(("!out", "!surrendered"))
    }


def alliance(state: game_pb2.GameState, side: str) -> str:
    """A side's alliance, as the view for drawing gives it (in a game of two sides each
    side is its own)."""
    if state.WhichOneof("detail") == "napoleonic":
        for player in state.napoleonic.players:
            if player.id == side:
                return player.alliance or side
    return side


def hidden_pending(state: game_pb2.GameState) -> bool:
    """True while the rules still hide a secret deployment (before the arrays are laid out;
    a game that ends before then keeps them hidden for good)."""
    if state.position:
        return "deploy_" in state.position and turn_phase(state) in HIDDEN_PHASE_WORDS
    return state.WhichOneof("detail") == "napoleonic" and state.napoleonic.phase in HIDDEN_PHASES


def withheld(position: str, side: str) -> str:
    """A position text as `side` ("" for a spectator) may see it: the bodies of other
    players' revealed and sealed arrays replaced by `withheld`, the sections kept (so the
    text still says who has deployed, and the engine still reads it)."""
    parts = split_sections(position)
    changed = False
    for index, part in enumerate(parts):
        found = _SECRET.fullmatch(part)
        if found is None or found.group(2) == side or found.group(4) == WITHHELD:
            continue
        lead, head, colon, _, tail = found.groups()
        parts[index] = f"{lead}{head}{colon}{WITHHELD}{tail}"
        changed = True
    return ";".join(parts) if changed else position


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
    if copy.WhichOneof("detail") == "napoleonic":
        deployment = copy.napoleonic.deployment
        for reveal in deployment.reveals:
            if reveal.player != side:
                del reveal.placements[:]
                reveal.withheld = True
        for sealed in deployment.sealed:
            if sealed.player != side:
                sealed.ciphertext = b""
                sealed.withheld = True
    return state if copy == state else copy  # the author's own copy hides nothing
