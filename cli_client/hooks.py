"""What a game adds to the game-agnostic loop (`play.Play`): nothing, unless it says so.

The loop asks its game's hooks at fixed points: which cells and pieces to add to the
drawing, what to say when the turn changes, what to put beside the prompt, which typed
words are the game's own, what to do by itself when the state calls for it. A game that
needs any of this subclasses `GameHooks` and is registered once, in `play.HOOKS`.
"""

from __future__ import annotations

from typing import Protocol

from cli_client.commands import Command
from cli_client.connection import Connection
from cli_client.identity import Store
from cli_client.session import GameSession
from wargame.v1 import game_pb2


class Table(Protocol):
    """What hooks may use of the loop."""

    connection: Connection
    store: Store
    session: GameSession
    spectator: bool

    def note(self, text: str) -> None:
        """Say a line of information."""

    def error(self, text: str) -> None:
        """Say an error as one line."""

    def show_board(self) -> None:
        """Draw the game again."""

    def check_turn(self) -> None:
        """Refuse (ClientError) when the player may not act now."""

    def submit(self, actions: list[game_pb2.Action]) -> None:
        """Send actions and show what they did."""

    def legal_notations(self) -> list[str]:
        """The legal actions now, as the engine writes them."""


class GameHooks:
    """The hooks of a game that needs none."""

    def __init__(self, table: Table) -> None:
        self.table = table

    @property
    def session(self) -> GameSession:
        """The game."""
        return self.table.session

    @property
    def deploying(self) -> bool:
        """Whether the player is building a secret set-up (typed words mean placements)."""
        return False

    def handle(self, command: Command) -> bool:
        """Carry out a command of the game's own; False when it is not one."""
        return False

    def marked(self) -> set[str]:
        """Cells to pick out on the board."""
        return set()

    def extra_pieces(self) -> list[game_pb2.Piece]:
        """Pieces to draw that are not in the state (a set-up being built)."""
        return []

    def prompt_label(self) -> str:
        """Words after the side's name in the prompt ("movement")."""
        return ""

    def guidance(self) -> str:
        """What the player does now ("" when there is nothing to add)."""
        return ""

    def announce(self) -> list[str]:
        """Lines to say when the turn or phase changes to the player."""
        guidance = self.guidance()
        return [guidance] if guidance else []

    def status(self) -> list[str]:
        """Lines for the side panel beyond what the state shows."""
        return []

    def changed(self) -> None:
        """The game moved on: refresh whatever the hooks keep about it."""

    def automatic(self) -> None:
        """Do by itself what needs no decision of the player (called every loop turn)."""
