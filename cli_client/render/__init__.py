"""Drawing boards, status lines and events from the engine's descriptions.

Where things are:

- `board.py`   boards drawn from `DescribeGame`'s description, never from knowledge of a game
- `canvas.py`  a grid of characters with styles, turned into rich `Text` lines
- `panel.py`   text around the board: players, clocks and losses, events, tallies, legends
- `theme.py`   how things look: Unicode or ASCII, colours or none, the cell tags' symbols
"""

from cli_client.render.board import Scene, bottom_side, draw_board
from cli_client.render.theme import Theme

__all__ = ["Scene", "Theme", "bottom_side", "draw_board"]
