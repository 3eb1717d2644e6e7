"""Text around the board: players, clocks and losses, events, combat tallies, legends."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Sequence

from rich.cells import cell_len
from rich.text import Text

from cli_client import details, wording
from cli_client.render.board import SPENT, Scene, Symbols, cell_tags, draw_board
from cli_client.render.theme import MARKS, Theme, mark_of, on_colour, side_colour
from cli_client.session import GameSession, SeatInfo, side_name
from cli_client.terminal import countdown, elapsed
from wargame.v1 import board_pb2, game_pb2

PANEL_GAP = 4
# A word, or a command to paste (`wargame play --join CODE`) kept whole with what follows it.
_WORDS = re.compile(r"`[^`]*`\S*|\S+")


def word_wrapped(line: Text, width: int) -> list[Text]:
    """`line` in rows of at most `width` cells, broken only between words and never inside
    a command in backquotes (a row longer than the width holds one such word alone)."""
    rows: list[Text] = []
    for part in line.split("\n", allow_blank=True):
        plain = part.plain
        start = end = -1
        for found in _WORDS.finditer(plain):
            if start < 0:
                start, end = 0, found.end()  # the first row keeps the indent
            elif cell_len(plain[start : found.end()]) <= width:
                end = found.end()
            else:
                rows.append(part[start:end])
                start, end = found.start(), found.end()
        rows.append(part[start:end] if start >= 0 else part)
    return rows


def chip(board: board_pb2.BoardDescription, side: str, text: str, theme: Theme) -> Text:
    """A side's name on its colour (or plain)."""
    if not theme.colour:
        return Text(text)
    colour = next((side_colour(info.colour) for info in board.sides if info.id == side), "#808080")
    return Text(f" {text} ", style=f"bold {on_colour(colour)} on {colour}")


def piece_letters(scene: Scene, kinds: Sequence[str], side: str, theme: Theme) -> str:
    """Kinds of one side as they are drawn on the board."""
    symbols = Symbols(scene, theme)
    return " ".join(symbols.of(kind, side) for kind in kinds)


def player_lines(session: GameSession, theme: Theme, now: float | None = None) -> list[Text]:
    """One line per side: name, player, clock, losses; a marker on the side(s) to act; in a
    game of more than two players its alliance and whether it is awaited in the current
    phase, has acted in it, or is out; who has left (and when it loses as abandoned); the
    rating change once a rated game settled."""
    seats = session.seats()
    width = max((len(session.name(seat.side)) for seat in seats), default=0)
    names = max((len(seat.player) + (6 if seat.you else 0) for seat in seats), default=0)
    allied = max((len(seat.alliance) for seat in seats), default=0)
    lines = []
    for seat in seats:
        line = Text()
        label = session.name(seat.side).ljust(width)
        line.append_text(chip(session.board, seat.side, label, theme))
        who = seat.player + (" (you)" if seat.you else "")
        line.append("  " + who.ljust(names))
        clock = session.clock(seat.side, now)
        if clock is not None:
            left, running = clock
            low = session.low_time(seat.side, now) and not session.finished
            style = theme.style("bold red" if low else "bold" if running else "")
            line.append(f"  {elapsed(left)}", style=style)
            if low and not theme.colour:
                line.append(" low")  # the colour's meaning, in words
        acting = seat.side in session.to_act and not session.finished
        line.append(("  ◀" if theme.unicode else "  <") if acting else "   ")
        if session.multiplayer:
            line.append(f"  {seat.alliance}".ljust(allied + 2), style=theme.style("dim"))
            if seat.out:
                line.append("  out", style=theme.style("dim"))
            elif acting:
                line.append("  awaited", style=theme.style("bold"))
            elif seat.acted and not session.finished:
                line.append("  acted")
        if seat.away:
            left_for = session.abandon_left(seat.side, now)
            away = "away" if left_for is None else f"away: abandoned in {countdown(left_for)}"
            line.append(f"  {away}", style=theme.style("bold yellow"))
        change = rating_change(seat, "→" if theme.unicode else "->")
        if change:
            line.append(f"  {change}")
        lost = session.lost(seat.side)
        if lost:
            line.append("  lost: " + piece_letters(session.scene(), lost, seat.side, theme))
        lines.append(line)
    return lines


def rating_change(seat: SeatInfo, arrow: str) -> str:
    """A settled rated game's change of a seat's rating: "1500 → 1662 (+162)" ("" if none)."""
    if seat.rating_before is None or seat.rating_after is None:
        return ""
    before, after = round(seat.rating_before.rating), round(seat.rating_after.rating)
    return f"{before} {arrow} {after} ({after - before:+d})"


def rating_lines(session: GameSession, theme: Theme) -> list[Text]:
    """After a rated game, each player's rating before and after ("" while not settled)."""
    arrow = "→" if theme.unicode else "->"
    parts = []
    for seat in session.seats():
        change = rating_change(seat, arrow)
        if change:
            parts.append(f"{'you' if seat.you else seat.player} {change}")
    if not parts:
        return []
    game = session.view.game or session.state.game
    return [Text(f"Rating ({game}): " + "; ".join(parts), style=theme.style("bold"))]


