"""`wargame replay FILE`: step through a game record, drawn position by position.

The engine replays the record (`ReplayRecord` with every state); the client draws each
state and highlights the cells whose contents changed since the previous one.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from cli_client import wording
from cli_client.connection import Connection
from cli_client.errors import ClientError
from cli_client.render import bottom_side, draw_board
from cli_client.render.panel import legend
from cli_client.session import state_scene
from cli_client.terminal import Terminal
from wargame.v1 import engine_pb2, game_pb2

STEP_HELP = "Enter: next · b: back · a number: go to that move · s/e: start/end · q: quit"


def changed_cells(before: game_pb2.GameState, after: game_pb2.GameState) -> frozenset[str]:
    """Cells whose piece differs between two states."""
    old = {piece.cell: (piece.side, piece.kind) for piece in before.pieces}
    new = {piece.cell: (piece.side, piece.kind) for piece in after.pieces}
    return frozenset(cell for cell in old.keys() | new.keys() if old.get(cell) != new.get(cell))


class Replay:
    """A replayed record and its drawing."""

    def __init__(self, connection: Connection, terminal: Terminal, text: str) -> None:
        self.terminal = terminal
        self.reply: engine_pb2.ReplayRecordResponse = connection.replay_record(text)
        self.states = [self.reply.initial_state, *self.reply.states]
        game = self.reply.initial_state.game or self.reply.final_state.game
        description = connection.describe_game(game, dict(self.reply.initial_state.options))
        self.board = description.board
        reference = (
            self.reply.initial_state
            if self.reply.initial_state.pieces
            else description.initial_state
        )
        self.upper = bottom_side(self.board, reference)
        self.kinds = frozenset(piece.kind for each in self.states for piece in each.pieces)
        self.title = description.info.title or self.board.title

    @property
    def moves(self) -> int:
        """Number of actions in the record."""
        return len(self.reply.actions)

    def show(self, index: int) -> None:
        """Draw the position after `index` actions."""
        state = self.states[min(index, len(self.states) - 1)]
        theme = self.terminal.theme
        last = changed_cells(self.states[index - 1], state) if index > 0 else frozenset()
        scene = state_scene(self.board, state, last=last, upper_side=self.upper, kinds=self.kinds)
        if index == 0:
            head = (
                f"{self.title} — start ({self.moves} actions)"
                if theme.unicode
                else f"{self.title} - start ({self.moves} actions)"
            )
        else:
            action = self.reply.actions[index - 1]
            side = action.action.side
            who = f"{side[:1].upper()}{side[1:]}: " if side else ""
            head = f"Action {index}/{self.moves}: {who}{action.notation}"
        lines = [
            Text(""),
            Text(head, style=theme.style("bold")),
            *draw_board(scene, theme),
            *legend(scene, theme),
        ]
        if index == len(self.states) - 1 and state.HasField("outcome") and state.outcome.message:
            sides = [side.id for side in self.board.sides]
            result = wording.for_players(state.outcome.message, state.options, sides)
            lines.append(Text(f"Result: {result}"))
        self.terminal.print(*lines)

    def step(self) -> int:
        """Let the player step through the positions."""
        index = 0
        self.show(index)
        self.terminal.print(Text(STEP_HELP, style=self.terminal.theme.style("dim")))
        arrow = "› " if self.terminal.theme.unicode else "> "
        with self.terminal.session():
            while True:
                self.terminal.set_prompt(f"replay {index}/{self.moves} {arrow}")
                for line in self.terminal.read(0.2):
                    word = line.strip().lower()
                    if word in {"q", "quit", "exit"}:
                        return 0
                    if word in {"", "n", "next"}:
                        target = index + 1
                    elif word in {"b", "back", "p", "prev"}:
                        target = index - 1
                    elif word in {"s", "start"}:
                        target = 0
                    elif word in {"e", "end"}:
                        target = self.moves
                    elif word.isdigit():
                        target = int(word)
                    else:
                        self.terminal.print(Text(STEP_HELP))
                        continue
                    if not 0 <= target <= self.moves:
                        self.terminal.print(Text(f"there are positions 0 to {self.moves}"))
                        continue
                    index = target
                    self.show(index)
                if self.terminal.at_eof:
                    return 0


def replay(
    connection: Connection, terminal: Terminal, path: str, *, everything: bool, final: bool
) -> int:
    """Run `wargame replay`."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise ClientError(f"cannot read {path}: {error.strerror or error}") from None
    game = Replay(connection, terminal, text)
    if final:
        game.show(game.moves)
        return 0
    if everything or not terminal.interactive:
        for index in range(game.moves + 1):
            game.show(index)
        return 0
    return game.step()
