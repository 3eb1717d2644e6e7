"""Drawing boards, status lines and events from the engine's descriptions."""

from cli_client.render.board import Scene, bottom_side, draw_board
from cli_client.render.theme import Theme

__all__ = ["Scene", "Theme", "bottom_side", "draw_board"]
