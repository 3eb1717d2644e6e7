"""The full-screen view: one screen updated in place, built on prompt_toolkit.

    ┌ board ───────────────┐  title, players and clocks (ticking), game status
    │                      │  legend: pieces, sides, marks
    │                      │  moves: the last ones that fit
    └──────────────────────┘
    ─────────────────────────────────────────────────────────────
    the latest events and messages, word-wrapped to the width
    spinner · what is awaited · time                (status line)
    South › the input line (history: up/down, Tab completes)

A long answer (`help`, `moves`, a combat report) that the log pane cannot show whole opens
in the pager, over board and log: PageUp/PageDown, ↑↓ and the mouse wheel scroll it, Esc
(or Enter on an empty input line) closes it, and typing goes on meanwhile. PageUp
or the wheel, with the pager closed, open the whole log in it: every line the game wrote
can be read at any size.

The application runs in the main thread (it owns the terminal, resizes and keys); the game
loop runs in a worker thread and talks to this class through the `Display` methods, which
only store what to show and ask for a redraw. Typed lines go to the loop through a queue.
Drawings are the same `render/` code as the line display, turned into ANSI text.
When the view closes, the last drawing and the farewell lines are printed to the normal
screen (after those of the games played before it), so the end of each game stays in the
terminal's scrollback.
"""

from __future__ import annotations

import contextlib
import copy
import io
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, ThreadedCompleter
from prompt_toolkit.data_structures import Point
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    ConditionalContainer,
    Container,
    DynamicContainer,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.mouse_events import MouseEvent, MouseEventType
from prompt_toolkit.output.color_depth import ColorDepth
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from cli_client.render import panel
from cli_client.render.board import Scene, draw_board
from cli_client.session import GameSession
from cli_client.terminal import SPINNER_UNICODE, Terminal, elapsed
from cli_client.wording import as_played

if TYPE_CHECKING:
    from prompt_toolkit.key_binding.key_bindings import NotImplementedOrNone

REFRESH_SECONDS = 0.5  # clocks and the spinner move this often
BUSY_DRAWN_SECONDS = 2.0  # the longest a piece of work waits for its status line to be drawn
GAP = 3  # columns between the board and the side panel
SIDE_MIN = 30  # narrowest side panel beside the board; narrower terminals stack them
LOG_KEPT = 5000  # messages kept for the log (the pager reads them all)
WHEEL_LINES = 3  # lines a turn of the mouse wheel scrolls
MOVE_LINES_MIN = 2
LOG_LINES_MIN = 3
# The compact layout, when the board does not fit otherwise (Battle's board at 80x24): the
# board drawn with one line per row, a narrower panel beside it, two lines of events.
COMPACT_GAP = 2
COMPACT_SIDE_MIN = 20
COMPACT_LOG_LINES_MIN = 2
INPUT_STYLE = "fg:#ececec bg:#2b2b2b"
LEGEND_ITEMS = re.compile(r"  | · | - ")  # between the items of a legend line (panel.legend)
KEYS = "Enter sends · ↑↓ history · Tab completes · PgUp log · `help` · Ctrl-C leaves"
PAGER_KEYS = "PgUp/PgDn ↑↓ wheel scroll · Esc closes"

Shown = tuple[GameSession | None, Scene | None]  # the game as one drawing reads it


class _Signal:
    """A key that is not a line: Ctrl-C or end of input."""


INTERRUPT = _Signal()
END_OF_INPUT = _Signal()


def packed(items: Sequence[str], width: int) -> list[str]:
    """Items two spaces apart, as many to a row as fit and none split between rows ("7.
    move b2-c2" stays whole); an item longer than a row is a row of its own."""
    rows: list[str] = []
    for item in items:
        if rows and cell_len(rows[-1]) + 2 + cell_len(item) <= width:
            rows[-1] += "  " + item
        else:
            rows.append(item)
    return rows


