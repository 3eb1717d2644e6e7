"""A grid of characters with styles, turned into rich `Text` lines."""

from __future__ import annotations

from rich.text import Text


class Canvas:
    """Characters and styles on a fixed-size grid; unwritten cells are blank."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self._chars = [[" "] * width for _ in range(height)]
        self._styles: list[list[str]] = [[""] * width for _ in range(height)]
        self._used = [[False] * width for _ in range(height)]

    def inside(self, line: int, col: int) -> bool:
        """Whether a position is on the canvas."""
        return 0 <= line < self.height and 0 <= col < self.width

    def free(self, line: int, col: int) -> bool:
        """Whether a position is on the canvas and nothing was written there."""
        return self.inside(line, col) and not self._used[line][col]

    def put(self, line: int, col: int, text: str, style: str = "") -> None:
        """Write text from a position (clipped at the edges)."""
        for offset, char in enumerate(text):
            if self.inside(line, col + offset):
                self._chars[line][col + offset] = char
                self._styles[line][col + offset] = style
                self._used[line][col + offset] = True

    def lines(self) -> list[Text]:
        """The canvas as Text lines, trailing blanks removed."""
        out = []
        for chars, styles, used in zip(self._chars, self._styles, self._used, strict=True):
            end = len(chars)
            while end and chars[end - 1] == " " and not (used[end - 1] and styles[end - 1]):
                end -= 1
            text = Text(no_wrap=True, overflow="ignore")
            start = 0
            while start < end:
                stop = start
                while stop < end and styles[stop] == styles[start]:
                    stop += 1
                text.append("".join(chars[start:stop]), style=styles[start] or None)
                start = stop
            out.append(text)
        return out
