"""What the player is told and asked: the first line of a game, what it waits for, what to do
now, and the prompt line.

Texts only, from the session and what the loop knows (a question asked, a rematch offered,
the game's prompt label); `play.Play` puts them on the display. Being plain functions, they
are tested without a terminal.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from cli_client.defaults import BOT_LEVELS
from cli_client.session import GameSession

# How the player asks for another bot level where the game was started: `--level 1` for
# `wargame play`; `make play` (deploy/local/stack.py) sets this to its own command with
# `{level}` where the number goes ("make play GAME=battle LEVEL={level}").
LEVEL_COMMAND = "WARGAME_LEVEL_COMMAND"


def level_command(level: int, template: str | None = None) -> str:
    """The words that start a game against the bot at `level` (from `template`, else from
    the environment's LEVEL_COMMAND, else `--level N`)."""
    if template is None:
        template = os.environ.get(LEVEL_COMMAND, "")
    return (template or "--level {level}").replace("{level}", str(level))


INTRO = (
    "Type your actions in the game's notation; `moves` lists the legal ones (`moves {cell}`: "
    "from one square), `hint` suggests one, `help` shows the rest."
)


def welcome(session: GameSession, levels: str | None = None) -> str:
    """The first line of a game: its id, the player's side, the bot's level if it plays, and
    how to ask for another level where the game was started (`levels`: see level_command)."""
    side = session.name(session.your_side) if session.your_side else "?"
    line = f"Game {session.game_id}: you play {side}"
    bots = [seat for seat in session.seats() if seat.bot]
    bot = bots[0] if bots else None
    if session.multiplayer:
        allies = [
            session.name(other)
            for other, alliance in session.alliances().items()
            if other != session.your_side and alliance == session.alliances().get(session.your_side)
        ]
        line += f" with {', '.join(allies)}" if allies else ""
        if bot is not None:
            line += f"; the bot plays {', '.join(session.name(seat.side) for seat in bots)}"
            line += f" at level {bot.level} of {BOT_LEVELS}" if bot.level else ""
        return line + "."
    if bot is not None and bot.level:
        line += f" against the bot at level {bot.level} of {BOT_LEVELS}"
        if bot.level > 1:
            line += f" (`{level_command(1, levels)}` is the easiest)"
        else:
            line += f", the easiest (`{level_command(BOT_LEVELS, levels)}` is the strongest)"
    return line + "."


def awaited(session: GameSession) -> str:
    """Who an open game waits for: "an opponent", or in a game of more than two players
    the free seats ("players for the free seats Blue, Green")."""
    if not session.multiplayer:
        return "an opponent"
    free = [session.name(seat.side) for seat in session.view.seats if not seat.HasField("player")]
    return "players for the free seats " + ", ".join(free)


def example_cell(session: GameSession) -> str:
    """A square of this board with one of the player's pieces (for examples)."""
    order = {cell.name: index for index, cell in enumerate(session.board.cells)}
    own = [piece.cell for piece in session.state.pieces if piece.side == session.your_side]
    return min(own, key=lambda cell: order.get(cell, len(order)), default="SQUARE")


def announcements(
    session: GameSession,
    *,
    spectator: bool,
    invite_code: str,
    game_lines: Callable[[], list[str]],
) -> list[str]:
    """What the player should do now: who the game waits for, a draw offer, and on the
    player's turn the game's own lines (`game_lines`, asked only then)."""
    if session.finished:
        return []
    if not session.started:
        code = invite_code or session.view.invite_code
        if session.view.rematch_of:
            game = session.game_id
            return [f"Rematch offered: waiting for your opponent to accept (game {game})."]
        if code:
            seat = " --seat SIDE" if session.multiplayer else ""
            join = f"`wargame play --join {code}{seat}`"
            return [f"Waiting for {awaited(session)}. Invite code: {code} — they join with {join}."]
        return [f"Waiting for {awaited(session)} to join game {session.game_id}."]
    lines = []
    offer = session.state.draw_offer
    if offer and not spectator:
        if offer != session.your_side:
            lines.append(f"{session.name(offer)} offers a draw — type `accept` or `decline`.")
        else:
            lines.append("Your draw offer stands.")
    if session.my_turn:
        lines += game_lines()
    return lines


@dataclass(frozen=True)
class Prompt:
    """The prompt line: its text, whether it is bold, and what is awaited meanwhile."""

    text: str
    bold: bool = False
    waiting: str = ""


def prompt(
    session: GameSession,
    *,
    spectator: bool,
    question: str | None,
    rematch_offered: bool,
    label: str,
    unicode: bool,
) -> Prompt:
    """The prompt for the moment: a question's, after the game's, while waiting, watching,
    or on the player's turn (the side's name and the game's `label`, such as the phase)."""
    arrow = "› " if unicode else "> "
    if question is not None:
        return Prompt(f"{question} y/N {arrow}", bold=True)
    if session.finished:
        offer = "rematch offered · " if rematch_offered else ""
        return Prompt(f"{offer}rematch or quit {arrow}")
    if not session.started:
        waiting = "waiting for players" if session.multiplayer else "waiting for an opponent"
        return Prompt(arrow, waiting=waiting)
    acting = ", ".join(session.seat_name(side) for side in session.to_act) or "nobody"
    if spectator:
        return Prompt(arrow, waiting=f"watching · {acting} to act")
    if session.my_turn:
        name = session.name(session.your_side)
        return Prompt(f"{name} · {label} {arrow}" if label else f"{name} {arrow}", bold=True)
    return Prompt(arrow, waiting=f"waiting for {acting}")
