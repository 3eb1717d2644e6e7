"""Game states as the matchmaker keeps them: the engine's compact form, read as little as it can.

The engine writes every state as its position text (docs/positions.md) plus a summary
(`to_act`, `ply`, `outcome`, `draw_offer`); asked for STATE_VIEW_POSITION it leaves the view
for drawing (`options`, `pieces`, `detail`) out. That compact form is what the matchmaker
stores, sends back to the engine and reads: the summary answers whose turn it is and how
the game ended, and the only parts of the text it looks into are Napoleonic Chess's `turn:`
section and deployment sections, to keep secret arrays secret (rules 10.1), and its
`players:` section, for who is out of a game of many players. Everything else
in the text is opaque to it. Clients that draw get the view from the engine, as they did
(`Engine.drawn`).
"""

from __future__ import annotations

import re

from wargame.v1 import game_pb2, napoleonic_pb2

# The phases in which the rules hide a secret deployment (Napoleonic Chess 10.1), as the
# position text's `turn:` section names them and as the structured view numbers them.
HIDDEN_PHASE_WORDS = frozenset({"deploy_commit", "deploy_reveal", "deploy_sealed"})
HIDDEN_PHASES = frozenset(
    {
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_COMMIT,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_REVEAL,
        napoleonic_pb2.NAPOLEONIC_PHASE_DEPLOY_SEALED,
    }
)
WITHHELD = "withheld"  # the body of an array a viewer may not see (docs/positions.md)

# A `;`-separated section, a double-quoted value (with `\"` and `\\` escapes) kept whole.
_SECTION = re.compile(r'(?:[^;"]|"(?:[^"\\]|\\.)*")+')
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


def sections(text: str) -> list[str]:
    """The `;`-separated sections of a position text, as written (quoted values kept whole)."""
    if '"' not in text:
        return text.split(";")
    return _SECTION.findall(text)


def napoleonic_phase(state: game_pb2.GameState) -> str:
    """The phase word of a Napoleonic state's `turn:` section ("" for other games and for
    set-ups)."""
    if state.game != "napoleonic":
        return ""
    for section in sections(state.position):
        head, _, body = section.strip().partition(":")
        if head == "turn":
            words = body.split()
            return words[1] if len(words) > 1 else ""
    return ""


def players_out(state: game_pb2.GameState) -> set[str]:
    """The players a Napoleonic position text marks out (`!out`, `!surrendered` in its
    `players:` section, written once someone is out; docs/positions.md)."""
    if state.game != "napoleonic" or "!" not in state.position:
        return set()
    for section in sections(state.position):
        head, _, body = section.strip().partition(":")
        if head == "players":
            return {
                word.split("/", 1)[0]
                for word in body.split()
                if word.endswith(("!out", "!surrendered"))
            }
    return set()


def hidden_pending(state: game_pb2.GameState) -> bool:
    """True while the rules still hide a secret deployment (before the arrays are laid out;
    a game that ends before then keeps them hidden for good)."""
    if state.position:
        return "deploy_" in state.position and napoleonic_phase(state) in HIDDEN_PHASE_WORDS
    return state.WhichOneof("detail") == "napoleonic" and state.napoleonic.phase in HIDDEN_PHASES


def withheld(position: str, side: str) -> str:
    """A Napoleonic position text as `side` ("" for a spectator) may see it: the bodies of
    other players' revealed and sealed arrays replaced by `withheld`, the sections kept (so
    the text still says who has deployed, and the engine still reads it)."""
    parts = sections(position)
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
    """The compact state as `side` ("" for a spectator) may see it."""
    if not hidden_pending(state):
        return state
    position = withheld(state.position, side)
    if position == state.position:
        return state
    out = game_pb2.GameState()
    out.CopyFrom(state)
    out.position = position
    return out