def status_lines(
    session: GameSession, theme: Theme, now: float | None = None, *, game_id: bool = True
) -> list[Text]:
    """The title (with the game's id unless `game_id` is False), the players and the
    game-specific status."""
    title = Text(session.board.title or session.info.title, style=theme.style("bold"))
    if game_id:
        title.append(f"  game {session.game_id}", style=theme.style("dim"))
    lines = [title, *player_lines(session, theme, now)]
    names = {side: session.name(side) for side in session.sides}
    lines += [Text(line) for line in details.extra_lines(session.state, names)]
    lines += [Text(line) for line in session.extra]
    if session.finished:
        lines.append(outcome_line(session, theme))  # stays while the log goes on
    return lines


def piece_legend(scene: Scene, theme: Theme) -> list[str]:
    """Each kind in play with its symbols and notation letter, and how the sides differ."""
    board = scene.board
    symbols = Symbols(scene, theme)
    upper = symbols.upper
    lower = next((side.id for side in board.sides if side.id not in symbols.upper_sides), "")
    present = {piece.kind for piece in scene.pieces}
    kinds = [kind for kind in board.piece_kinds if kind.id in present] or list(board.piece_kinds)
    items = []
    for kind in kinds:
        glyphs = symbols.glyph(kind.id, upper) + symbols.glyph(kind.id, lower)
        letter = symbols.letter(kind.id, upper)
        items.append(f"{glyphs} {letter} {kind.name}" if glyphs else f"{letter} {kind.name}")
    names = {side.id: side_name(board, side.id) for side in board.sides}
    example = kinds[0].id if kinds else ""
    glyph_kind = next((kind.id for kind in kinds if symbols.glyph(kind.id, upper)), "")
    sides = []
    groups = {  # every side, by how it is written (with alliances: friend and foe)
        upper: [s.id for s in board.sides if s.id in symbols.upper_sides] or [upper],
        lower: [s.id for s in board.sides if s.id not in symbols.upper_sides],
    }
    for side, shape, case in ((upper, "outlined", "capitals"), (lower, "filled", "small letters")):
        if not side:
            continue
        glyph = f"{shape} {symbols.glyph(glyph_kind, side)}, " if glyph_kind else ""
        who = ", ".join(names.get(s, s) for s in groups[side])
        sides.append(f"{who}: {glyph}{case} {symbols.letter(example, side)}")
    return ["  ".join(items), " · ".join(sides) if theme.unicode else " - ".join(sides)]


def legend(scene: Scene, theme: Theme, pieces_too: bool = False) -> list[Text]:
    """What the symbols mean: pieces and sides (if asked), marks on the board, highlights."""
    board = scene.board
    parts: list[str] = piece_legend(scene, theme) if pieces_too else []
    marks: list[str] = []
    seen = set()
    tags_by_cell = {cell.name: cell_tags(cell, scene) for cell in board.cells}
    for tags in tags_by_cell.values():
        mark = mark_of(tags)
        if mark and mark not in seen:
            seen.add(mark)
    for tag, shown in MARKS.items():
        if tag in seen:
            marks.append(f"{shown.unicode if theme.unicode else shown.ascii} {shown.name}")
    kinds_of_features = {feature.kind for feature in board.features}
    if "river" in kinds_of_features:
        marks.append(("≈" if theme.unicode else "~") + " river")
    if "obstacle" in kinds_of_features:
        marks.append(("━" if theme.unicode else "=") + " obstacle")
    if scene.spent:
        marks.append(f"{SPENT} moved this turn")
    if not theme.colour and len(board.sides) >= 2:
        if not pieces_too:
            upper = scene.upper_side or board.sides[0].id
            lower = [side.id for side in board.sides if side.id != upper]
            marks.append(f"UPPER {upper}, lower {', '.join(lower)}")
        if scene.last:
            lattice = any(cell.shape == board_pb2.CELL_SHAPE_DIAMOND for cell in board.cells)
            marks.append("* last move" if lattice else "[ ] last move")
    if marks:
        parts.append("  ".join(marks))
    return [Text(part, style=theme.style("dim")) for part in parts]


def wrapped(lines: Iterable[Text], width: int) -> list[Text]:
    """One-style lines word-wrapped to `width` (each keeps its style)."""
    out: list[Text] = []
    for line in lines:
        rows = textwrap.wrap(line.plain, max(width, 10)) or [""]
        out += [Text(row, style=line.style) for row in rows]
    return out