class _Wheel(FormattedTextControl):
    """Text that scrolls something with the mouse wheel (`on_wheel(lines)`, up negative)."""

    def __init__(self, text: Callable[[], ANSI], on_wheel: Callable[[int], None]) -> None:
        super().__init__(text)
        self.on_wheel = on_wheel

    def mouse_handler(self, mouse_event: MouseEvent) -> NotImplementedOrNone:
        """The wheel scrolls; other mouse events are not handled."""
        if mouse_event.event_type == MouseEventType.SCROLL_UP:
            self.on_wheel(-WHEEL_LINES)
            return None
        if mouse_event.event_type == MouseEventType.SCROLL_DOWN:
            self.on_wheel(WHEEL_LINES)
            return None
        return NotImplemented


@dataclass
class Pager:
    """Lines shown over the screen until the player closes them."""

    title: str
    lines: list[Text]
    top: int = 0  # the first line shown (of the lines wrapped to the width)
    wrapped: tuple[int, list[Text]] | None = None  # the lines wrapped, and the width they fit


@dataclass(frozen=True)
class Geometry:
    """How the screen is divided for a terminal size."""

    columns: int
    rows: int
    side_by_side: bool
    board_width: int
    board_height: int
    side_width: int
    side_height: int
    log_height: int
    gap: int = GAP  # columns between the board and the panel beside it
    compact: bool = False  # the compact layout and drawing
    fits: bool = True  # the whole board is on the screen


@dataclass(frozen=True)
class Frame:
    """What one render of the view draws (`FullScreen._framed`): the game as it reads it,
    the division of the screen, and the board's lines in that division (normal or compact)
    with their ANSI text."""

    render: int  # prompt_toolkit's count of renders
    shown: Shown
    geometry: Geometry
    board: Sequence[Text]
    board_ansi: ANSI


class _Words(Completer):
    """Completes the line from the client's words and the legal actions."""

    def __init__(self, source: Callable[[], Sequence[str]]) -> None:
        self.source = source

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        """Candidates that start with what is typed (case does not matter)."""
        typed = document.text_before_cursor
        lowered = typed.lower()
        seen: set[str] = set()
        for word in self.source():
            if word.lower().startswith(lowered) and word != typed and word not in seen:
                seen.add(word)
                yield Completion(word, start_position=-len(typed))