def screen(
    session: GameSession,
    theme: Theme,
    width: int,
    now: float | None = None,
    scene: Scene | None = None,
) -> list[Text]:
    """The board with the status and legend beside it (below it on a narrow terminal)."""
    scene = scene or session.scene()
    board_lines = draw_board(scene, theme)
    status = status_lines(session, theme, now)
    keys = legend(scene, theme, pieces_too=True)
    board_width = max((line.cell_len for line in board_lines), default=0)
    side_width = max((line.cell_len for line in status), default=0)
    room = width - board_width - PANEL_GAP
    if side_width <= room:
        side = [*status, Text(""), *wrapped(keys, room)]
        out = []
        # Put the status next to the top of the board, after a blank line if there is room.
        start = 1 if len(board_lines) > len(side) + 1 else 0
        for index in range(max(len(board_lines), start + len(side))):
            row = board_lines[index].copy() if index < len(board_lines) else Text("")
            panel_index = index - start
            if 0 <= panel_index < len(side) and side[panel_index].plain:
                row.append(" " * (board_width - row.cell_len + PANEL_GAP))
                row.append_text(side[panel_index])
            out.append(row)
        return out
    return [*status, Text(""), *board_lines, *wrapped(keys, width)]


def event_lines(
    events: Iterable[game_pb2.Event],
    theme: Theme,
    *,
    board: board_pb2.BoardDescription | None = None,
    clean: Callable[[str], str] = str,
) -> list[Text]:
    """Events as sentences (passed through `clean`); combats as tallies."""
    lines: list[Text] = []
    skip = {game_pb2.EVENT_KIND_TURN_ENDED, game_pb2.EVENT_KIND_GAME_OVER}
    for event in events:
        if event.kind == game_pb2.EVENT_KIND_COMBAT_RESOLVED and event.combat.target:
            lines += combat_lines(event.combat, theme, board)
            continue
        if event.kind in skip or not event.text:
            continue
        lines.append(Text("  " + clean(event.text), style=theme.style("dim")))
    return lines


def kind_name(board: board_pb2.BoardDescription | None, kind_id: str) -> str:
    """A piece kind's display name ("Guards"), from the board's kinds."""
    for kind in board.piece_kinds if board is not None else ():
        if kind.id == kind_id:
            return kind.name
    return kind_id.replace("_", " ")


def _contribution(part: game_pb2.Contribution) -> str:
    note = f" ({part.note})" if part.note else ""
    return f"{part.kind.replace('_', ' ')} {part.cell} {part.value:+d}{note}"


def combat_head(
    tally: game_pb2.CombatTally, board: board_pb2.BoardDescription | None = None
) -> str:
    """Whom the combat is about: "Attack on Guards at h8"."""
    return f"Attack on {kind_name(board, tally.target_kind)} at {tally.cell}"


def combat_lines(
    tally: game_pb2.CombatTally, theme: Theme, board: board_pb2.BoardDescription | None = None
) -> list[Text]:
    """One combat's tally: attackers, defence, supports, bonuses, and the result."""
    head = Text(f"  {combat_head(tally, board)}: ")
    result = "eliminated" if tally.eliminated else "holds"
    style = theme.style("bold red" if tally.eliminated else "bold green")
    head.append(
        f"attack {tally.attack_total} vs defence {tally.defence_total} → {result}"
        if theme.unicode
        else f"attack {tally.attack_total} vs defence {tally.defence_total} -> {result}",
        style=style,
    )
    lines = [head]
    lines.append(
        Text(
            "    attack:  " + (", ".join(_contribution(part) for part in tally.attackers) or "none")
        )
    )
    defence = [f"own {tally.defence}"]
    defence += [f"{bonus.source} {bonus.value:+d}" for bonus in tally.bonuses]
    defence += [f"support {_contribution(part)}" for part in tally.supports]
    lines.append(Text("    defence: " + ", ".join(defence)))
    return lines


# The engine's "…; North wins", "…: North wins" or "North wins: …": a result sentence
# says who won once, in its verdict.
_RESTATED_WINNER = re.compile(r"^\S+ wins?: |[;:] \S+ wins?\.?$")


def outcome_line(session: GameSession, theme: Theme) -> Text:
    """The result, as one line."""
    outcome = session.outcome
    if outcome is None:
        return Text("The game is over.")
    reason = (
        game_pb2.OutcomeReason.Name(outcome.reason)
        .removeprefix("OUTCOME_REASON_")
        .replace("_", " ")
        .lower()
    )
    winners = list(outcome.winners) or ([outcome.winner] if outcome.winner else [])
    if outcome.reason == game_pb2.OUTCOME_REASON_ABORTED:
        verdict = "aborted"
    elif not winners:
        verdict = "draw"
    elif not session.your_side:
        names = " and ".join(session.name(side) for side in winners)
        verdict = f"{names} win" if len(winners) > 1 else f"{names} wins"
    else:
        verdict = "you win" if session.your_side in winners else "you lose"
    text = Text(f"Game over: {verdict}", style=theme.style("bold"))
    detail = wording.for_players(outcome.message, session.state.options, session.sides) or reason
    detail = _RESTATED_WINNER.sub("", detail)  # the verdict says it: "North wins — North wins"
    if detail:
        text.append(f" — {detail}")
    return text