class FullScreen:
    """A `Display` that keeps the whole game on one screen."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.theme = terminal.theme
        self._lines: queue.Queue[str | _Signal] = queue.Queue()
        self._lock = threading.Lock()
        self._log: list[Text] = []
        self._logged = 0  # changes of `_log`: its drawing is made again only after one
        self._log_drawn: tuple[tuple[int, int, int], ANSI] | None = None  # (changes, size), text
        self._farewell: list[Text] = []
        self._earlier: list[Text] = []  # the farewells of games played before this one
        self._session: GameSession | None = None
        self._scene: Scene | None = None
        self._board: list[Text] = []
        self._board_ansi = ANSI("")
        self._compact: list[Text] = []  # the board drawn compact
        self._compact_ansi = ANSI("")
        self._prompt = Text("")
        self._waiting = ""
        self._waiting_since = time.monotonic()
        self._busy = ""
        self._busy_shown = threading.Event()  # the status line was drawn saying `_busy`
        self._eof = False
        self._interrupted = False
        self._words: Callable[[], Sequence[str]] = lambda: []
        self._pager: Pager | None = None
        self._frame: Frame | None = None  # the last render's (`_framed`)
        self._console = Console(
            file=io.StringIO(),
            force_terminal=True,
            color_system="truecolor" if self.theme.colour else None,
            no_color=not self.theme.colour,
            width=1000,
            highlight=False,
            markup=False,
            emoji=False,
        )
        self.buffer = Buffer(
            multiline=False,
            history=InMemoryHistory(),
            completer=ThreadedCompleter(_Words(self._candidates)),
            accept_handler=self._accept,
        )
        self.app: Application[int] = self._application()

    # -- the application -------------------------------------------------------------

    def _application(self) -> Application[int]:
        input_line = Window(
            BufferControl(self.buffer, input_processors=[BeforeInput(self._prompt_text)]),
            height=1,
            style=INPUT_STYLE if self.theme.colour else "reverse",  # a field to type in
        )
        board = Window(
            # A board taller than the screen shows its lower part: the player's own side.
            FormattedTextControl(
                self._board_text,
                get_cursor_position=lambda: Point(0, max(len(self._drawing()) - 1, 0)),
                show_cursor=False,
            ),
            width=lambda: Dimension.exact(self.geometry().board_width),
            height=lambda: Dimension.exact(self.geometry().board_height),
            dont_extend_width=True,
        )
        side = Window(
            FormattedTextControl(self._side_text),
            height=lambda: Dimension.exact(self.geometry().side_height),
        )
        gap = Window(width=lambda: Dimension.exact(self.geometry().gap))

        def top() -> Container:
            if self.geometry().side_by_side:
                return VSplit([board, gap, side])
            return HSplit([board, side])

        rule = "─" if self.theme.unicode else "-"
        body = HSplit(
            [
                DynamicContainer(top),
                Window(height=1, char=rule, style="fg:ansibrightblack"),
                Window(
                    _Wheel(self._log_text, self._scroll),
                    height=lambda: Dimension.exact(self.geometry().log_height),
                ),
                Window(FormattedTextControl(self._status_text), height=1),
                input_line,
            ]
        )
        paging = Condition(lambda: self._pager is not None)
        pager = ConditionalContainer(
            HSplit(
                [
                    Window(_Wheel(self._pager_text, self._scroll), wrap_lines=False),
                    Window(
                        FormattedTextControl(self._pager_footer),
                        height=1,
                        style=INPUT_STYLE if self.theme.colour else "reverse",
                    ),
                ]
            ),
            filter=paging,
        )
        root = FloatContainer(
            content=body,
            floats=[
                Float(pager, top=0, left=0, right=0, bottom=2),  # above status and input
                Float(xcursor=True, ycursor=True, content=CompletionsMenu(max_height=8)),
            ],
        )
        keys = KeyBindings()
        empty_line = Condition(lambda: not self.buffer.text)

        @keys.add("pageup")
        def _page_up(event: KeyPressEvent) -> None:
            self._scroll(-self._pager_height() + 1)

        @keys.add("pagedown", filter=paging)
        def _page_down(event: KeyPressEvent) -> None:
            self._scroll(self._pager_height() - 1)

        @keys.add("up", filter=paging, eager=True)
        def _line_up(event: KeyPressEvent) -> None:
            self._scroll(-1)

        @keys.add("down", filter=paging, eager=True)
        def _line_down(event: KeyPressEvent) -> None:
            self._scroll(1)

        @keys.add("escape", filter=paging, eager=True)
        @keys.add("enter", filter=paging & empty_line, eager=True)
        def _close_pager(event: KeyPressEvent) -> None:
            self._close_pager()

        @keys.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            if self._interrupted:  # a second Ctrl-C while the loop is busy: leave now
                event.app.exit(result=130)
                return
            self._interrupted = True
            self._lines.put(INTERRUPT)

        @keys.add("c-d")
        def _end(event: KeyPressEvent) -> None:
            if self.buffer.text:
                self.buffer.delete()
            else:
                self._lines.put(END_OF_INPUT)

        return Application(
            layout=Layout(root, focused_element=input_line),
            key_bindings=keys,
            full_screen=True,
            refresh_interval=REFRESH_SECONDS,
            color_depth=ColorDepth.TRUE_COLOR if self.theme.colour else ColorDepth.DEPTH_1_BIT,
            mouse_support=True,  # the wheel scrolls (Shift selects text in most terminals)
        )

    def _accept(self, buffer: Buffer) -> bool:
        self._lines.put(buffer.text)
        self._pager = None  # a line sent: back to the game
        return False  # clear the line (it is kept in the history)

    # -- the pager -----------------------------------------------------------------------

    def _pager_height(self) -> int:
        """Rows of text in the pager (all but its footer, the status and input lines)."""
        return max(self._size()[1] - 3, 1)

    def _pager_lines(self) -> list[Text]:
        """The pager's lines wrapped to the terminal's width, once for each width: a render
        asks for them twice, and wrapping a long game's whole log took half a second."""
        pager = self._pager
        if pager is None:
            return []
        width = self._size()[0] - 1
        if pager.wrapped is None or pager.wrapped[0] != width:
            pager.wrapped = (width, self._wrapped(pager.lines, width))
        return pager.wrapped[1]

    def _scroll(self, lines: int) -> None:
        """Scroll the pager by `lines` (up negative); up with it closed opens the whole log
        at its end."""
        if self._pager is None:
            if lines >= 0:
                return
            with self._lock:
                log = list(self._log)
            self._pager = Pager("the game's log", log, top=1 << 30)
            lines = 0
        pager = self._pager
        last = max(len(self._pager_lines()) - self._pager_height(), 0)
        pager.top = max(0, min(pager.top + lines, last))
        self._changed()

    def _close_pager(self) -> None:
        self._pager = None
        self._changed()

    def _pager_text(self) -> ANSI:
        pager = self._pager
        if pager is None:
            return ANSI("")
        height = self._pager_height()
        return self._ansi(self._pager_lines()[pager.top : pager.top + height])

    def _pager_footer(self) -> ANSI:
        pager = self._pager
        if pager is None:
            return ANSI("")
        total = len(self._pager_lines())
        shown = min(pager.top + self._pager_height(), total)
        where = f"{pager.top + 1}-{shown} of {total}" if total else "empty"
        return self._ansi([Text(f" {pager.title}: lines {where} · {PAGER_KEYS}")])

    def run(self, body: Callable[[], int]) -> int:
        """Run the loop in a worker thread while the view owns the terminal."""
        outcome: list[int] = []
        failure: list[BaseException] = []

        def work() -> None:
            try:
                outcome.append(body())
            except BaseException as error:  # handed to the main thread
                failure.append(error)
            finally:
                self._close()

        def start() -> None:
            threading.Thread(target=work, name="game-loop", daemon=True).start()

        result = self.app.run(pre_run=start)
        self._goodbye()
        if failure:
            raise failure[0]
        return outcome[0] if outcome else result

    def _close(self) -> None:
        loop = self.app.loop
        if loop is None:
            return

        def close() -> None:
            if self.app.is_running and not self.app.is_done:
                self.app.exit(result=0)

        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(close)

    def _goodbye(self) -> None:
        """The last drawing and the farewell lines, on the normal screen."""
        console = self.terminal.console
        for line in self._earlier:
            console.print(line, soft_wrap=False)
        if self._session is not None and self._scene is not None:
            console.print(Text(""))
            for line in panel.screen(self._session, self.theme, console.width, scene=self._scene):
                console.print(line)
        for line in self._farewell:
            console.print(line, soft_wrap=False)

    def _changed(self) -> None:
        self.app.invalidate()

    # -- what the loop shows ---------------------------------------------------------

    @property
    def width(self) -> int:
        """Columns of the log pane."""
        return self._size()[0]

    @property
    def at_eof(self) -> bool:
        """Whether the player ended input (Ctrl-D on an empty line)."""
        return self._eof

    def complete_from(self, source: Callable[[], Sequence[str]]) -> None:
        """Where Tab finds its candidates."""
        self._words = source

    def _candidates(self) -> Sequence[str]:
        return self._words()

    def game(self, session: GameSession, scene: Scene) -> None:
        """Keep the game and draw its board once (the panel is drawn on every refresh)."""
        board = draw_board(scene, self.theme)
        compact = draw_board(scene, self.theme, compact=True)
        with self._lock:
            if self._session is not None and self._session.game_id != session.game_id:
                self._earlier += self._farewell  # a rematch: the last game's lines come first
                self._farewell = []
                self._log = []  # and the log is the new game's
                self._logged += 1
            self._session, self._scene = session, scene
            self._board = board
            self._board_ansi = self._ansi(board)
            self._compact = compact
            self._compact_ansi = self._ansi(compact)
        self._changed()

    def played(
        self, who: str, notations: Sequence[str], events: Sequence[Text], *, report: bool = False
    ) -> None:
        """What was played, into the log (a combat `report` too long for it: the pager)."""
        lines: list[Text] = []
        if notations:
            text = Text(f"{who}: " if who else "")
            text.append(", ".join(notations), style=self.theme.style("bold"))
            lines.append(text)
        if report:
            self.page("combat", *lines, *events)
        else:
            self._add(*lines, *events)

    def say(self, *lines: Text) -> None:
        """Lines into the log."""
        self._add(*lines)

    def remember(self, *lines: Text) -> None:
        """Lines printed before the view: the first of its log (the view hides them)."""
        with self._lock:
            self._log[:0] = lines
            self._logged += 1

    def page(self, title: str, *lines: Text) -> None:
        """A long answer: into the log, and into the pager if the log pane cannot show it
        whole."""
        self._add(*lines)
        geometry = self._divided()[1]  # as it stands, not as drawn
        if len(self._wrapped(lines, geometry.columns - 1)) > geometry.log_height:
            self._pager = Pager(title, list(lines))
            self._changed()

    def _add(self, *lines: Text) -> None:
        with self._lock:
            self._log.extend(lines)
            del self._log[:-LOG_KEPT]
            self._logged += 1
        self._changed()

    def prompt(self, prompt: Text, waiting: str = "") -> None:
        """The prompt before the input line, and what is awaited."""
        with self._lock:
            if waiting != self._waiting:
                self._waiting = waiting
                self._waiting_since = time.monotonic()
            changed = prompt.markup != self._prompt.markup
            self._prompt = prompt
        if changed:
            self._changed()

    @contextlib.contextmanager
    def busy(self, what: str) -> Iterator[None]:
        """Show `what` in the status line meanwhile: drawn before the work starts (a quick
        answer would otherwise come before the next frame, and the player saw nothing
        working), or after `BUSY_DRAWN_SECONDS` on a terminal too slow to draw it."""
        self._busy_shown.clear()
        self._busy = what
        self._changed()
        self._busy_shown.wait(BUSY_DRAWN_SECONDS)
        try:
            yield
        finally:
            self._busy = ""
            self._changed()

    def read(self, timeout: float) -> list[str]:
        """Lines typed since the last read (waiting up to `timeout` for the first)."""
        items: list[str | _Signal] = []
        try:
            items.append(self._lines.get(timeout=timeout))
            while True:
                items.append(self._lines.get_nowait())
        except queue.Empty:
            pass
        lines: list[str] = []
        for item in items:
            if item is INTERRUPT:
                raise KeyboardInterrupt
            if item is END_OF_INPUT:
                self._eof = True
                break
            if isinstance(item, str):
                lines.append(item)
        return lines

    def tick(self) -> None:
        """Nothing: the view refreshes by itself."""

    def bell(self) -> None:
        """The bell, through the view's output (unless `--no-bell`)."""
        loop = self.app.loop
        if not self.terminal.bell or loop is None:
            return

        def ring() -> None:
            self.app.output.bell()
            self.app.output.flush()

        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(ring)

    def farewell(self, *lines: Text) -> None:
        """Shown now, and printed again when the view has closed."""
        self._farewell.extend(lines)
        self._add(*lines)

    # -- drawing -----------------------------------------------------------------------

    def _size(self) -> tuple[int, int]:
        app: Application[int] | None = getattr(self, "app", None)  # None while it is built
        try:
            if app is None:
                raise OSError
            size = app.output.get_size()
        except OSError:
            return self.terminal.console.width, self.terminal.console.height
        return size.columns, size.rows

    def geometry(self) -> Geometry:
        """The division of the screen for the render being drawn (`_framed`)."""
        return self._framed().geometry

    def _framed(self) -> Frame:
        """What the render being drawn draws, worked out at its first asking and kept whole
        through it. A render asks each window's size and text several times: working them
        out at each asking kept a view left open a tenth of a core busy, and parts worked
        out at different moments of one render could disagree (resized meanwhile: a board
        text shorter than the row its cursor is put on). prompt_toolkit counts its renders;
        a call between two renders gets the last one's."""
        app: Application[int] | None = getattr(self, "app", None)  # None while it is built
        render = -1 if app is None else app.render_counter
        frame = self._frame
        if app is not None and frame is not None and frame.render == render:
            return frame
        shown, geometry, (board, board_ansi) = self._divided()
        frame = self._frame = Frame(render, shown, geometry, board, board_ansi)
        return frame

    def _divided(self) -> tuple[Shown, Geometry, tuple[Sequence[Text], ANSI]]:
        """The game as it stands, the division of the screen for it now, and the board's
        drawing for that division (normal or compact) with its ANSI text."""
        shown = self._shown()
        with self._lock:
            normal, compact = (self._board, self._board_ansi), (self._compact, self._compact_ansi)
        geometry = self._geometry(shown, normal[0], compact[0])
        return shown, geometry, compact if geometry.compact else normal

    def _geometry(self, shown: Shown, board: Sequence[Text], compact: Sequence[Text]) -> Geometry:
        """The division of the screen for the current size: the normal layout if the whole
        `board` fits in it, else the `compact` one if it fits there (else the normal one,
        with the board cut). The side panel's height is that of `shown`, the view a drawing
        of it reads."""
        normal = self._layout(board, compact=False, shown=shown)
        if normal.fits or not compact:
            return normal
        smaller = self._layout(compact, compact=True, shown=shown)
        return smaller if smaller.fits else normal

    def _layout(self, board: Sequence[Text], *, compact: bool, shown: Shown) -> Geometry:
        columns, rows = self._size()
        gap = COMPACT_GAP if compact else GAP
        side_min = COMPACT_SIDE_MIN if compact else SIDE_MIN
        board_width = max((line.cell_len for line in board), default=0)
        board_height = drawn = len(board)
        side_width = max(columns - board_width - gap, side_min)
        side_fixed = len(self._panel_head(side_width, compact=compact, shown=shown))
        side_by_side = columns - board_width - gap >= side_min
        free = max(rows - 3, 1)  # the rule, the status line, the input line
        log_min = COMPACT_LOG_LINES_MIN if compact else LOG_LINES_MIN
        if side_by_side:
            top = min(max(board_height, side_fixed + MOVE_LINES_MIN + 1), max(free - log_min, 1))
            side_height = top
            board_height = min(board_height, top)
        else:
            side_width = columns
            board_height = min(board_height, max(free - log_min, 1))
            side_height = max(
                min(side_fixed + MOVE_LINES_MIN + 1, free - board_height - log_min), 0
            )
            top = board_height + side_height
        return Geometry(
            columns=columns,
            rows=rows,
            side_by_side=side_by_side,
            board_width=board_width,
            board_height=board_height,
            side_width=side_width,
            side_height=side_height,
            log_height=max(free - top, 1),
            gap=gap,
            compact=compact,
            fits=board_height >= drawn,
        )

    def _drawing(self) -> Sequence[Text]:
        """The board's lines in the current layout."""
        return self._framed().board

    def _board_text(self) -> ANSI:
        return self._framed().board_ansi

    def _ansi(self, lines: Sequence[Text]) -> ANSI:
        console = self._console
        with console.capture() as captured:
            for line in lines:
                console.print(line, soft_wrap=True, no_wrap=True, overflow="ignore")
        text = captured.get()
        return ANSI(text[:-1] if text.endswith("\n") else text)  # one line per line given

    def _wrapped(self, lines: Sequence[Text], width: int) -> list[Text]:
        out: list[Text] = []
        for line in lines:
            if not line.plain:
                out.append(line)
                continue
            out.extend(panel.word_wrapped(line, max(width, 10)))
        return out

    def _shown(self) -> Shown:
        """The game to draw, as it stands now: the loop's thread replaces the session's view
        while a drawing is made, so a drawing reads a copy (one view for the clocks and the
        moves, never the clocks of the one before the move)."""
        with self._lock:
            session, scene = self._session, self._scene
        return (copy.copy(session) if session is not None else None), scene

    def _panel_head(self, width: int, *, compact: bool = False, shown: Shown) -> list[Text]:
        """Status and legend: the side panel above the moves. Compact, the title leaves
        out the game's id (the first line of the game and the last say it) and the legend
        keeps each of its items whole on a row."""
        session, scene = shown
        if session is None or scene is None:
            return []
        # Whole words on each row: at 80 columns the panel beside War's board has about 40.
        status = panel.status_lines(session, self.theme, game_id=not compact)
        lines = self._wrapped(status, width)
        lines.append(Text(""))
        keys = panel.legend(scene, self.theme, pieces_too=True)
        if compact:
            keys = [
                Text(row, style=line.style)
                for line in keys
                for row in packed(LEGEND_ITEMS.split(line.plain), width)
            ]
        lines += self._wrapped(keys, width)
        return lines

    def _side_text(self) -> ANSI:
        frame = self._framed()
        shown, geometry = frame.shown, frame.geometry
        lines = self._panel_head(geometry.side_width, compact=geometry.compact, shown=shown)
        session = shown[0]
        room = geometry.side_height - len(lines) - 2
        if session is not None and room > 0:
            moves = [
                f"{number}. {as_played(text)}" for number, text in enumerate(session.view.moves, 1)
            ]
            rows = packed(moves, geometry.side_width)
            packed_rows = self._wrapped([Text(row) for row in rows], geometry.side_width)
            lines.append(Text(""))
            lines.append(Text("Moves", style=self.theme.style("bold")))
            none_yet = [Text("none yet", style=self.theme.style("dim"))]
            lines += packed_rows[-room:] if packed_rows else none_yet
        return self._ansi(lines[: max(geometry.side_height, 0)])

    def _log_text(self) -> ANSI:
        """The log's last lines, drawn again only when the log or the pane's size changed
        (the view renders twice a second for its clocks)."""
        geometry = self.geometry()
        with self._lock:
            key = (self._logged, geometry.columns, geometry.log_height)
            if self._log_drawn is not None and self._log_drawn[0] == key:
                return self._log_drawn[1]
            entries = self._log[-geometry.log_height * 2 :]
        lines = self._wrapped(entries, geometry.columns - 1)[-geometry.log_height :]
        # The newest line just above the input line, where the eye is.
        text = self._ansi([Text("")] * (geometry.log_height - len(lines)) + lines)
        self._log_drawn = (key, text)
        return text

    def _status_text(self) -> ANSI:
        theme = self.theme
        if self._busy or self._waiting:
            frame = SPINNER_UNICODE[int(time.monotonic() / REFRESH_SECONDS) % len(SPINNER_UNICODE)]
            what = self._busy or self._waiting
            if self._busy:
                self._busy_shown.set()
            text = Text(f"{frame} {what}", style=theme.style("cyan"))
            if not self._busy:
                text.append(f" {elapsed(time.monotonic() - self._waiting_since)}")
            return self._ansi([text])
        if not self.geometry().fits:
            cut = "the board does not fit: make the terminal taller, or use --plain"
            return self._ansi([Text(cut, style=theme.style("yellow"))])
        return self._ansi([Text(KEYS, style=theme.style("dim"))])

    def _prompt_text(self) -> ANSI:
        with self._lock:
            prompt = self._prompt
        return self._ansi([prompt])
